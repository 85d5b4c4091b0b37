#include "tools/run_script.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <sstream>
#include <tuple>

#include "compare/compare_func.h"
#include "core/formats/file_io.h"
#include "core/text.h"
#include "core/version.h"
#include "options/data_loader_args.h"
#include "runners/extension.h"
#include "runners/registry.h"

namespace parity::tools {

namespace {

namespace fs = std::filesystem;

// A C++ string literal for any text.
std::string cpp_literal(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\%03o", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + cpp_literal(items[i]);
  return out + "}";
}

std::string absolute(const std::string& path) { return fs::absolute(path).lexically_normal().string(); }

// A double as a literal that reads back to the same value.
std::string number(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  std::string text = s.str();
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

// Options of `run` the generator expresses; anything else given on the command line is refused
// rather than silently dropped. Runner options are handled generically (the runners' own groups).
const std::vector<std::string>& supported_dests() {
  static const std::vector<std::string> kDests = {
      "model", "compare_to", "onnx_outputs", "onnx_exclude_outputs", "mark_all_window_mb", "seed", "iterations",
      "val_range", "input_shapes", "load_inputs", "warm_up", "save_inputs", "save_outputs", "load_outputs",
      "validate", "fail_fast", "compare", "no_shape_check", "rtol", "atol", "check_error_stat", "error_quantile",
      "infinities_compare_equal", "index_tolerance", "l2_tolerance", "cosine_similarity_threshold", "psnr_tolerance",
      "snr_tolerance", "postprocess", "gen_script", "extension", "help",
      // logging: the generated program logs with parity's defaults
      "verbose", "quiet", "verbosity", "silent", "log_file", "no_color"};
  return kDests;
}

// The parser of every registered runner's option group: what the generated program builds too.
options::ArgParser runner_option_parser() {
  options::ArgParser parser("run_script", "runner options");
  for (const auto& info : runners::RunnerRegistry::instance().all()) info.options.add_missing_to(parser);
  return parser;
}

// A PATH option's value that names an existing file, made absolute: the program may run elsewhere.
std::string path_value(const options::OptionSpec& spec, const std::string& value) {
  std::error_code ec;
  return spec.metavar == "PATH" && fs::exists(value, ec) ? absolute(value) : value;
}

// The runner options given on the command line, as tokens the generated program parses again.
std::vector<std::string> runner_option_tokens(const options::Args& args, const options::ArgParser& parser) {
  std::vector<std::string> tokens;
  for (const auto& spec : parser.options()) {
    if (spec.flags.empty() || !args.has(spec.dest)) continue;
    const std::string& flag = spec.flags.back();
    switch (spec.arity) {
      case options::Arity::kFlag: tokens.push_back(flag); break;
      case options::Arity::kCount:
        for (int i = 0; i < args.count(spec.dest); ++i) tokens.push_back(flag);
        break;
      case options::Arity::kOne:
        if (auto v = args.get(spec.dest)) tokens.insert(tokens.end(), {flag, path_value(spec, *v)});
        break;
      case options::Arity::kOneOrMore:
      case options::Arity::kAny: {
        // One occurrence per value keeps values that look like options apart.
        for (const auto& v : args.list(spec.dest)) tokens.insert(tokens.end(), {flag, path_value(spec, v)});
        break;
      }
    }
  }
  return tokens;
}

void check_supported(const options::Args& args, const options::ArgParser& runner_parser) {
  for (const auto& dest : args.order()) {
    if (dest.rfind("runner:", 0) == 0) continue;
    if (std::find(supported_dests().begin(), supported_dests().end(), dest) != supported_dests().end()) continue;
    bool runner_option = false;
    for (const auto& spec : runner_parser.options()) runner_option |= spec.dest == dest;
    std::string flag = "--" + dest;
    std::replace(flag.begin(), flag.end(), '_', '-');
    PARITY_CHECK(runner_option, kInvalidArgument, "--gen-script cannot express ", flag,
                 " yet; leave it out or write that part of the program by hand");
  }
}

// Builds the program text.
class ProgramWriter {
 public:
  ProgramWriter(const options::Args& args, std::vector<std::string> runners)
      : args_(args), runners_(std::move(runners)), iterations_(options::IterationArgs({.iterations = 1, .warm_up = 0}).parse(args)) {}

  std::string write(const std::string& command_line, const std::string& runner_tokens) {
    const auto outputs = args_.list("onnx_outputs");
    const bool mark_all = outputs.size() == 2 && outputs[0] == "mark" && outputs[1] == "all";
    // Built through the registry unless --onnx-outputs rewrites the model (then RunnerFromOnnx).
    header(command_line, mark_all || (!runners_.empty() && outputs.empty()));
    line("bool run() {");
    extensions();
    line("  // Each runner's own options (e.g. --ort-threads), parsed by the runners' option groups.");
    line("  const runners::RunnerOptions runner_options = runners::parse_runner_options(" + runner_tokens + ");");
    if (auto model = args_.get("model")) line("  const std::string model = " + cpp_literal(absolute(*model)) + ";");
    line("");
    if (!runners_.empty()) feeds();
    if (mark_all)
      layerwise();
    else
      comparison(outputs);
    line("}");
    footer();
    return out_.str();
  }

 private:
  void line(const std::string& text) { out_ << text << "\n"; }

  void header(const std::string& command_line, bool with_make_runner) {
    line("// Generated by parity " + std::string(kParityVersion) + " from:");
    line("//   " + command_line);
    line("// It does what that command does, through parity's C++ API; build it with the CMake snippet");
    line("// written beside it. Exit code: 0 passed, 1 failed or user error, 2 internal error.");
    for (const char* h : {"cstdint", "cstdio", "memory", "optional", "string", "utility", "vector"}) line(std::string("#include <") + h + ">");
    line("");
    for (const char* h : {"comparator.h", "data_loader.h", "extension.h", "loaders.h", "results.h", "runners.h"})
      line(std::string("#include <parity/") + h + ">");
    line("");
    line("namespace {");
    line("");
    line("using namespace parity;");
    line("");
    if (with_make_runner) make_runner();
  }

  void make_runner() {
    line("// A registered runner for a model file, or the reason it is unavailable.");
    line("std::unique_ptr<runners::Runner> make_runner(const std::string& name, const std::string& model,");
    line("                                             const runners::RunnerOptions& options) {");
    line("  const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find(name);");
    line("  PARITY_CHECK(info, kUnavailable, \"no runner named '\", name, \"' is registered\");");
    line("  info->require_available(options);");
    line("  return info->create(runners::RunnerConfig{model, options});");
    line("}");
    line("");
  }

  void extensions() {
    bool any = false;
    for (const auto& record : runners::loaded_extensions()) {
      if (!record.status.is_ok()) continue;
      if (!any) line("  // The extensions the command line had loaded (their runners and kernels).");
      any = true;
      line("  runners::load_extension(" + cpp_literal(record.path) + ").throw_if_error();");
    }
  }

  // The data loader (or saved inputs) as DataLoaderArgs/IterationArgs read the command line.
  void feeds() {
    const options::DataLoaderOptions data = options::DataLoaderArgs().parse(args_);
    if (!data.load_inputs.empty()) {
      std::vector<std::string> paths;
      for (const auto& p : data.load_inputs) paths.push_back(absolute(p));
      line("  // Inputs saved earlier (Polygraphy inputs JSON or .npz).");
      line("  compare::FeedList feeds(compare::load_feeds(std::vector<std::string>" + quoted_list(paths) + "));");
      return;
    }
    line("  // Seeded random inputs: the same values `parity run` and Polygraphy generate.");
    line("  compare::DataLoader feeds;");
    if (data.seed) line("  feeds.seed(" + std::to_string(*data.seed) + ");");
    if (iterations_.iterations != 1) line("  feeds.iterations(" + std::to_string(iterations_.iterations) + ");");
    for (const auto& r : data.val_ranges)
      line("  feeds.val_range(" + cpp_literal(r.input) + ", {" + number(r.min) + ", " + number(r.max) + "});");
    for (const auto& shape : data.input_shapes) {
      std::string dims;
      for (int64_t d : shape.shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
      line("  feeds.input_shape(" + cpp_literal(shape.input) + ", Shape{" + dims + "});");
    }
  }

  // `var.field = PerOutput<type>(v)` / `var.field.set("name", v)` for each "[name:]value" of dest.
  template <typename Parse>
  void per_output(const std::string& indent, const std::string& var, const std::string& field,
                  const std::string& dest, const std::string& type, Parse literal) {
    for (const auto& item : args_.list(dest)) {
      auto [name, value] = split_name_value(item);
      const std::string v = literal(value);
      if (name.empty())
        line(indent + var + "." + field + " = compare::PerOutput<" + type + ">(" + v + ");");
      else
        line(indent + var + "." + field + ".set(" + cpp_literal(name) + ", " + v + ");");
    }
  }

  std::function<std::string(const std::string&)> double_literal(const std::string& flag) const {
    return [flag](const std::string& v) { return number(parse_double(v, flag)); };
  }

  // SimpleCompareOptions from --atol/--rtol/--check-error-stat/... ("[name:]value" items).
  void simple_options(const std::string& var, const std::string& indent) {
    line(indent + "compare::SimpleCompareOptions " + var + ";");
    per_output(indent, var, "atol", "atol", "double", double_literal("--atol"));
    per_output(indent, var, "rtol", "rtol", "double", double_literal("--rtol"));
    per_output(indent, var, "error_quantile", "error_quantile", "double", double_literal("--error-quantile"));
    per_output(indent, var, "check_error_stat", "check_error_stat", "compare::ErrorStat", [](const std::string& v) {
      PARITY_CHECK(compare::error_stat_from_name(v), kInvalidArgument, "invalid --check-error-stat '", v,
                   "'; valid: elemwise, max, mean, median, quantile, l0, l1, l2, linf, cosine");
      std::string e = v;
      e[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(e[0])));
      return "compare::ErrorStat::k" + e;
    });
    if (args_.flag("no_shape_check")) line(indent + var + ".check_shapes = false;");
    if (args_.flag("infinities_compare_equal")) line(indent + var + ".infinities_compare_equal = true;");
    if (args_.flag("fail_fast")) line(indent + var + ".fail_fast = true;");
  }

  // The options of --compare's function; returns the expression that makes the compare function.
  std::string compare_function(const std::string& indent) {
    const std::string which = args_.get_or("compare", "simple");
    const std::string var = "tolerances";
    if (which == "simple") {
      simple_options(var, indent);
      return "compare::compare_funcs::simple(" + var + ")";
    }
    const bool shapes = which != "indices";
    if (which == "indices") {
      line(indent + "compare::IndicesCompareOptions " + var + ";");
      per_output(indent, var, "index_tolerance", "index_tolerance", "int64_t", [](const std::string& v) {
        return std::to_string(parse_int(v, "--index-tolerance"));
      });
    } else if (which == "distance_metrics") {
      line(indent + "compare::DistanceCompareOptions " + var + ";");
      per_output(indent, var, "l2_tolerance", "l2_tolerance", "double", double_literal("--l2-tolerance"));
      per_output(indent, var, "cosine_similarity_threshold", "cosine_similarity_threshold", "double",
                 double_literal("--cosine-similarity-threshold"));
    } else {
      line(indent + "compare::QualityCompareOptions " + var + ";");
      per_output(indent, var, "psnr_tolerance", "psnr_tolerance", "double", double_literal("--psnr-tolerance"));
      per_output(indent, var, "snr_tolerance", "snr_tolerance", "double", double_literal("--snr-tolerance"));
    }
    if (shapes && args_.flag("no_shape_check")) line(indent + var + ".check_shapes = false;");
    if (args_.flag("fail_fast")) line(indent + var + ".fail_fast = true;");
    return "compare::compare_funcs::" + which + "(" + var + ")";
  }

  // --postprocess [name:]top-K[,axis=A]: outputs replaced by the indices of their K largest values.
  void postprocess() {
    if (!args_.has("postprocess")) return;
    line("  compare::PerOutput<std::optional<compare::TopK>> top_k_settings(std::nullopt);");
    for (const auto& item : args_.list("postprocess")) {
      auto [name, value] = split_name_value(item);
      PARITY_CHECK(value.rfind("top-", 0) == 0, kInvalidArgument, "invalid post-processing function '", value,
                   "'; valid: top-<K>[,axis=<axis>]");
      const std::string rest = value.substr(4);
      const size_t comma = rest.find(',');
      const int64_t k = parse_int(rest.substr(0, comma), "--postprocess top-K");
      int64_t axis = -1;
      if (comma != std::string::npos) {
        const std::string a = rest.substr(comma + 1);
        PARITY_CHECK(a.rfind("axis=", 0) == 0, kInvalidArgument, "--postprocess '", item,
                     "': expected ,axis=<axis> after top-K");
        axis = parse_int(a.substr(5), "--postprocess axis");
      }
      const std::string topk = "compare::TopK{" + std::to_string(k) + ", " + std::to_string(axis) + "}";
      if (name.empty())
        line("  top_k_settings = compare::PerOutput<std::optional<compare::TopK>>(" + topk + ");");
      else
        line("  top_k_settings.set(" + cpp_literal(name) + ", " + topk + ");");
    }
    line("  compare::Comparator::postprocess(results, compare::top_k(top_k_settings));");
  }

  void comparison(const std::vector<std::string>& outputs) {
    const auto exclude = args_.list("onnx_exclude_outputs");
    PARITY_CHECK(exclude.empty() || !outputs.empty(), kInvalidArgument,
                 "--gen-script needs --onnx-outputs with --onnx-exclude-outputs (name the outputs to keep)");
    if (!runners_.empty()) {
      line("  // The runners, in command-line order.");
      line("  std::vector<std::unique_ptr<runners::Runner>> owned;");
      for (const auto& name : runners_) {
        if (outputs.empty()) {
          line("  owned.push_back(make_runner(" + cpp_literal(name) + ", model, runner_options));");
        } else {
          // As the command does: the model with other outputs, written to a temporary file on activate().
          line("  owned.push_back(compare::loaders::RunnerFromOnnx(");
          line("      " + cpp_literal(name) + ", compare::loaders::ModifyOutputs(compare::loaders::OnnxFromPath(model), " +
               "std::vector<std::string>" + quoted_list(outputs) + ", std::vector<std::string>" + quoted_list(exclude) +
               "),");
          line("      " + cpp_literal(fs::path(absolute(*args_.get("model"))).parent_path().string()) + ", runner_options));");
        }
      }
      line("  std::vector<runners::Runner*> runner_list;");
      line("  for (auto& r : owned) runner_list.push_back(r.get());");
      line("  compare::RunOptions run_options;");
      if (iterations_.warm_up > 0) line("  run_options.warm_up = " + std::to_string(iterations_.warm_up) + ";");
      line("  std::vector<TensorMap> used_feeds;");
      line("  run_options.used_feeds = &used_feeds;");
      line("  RunResults results = compare::Comparator::run(runner_list, feeds, run_options);");
      if (auto p = args_.get("save_inputs")) line("  compare::save_feeds(" + cpp_literal(absolute(*p)) + ", used_feeds);");
    } else {
      line("  RunResults results;");
    }
    for (const auto& p : args_.list("load_outputs")) {
      line("  // Results saved earlier (e.g. by Polygraphy on another machine).");
      line("  for (auto& run : read_run_results(" + cpp_literal(absolute(p)) + ").runs) results.runs.push_back(std::move(run));");
    }
    if (auto p = args_.get("save_outputs")) line("  write_run_results(" + cpp_literal(absolute(*p)) + ", results);");
    named_settings_exist();
    line("");
    line("  bool passed = true;");
    const std::string fail_fast = args_.flag("fail_fast") ? "true" : "false";
    if (args_.flag("validate"))
      line("  passed &= compare::Comparator::validate(results, /*check_inf=*/true, /*check_nan=*/true, " + fail_fast + ");");
    postprocess();
    line("  if (results.size() >= 2) {");
    const std::string compare_func = compare_function("    ");
    if (args_.get_or("compare_to", "next") == "first") {
      line("    std::vector<std::pair<size_t, size_t>> comparisons;  // every run against the first");
      line("    for (size_t i = 1; i < results.size(); ++i) comparisons.emplace_back(0, i);");
    } else {
      line("    const auto comparisons = compare::Comparator::default_comparisons(results);  // each with the next");
    }
    line("    passed &= static_cast<bool>(compare::Comparator::compare_accuracy(");
    line("        results, " + compare_func + ", comparisons, " + fail_fast + "));");
    line("  }");
    line("  return passed;");
  }

  // Per-output settings must name outputs of some run, as the command checks.
  void named_settings_exist() {
    std::vector<std::string> names;
    for (const char* dest : {"atol", "rtol", "check_error_stat", "error_quantile", "index_tolerance", "l2_tolerance",
                             "cosine_similarity_threshold", "psnr_tolerance", "snr_tolerance", "postprocess"})
      for (const auto& item : args_.list(dest)) {
        auto [name, value] = split_name_value(item);
        if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      }
    if (names.empty()) return;
    line("  for (const std::string& name : std::vector<std::string>" + quoted_list(names) + ") {");
    line("    bool found = false;  // tolerances naming no output are a mistake, not a pass");
    line("    for (const auto& run : results.runs)");
    line("      for (const auto& iteration : run.second) found = found || iteration.outputs.contains(name);");
    line("    PARITY_CHECK(found, kInvalidArgument, \"a tolerance names output '\", name, \"', which no runner produced\");");
    line("  }");
  }

  void layerwise() {
    PARITY_CHECK(std::count(runners_.begin(), runners_.end(), "ref") == 1 && runners_.size() <= 2, kInvalidArgument,
                 "--onnx-outputs mark all compares layer by layer with --ref and at most one other runner");
    for (const char* dest : {"load_outputs", "save_outputs", "postprocess"})
      PARITY_CHECK(!args_.has(dest), kInvalidArgument, "--onnx-outputs mark all keeps statistics, not outputs: "
                   "it cannot be combined with --load-outputs, --save-outputs or --postprocess");
    std::string peer;
    for (const auto& n : runners_)
      if (n != "ref") peer = n;
    line("  // --onnx-outputs mark all: every intermediate tensor of ref against " +
         (peer.empty() ? std::string("nothing (statistics only)") : peer) + ", layer by layer.");
    line("  compare::LayerwiseOptions layerwise;");
    simple_options("tolerances", "  ");
    line("  layerwise.compare = tolerances;");
    line(std::string("  layerwise.reference_first = ") + (!runners_.empty() && runners_.front() == "ref" ? "true" : "false") + ";");
    for (const auto& name : args_.list("onnx_exclude_outputs")) line("  layerwise.exclude.insert(" + cpp_literal(name) + ");");
    if (auto mb = args_.get("mark_all_window_mb"))
      line("  layerwise.window_bytes = int64_t{" + std::to_string(parse_int(*mb, "--mark-all-window-mb")) +
           "} << 20;");
    line("  {  // the data loader needs the model's inputs");
    line("    auto probe = make_runner(\"ref\", model, runner_options);");
    line("    runners::ActiveRunner active(*probe);");
    line("    feeds.set_input_metadata(probe->input_metadata());");
    line("  }");
    line("  std::vector<TensorMap> used_feeds;");
    line("  bool passed = true;");
    line("  for (size_t i = 0;; ++i) {");
    line("    std::optional<TensorMap> feed = feeds.feed(i);");
    line("    if (!feed) break;");
    line("    passed &= compare::compare_layerwise(model, " + cpp_literal(peer) + ", runner_options, *feed, layerwise).passed();");
    line("    used_feeds.push_back(std::move(*feed));");
    if (args_.flag("fail_fast")) line("    if (!passed) break;");
    line("  }");
    if (auto p = args_.get("save_inputs")) line("  compare::save_feeds(" + cpp_literal(absolute(*p)) + ", used_feeds);");
    line("  return passed;");
  }

  void footer() {
    line("");
    line("}  // namespace");
    line("");
    line("int main() {");
    line("  try {");
    line("    const bool passed = run();");
    line("    std::printf(\"%s\\n\", passed ? \"PASSED\" : \"FAILED\");");
    line("    return passed ? 0 : 1;");
    line("  } catch (const parity::Error& e) {");
    line("    std::fprintf(stderr, \"[E] %s\\n\", e.what());");
    line("    return e.is_internal() ? 2 : 1;");
    line("  }");
    line("}");
  }

  const options::Args& args_;
  std::vector<std::string> runners_;
  options::IterationOptions iterations_;
  std::ostringstream out_;
};

}  // namespace

RunScript generate_run_script(const options::Args& args, const std::vector<std::string>& runner_names,
                              const std::string& command_line, const std::string& target) {
  const options::ArgParser runner_parser = runner_option_parser();
  check_supported(args, runner_parser);
  const auto tokens = runner_option_tokens(args, runner_parser);
  RunScript script;
  script.program = ProgramWriter(args, runner_names).write(command_line, "std::vector<std::string>" + quoted_list(tokens));
  script.cmake = program_cmake_snippet(target, "parity run --gen-script");
  return script;
}

std::string program_cmake_snippet(const std::string& target, const std::string& generator) {
  std::ostringstream cmake;
  cmake << "# Builds " << target << ".cpp, generated by `" << generator << "`. Use it on its own:\n"
        << "#   cmake -S <this folder> ... after copying it to CMakeLists.txt, or include() it from a project\n"
        << "#   that already has a project() line. Needs an installed parity (CMAKE_PREFIX_PATH).\n"
        << "if(NOT CMAKE_PROJECT_NAME)\n"
        << "  cmake_minimum_required(VERSION 3.25)\n"
        << "  project(" << target << " LANGUAGES CXX)\n"
        << "endif()\n"
        << "if(NOT TARGET parity::parity)\n"
        << "  find_package(parity REQUIRED)\n"
        << "endif()\n"
        << "add_executable(" << target << " ${CMAKE_CURRENT_LIST_DIR}/" << target << ".cpp)\n"
        << "target_compile_features(" << target << " PRIVATE cxx_std_20)\n"
        << "target_link_libraries(" << target << " PRIVATE parity::parity)\n";
  return cmake.str();
}

std::string write_run_script(const std::string& path, const RunScript& script) {
  const fs::path program(path);
  fs::path snippet = program;
  snippet.replace_extension(".cmake");
  for (const auto& [file, text] : {std::pair{program, &script.program}, std::pair{snippet, &script.cmake}}) {
    formats::write_binary_file(file.string(), *text);
  }
  return snippet.string();
}

std::string write_run_script_for(const std::string& path, const options::Args& args,
                                 const std::vector<std::string>& runner_names, std::string command_line) {
  std::string target = fs::path(path).stem().string();
  for (char& c : target)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  if (target.empty() || std::isdigit(static_cast<unsigned char>(target[0]))) target = "run_" + target;
  for (const std::string& spelling : {" --gen-script " + path, " --gen-script=" + path, " --gen " + path, " --gen=" + path})
    if (auto at = command_line.find(spelling); at != std::string::npos) command_line.erase(at, spelling.size());
  return write_run_script(path, generate_run_script(args, runner_names, command_line, target));
}

}  // namespace parity::tools
