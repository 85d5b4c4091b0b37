#include "compare/compare_args.h"

#include <algorithm>
#include <iterator>

#include "core/text.h"
#include "options/refused_option.h"

namespace parity::compare {

namespace {

using options::Arity;
using options::Given;

// The "[name:]value" options in the order CompareSettings::named_outputs lists them.
constexpr const char* kPerOutputFlags[] = {
    "--atol",          "--rtol",         "--check-error-stat",
    "--error-quantile", "--index-tolerance", "--l2-tolerance",
    "--cosine-similarity-threshold", "--psnr-tolerance", "--snr-tolerance",
};

// Binds a "[name:]value" option to a PerOutput field ("" naming the default for every output) and
// records the output names its items name.
template <typename V, typename Field, typename Parse>
options::Group<CompareSettings>::Bind per_output(Field field, V fallback, Parse parse) {
  return [field, fallback, parse](CompareSettings& s, const Given& given) {
    PerOutput<V> out(fallback);
    std::vector<std::string> named;
    for (const auto& item : given.values) {
      auto [name, value] = split_name_value(item);
      out.set(name, parse(value, given.flag));
      if (!name.empty()) named.push_back(name);
    }
    field(s) = std::move(out);
    s.named_outputs.emplace_back(given.flag, std::move(named));
  };
}

double parse_tolerance(const std::string& text, const std::string& flag) { return parse_double(text, flag); }

double parse_scalar_tolerance(const std::string& text, const std::string& flag) {
  const double value = parse_double(text, flag);
  PARITY_CHECK(value >= 0, kInvalidArgument, flag, " must not be negative, got ", text);
  return value;
}

int64_t parse_index_tolerance(const std::string& text, const std::string& flag) { return parse_int(text, flag); }

ErrorStat parse_error_stat(const std::string& text, const std::string&) {
  auto stat = error_stat_from_name(text);
  PARITY_CHECK(stat, kInvalidArgument, "invalid --check-error-stat '", text,
               "'; valid: elemwise, max, mean, median, quantile, l0, l1, l2, linf, cosine");
  return *stat;
}

size_t per_output_rank(const std::string& flag) {
  size_t i = 0;
  while (i < std::size(kPerOutputFlags) && flag != kPerOutputFlags[i]) ++i;
  return i;
}

}  // namespace

CompareFunc CompareSettings::compare_func() const {
  if (func == "indices") return compare_funcs::indices(indices);
  if (func == "distance_metrics") return compare_funcs::distance_metrics(distance);
  if (func == "quality_metrics") return compare_funcs::quality_metrics(quality);
  return compare_funcs::simple(simple);
}

ComparatorCompareArgs::ComparatorCompareArgs() {
  using S = CompareSettings;
  section("Comparator");
  add({.flags = {"--validate"},
       .help = "Check outputs for NaNs and Infs (with `mark all`: every intermediate tensor, naming the first "
               "node that produces one)",
       .arity = Arity::kFlag},
      options::field(&S::validate));
  add({.flags = {"--check-fp16-range"},
       .help = "With `mark all`: fail when an intermediate tensor of the ref run exceeds float16's range "
               "(|x| > 65504) and list tensors that underflow it (the layers a float16 plan breaks)",
       .arity = Arity::kFlag},
      options::field(&S::check_fp16_range));
  add({.flags = {"--fail-fast"}, .help = "Stop comparing after the first failure", .arity = Arity::kFlag},
      options::field(&S::fail_fast));
  declare(options::refused_option(
      "--compare-func-script", "--compare-func-script needs Python, which parity does not run; closest in parity: "
                               "--compare-func simple|indices|distance_metrics|quality_metrics"));
  add({.flags = {"--compare", "--compare-func"}, .dest = "compare",
       .help = "Comparison function (default simple)", .metavar = "FUNC",
       .choices = {"simple", "indices", "distance_metrics", "quality_metrics"}, .default_value = "simple"},
      options::field(&S::func));

  section("Comparison Function: simple");
  add({.flags = {"--no-shape-check"}, .help = "Compare outputs of different shapes with equal sizes",
       .arity = Arity::kFlag},
      [](S& s, const Given& given) { s.simple.check_shapes = !given.given(); });
  add({.flags = {"--rtol", "--rel-tol"}, .dest = "rtol", .help = "Relative tolerance, [name:]value (default 1e-5)",
       .metavar = "TOL", .arity = Arity::kOneOrMore},
      per_output<double>([](S& s) -> auto& { return s.simple.rtol; }, 1e-5, parse_tolerance));
  add({.flags = {"--atol", "--abs-tol"}, .dest = "atol", .help = "Absolute tolerance, [name:]value (default 1e-5)",
       .metavar = "TOL", .arity = Arity::kOneOrMore},
      per_output<double>([](S& s) -> auto& { return s.simple.atol; }, 1e-5, parse_tolerance));
  add({.flags = {"--check-error-stat"},
       .help = "Error statistic to check, [name:]stat: elemwise (default), max, mean, median, quantile "
               "(Polygraphy's: fail when the stat of |d| > atol AND of |d|/|ref| > rtol), or trtexec's "
               "norms of d = out - ref: l1, l2, linf (fail when norm(d) > atol AND norm(d)/norm(ref) > "
               "rtol), cosine (fail when 1 - cos(out, ref) > atol), l0 (fail when the fraction of "
               "elements with |d| > atol + rtol*|ref| exceeds 1 - --error-quantile)",
       .metavar = "STAT", .arity = Arity::kOneOrMore},
      per_output<ErrorStat>([](S& s) -> auto& { return s.simple.check_error_stat; }, ErrorStat::kElemwise,
                            parse_error_stat));
  add({.flags = {"--error-quantile"}, .help = "Quantile for the quantile stat, [name:]q (default 0.99)",
       .metavar = "Q", .arity = Arity::kOneOrMore},
      per_output<double>([](S& s) -> auto& { return s.simple.error_quantile; }, 0.99, parse_tolerance));
  add({.flags = {"--infinities-compare-equal"}, .help = "Matching +-inf values have zero difference",
       .arity = Arity::kFlag},
      [](S& s, const Given& given) { s.simple.infinities_compare_equal = given.given(); });

  section("Comparison Function: indices");
  add({.flags = {"--index-tolerance"}, .help = "Index tolerance, [name:]N (default 0)", .metavar = "N",
       .arity = Arity::kOneOrMore},
      per_output<int64_t>([](S& s) -> auto& { return s.indices.index_tolerance; }, 0, parse_index_tolerance));

  section("Comparison Function: distance_metrics / quality_metrics");
  add({.flags = {"--l2-tolerance"}, .help = "Maximum L2 norm of the difference, [name:]value (default 1e-5)",
       .metavar = "TOL", .arity = Arity::kOneOrMore},
      per_output<double>([](S& s) -> auto& { return s.distance.l2_tolerance; }, 1e-5, parse_tolerance));
  add({.flags = {"--cosine-similarity-threshold"},
       .help = "Minimum cosine similarity, [name:]value (default 0.997)", .metavar = "MIN",
       .arity = Arity::kOneOrMore},
      per_output<double>([](S& s) -> auto& { return s.distance.cosine_similarity_threshold; }, 0.997, parse_tolerance));
  add({.flags = {"--psnr-tolerance"}, .help = "Minimum PSNR in dB, [name:]value (default 30)", .metavar = "DB",
       .arity = Arity::kOneOrMore},
      per_output<double>([](S& s) -> auto& { return s.quality.psnr_tolerance; }, 30.0, parse_tolerance));
  add({.flags = {"--snr-tolerance"}, .help = "Minimum SNR in dB, [name:]value (default 20)", .metavar = "DB",
       .arity = Arity::kOneOrMore},
      per_output<double>([](S& s) -> auto& { return s.quality.snr_tolerance; }, 20.0, parse_tolerance));

  // The settings every comparison function shares, given once.
  check([](S& s) {
    s.distance.check_shapes = s.quality.check_shapes = s.simple.check_shapes;
    s.simple.fail_fast = s.indices.fail_fast = s.distance.fail_fast = s.quality.fail_fast = s.fail_fast;
    std::stable_sort(s.named_outputs.begin(), s.named_outputs.end(), [](const auto& a, const auto& b) {
      return per_output_rank(a.first) < per_output_rank(b.first);
    });
  });
}

ToleranceArgs::ToleranceArgs(const std::string& applies_to, const std::string& atol_default,
                             const std::string& rtol_default) {
  const auto help = [&](const char* kind, const std::string& fallback) {
    return std::string(kind) + " tolerance " + applies_to + " (default: " + fallback + ")";
  };
  add({.flags = {"--atol", "--abs-tol"}, .dest = "atol", .help = help("Absolute", atol_default), .metavar = "TOL"},
      options::convert(&Tolerances::atol, parse_scalar_tolerance));
  add({.flags = {"--rtol", "--rel-tol"}, .dest = "rtol", .help = help("Relative", rtol_default), .metavar = "TOL"},
      options::convert(&Tolerances::rtol, parse_scalar_tolerance));
}

}  // namespace parity::compare
