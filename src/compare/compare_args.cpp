#include "compare/compare_args.h"

#include "core/text.h"
#include "options/refused_option.h"

namespace parity::compare {

namespace {

using options::Arity;

// Every "[name:]value" option of the group: its dest and flag.
struct PerOutputOption {
  const char* dest;
  const char* flag;
};
constexpr PerOutputOption kPerOutputOptions[] = {
    {"atol", "--atol"},
    {"rtol", "--rtol"},
    {"check_error_stat", "--check-error-stat"},
    {"error_quantile", "--error-quantile"},
    {"index_tolerance", "--index-tolerance"},
    {"l2_tolerance", "--l2-tolerance"},
    {"cosine_similarity_threshold", "--cosine-similarity-threshold"},
    {"psnr_tolerance", "--psnr-tolerance"},
    {"snr_tolerance", "--snr-tolerance"},
};

// "[name:]value" items of one option, "" naming the default for every output.
template <typename T, typename Parse>
PerOutput<T> per_output(const options::Args& args, const std::string& dest, T fallback, Parse parse) {
  PerOutput<T> out(fallback);
  for (const auto& item : args.list(dest)) {
    auto [name, value] = split_name_value(item);
    out.set(name, parse(value));
  }
  return out;
}

PerOutput<double> per_output_double(const options::Args& args, const std::string& dest, const std::string& flag,
                                    double fallback) {
  return per_output<double>(args, dest, fallback, [&](const std::string& v) { return parse_double(v, flag); });
}

ErrorStat parse_error_stat(const std::string& text) {
  auto stat = error_stat_from_name(text);
  PARITY_CHECK(stat, kInvalidArgument, "invalid --check-error-stat '", text,
               "'; valid: elemwise, max, mean, median, quantile, l0, l1, l2, linf, cosine");
  return *stat;
}

}  // namespace

CompareFunc CompareSettings::compare_func() const {
  if (func == "indices") return compare_funcs::indices(indices);
  if (func == "distance_metrics") return compare_funcs::distance_metrics(distance);
  if (func == "quality_metrics") return compare_funcs::quality_metrics(quality);
  return compare_funcs::simple(simple);
}

void ComparatorCompareArgs::add_to(options::ArgParser& parser) const {
  parser.group("Comparator");
  parser.add({.flags = {"--validate"},
              .help = "Check outputs for NaNs and Infs (with `mark all`: every intermediate tensor, naming the first "
                      "node that produces one)",
              .arity = Arity::kFlag});
  parser.add({.flags = {"--check-fp16-range"},
              .help = "With `mark all`: fail when an intermediate tensor of the ref run exceeds float16's range "
                      "(|x| > 65504) and list tensors that underflow it (the layers a float16 plan breaks)",
              .arity = Arity::kFlag});
  parser.add({.flags = {"--fail-fast"}, .help = "Stop comparing after the first failure", .arity = Arity::kFlag});
  parser.add(options::refused_option(
      "--compare-func-script", "--compare-func-script needs Python, which parity does not run; closest in parity: "
                               "--compare-func simple|indices|distance_metrics|quality_metrics"));
  parser.add({.flags = {"--compare", "--compare-func"}, .dest = "compare",
              .help = "Comparison function (default simple)", .metavar = "FUNC",
              .choices = {"simple", "indices", "distance_metrics", "quality_metrics"}, .default_value = "simple"});

  parser.group("Comparison Function: simple");
  parser.add({.flags = {"--no-shape-check"}, .help = "Compare outputs of different shapes with equal sizes",
              .arity = Arity::kFlag});
  parser.add({.flags = {"--rtol", "--rel-tol"}, .dest = "rtol", .help = "Relative tolerance, [name:]value (default 1e-5)",
              .metavar = "TOL", .arity = Arity::kOneOrMore});
  parser.add({.flags = {"--atol", "--abs-tol"}, .dest = "atol", .help = "Absolute tolerance, [name:]value (default 1e-5)",
              .metavar = "TOL", .arity = Arity::kOneOrMore});
  parser.add({.flags = {"--check-error-stat"},
              .help = "Error statistic to check, [name:]stat: elemwise (default), max, mean, median, quantile "
                      "(Polygraphy's: fail when the stat of |d| > atol AND of |d|/|ref| > rtol), or trtexec's "
                      "norms of d = out - ref: l1, l2, linf (fail when norm(d) > atol AND norm(d)/norm(ref) > "
                      "rtol), cosine (fail when 1 - cos(out, ref) > atol), l0 (fail when the fraction of "
                      "elements with |d| > atol + rtol*|ref| exceeds 1 - --error-quantile)",
              .metavar = "STAT", .arity = Arity::kOneOrMore});
  parser.add({.flags = {"--error-quantile"}, .help = "Quantile for the quantile stat, [name:]q (default 0.99)",
              .metavar = "Q", .arity = Arity::kOneOrMore});
  parser.add({.flags = {"--infinities-compare-equal"}, .help = "Matching +-inf values have zero difference",
              .arity = Arity::kFlag});

  parser.group("Comparison Function: indices");
  parser.add({.flags = {"--index-tolerance"}, .help = "Index tolerance, [name:]N (default 0)", .metavar = "N",
              .arity = Arity::kOneOrMore});

  parser.group("Comparison Function: distance_metrics / quality_metrics");
  parser.add({.flags = {"--l2-tolerance"}, .help = "Maximum L2 norm of the difference, [name:]value (default 1e-5)",
              .metavar = "TOL", .arity = Arity::kOneOrMore});
  parser.add({.flags = {"--cosine-similarity-threshold"}, .help = "Minimum cosine similarity, [name:]value (default 0.997)",
              .metavar = "MIN", .arity = Arity::kOneOrMore});
  parser.add({.flags = {"--psnr-tolerance"}, .help = "Minimum PSNR in dB, [name:]value (default 30)", .metavar = "DB",
              .arity = Arity::kOneOrMore});
  parser.add({.flags = {"--snr-tolerance"}, .help = "Minimum SNR in dB, [name:]value (default 20)", .metavar = "DB",
              .arity = Arity::kOneOrMore});
}

CompareSettings ComparatorCompareArgs::parse(const options::Args& args) const {
  CompareSettings s;
  s.func = args.get_or("compare", "simple");
  s.validate = args.flag("validate");
  s.check_fp16_range = args.flag("check_fp16_range");
  s.fail_fast = args.flag("fail_fast");
  const bool check_shapes = !args.flag("no_shape_check");

  s.simple.check_shapes = check_shapes;
  s.simple.atol = per_output_double(args, "atol", "--atol", 1e-5);
  s.simple.rtol = per_output_double(args, "rtol", "--rtol", 1e-5);
  s.simple.error_quantile = per_output_double(args, "error_quantile", "--error-quantile", 0.99);
  s.simple.check_error_stat = per_output<ErrorStat>(args, "check_error_stat", ErrorStat::kElemwise, parse_error_stat);
  s.simple.infinities_compare_equal = args.flag("infinities_compare_equal");
  s.simple.fail_fast = s.fail_fast;

  s.indices.index_tolerance = per_output<int64_t>(args, "index_tolerance", 0, [](const std::string& v) {
    return parse_int(v, "--index-tolerance");
  });
  s.indices.fail_fast = s.fail_fast;

  s.distance.check_shapes = check_shapes;
  s.distance.l2_tolerance = per_output_double(args, "l2_tolerance", "--l2-tolerance", 1e-5);
  s.distance.cosine_similarity_threshold =
      per_output_double(args, "cosine_similarity_threshold", "--cosine-similarity-threshold", 0.997);
  s.distance.fail_fast = s.fail_fast;

  s.quality.check_shapes = check_shapes;
  s.quality.psnr_tolerance = per_output_double(args, "psnr_tolerance", "--psnr-tolerance", 30.0);
  s.quality.snr_tolerance = per_output_double(args, "snr_tolerance", "--snr-tolerance", 20.0);
  s.quality.fail_fast = s.fail_fast;

  for (const auto& option : kPerOutputOptions) {
    std::vector<std::string> named;
    for (const auto& item : args.list(option.dest))
      if (auto name = split_name_value(item).first; !name.empty()) named.push_back(name);
    s.named_outputs.emplace_back(option.flag, std::move(named));
  }
  return s;
}

}  // namespace parity::compare
