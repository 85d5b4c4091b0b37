#include "cli/commands/model_edit_common.h"

#include <map>
#include <optional>

#include "cli/command.h"
#include "core/formats/file_io.h"
#include "core/logger.h"
#include "core/text.h"
#include "model/save_args.h"
#include "runtime/plan/plan_file.h"
#include "tools/surgeon/model_output.h"
#include "tools/verify.h"

namespace parity::cli::model_edit {

namespace fs = std::filesystem;

void add_model_argument(options::ArgParser& parser) {
  parser.add({.flags = {}, .dest = "model", .help = "Path to the ONNX model", .metavar = "MODEL", .required = true});
  parser.add({.flags = {"--external-data-dir", "--load-external-data", "--ext"}, .dest = "external_data_dir",
              .help = "Folder holding the model's external data (default: the model's folder)", .metavar = "DIR"});
  add_ignore_external_data_option(parser);
}

void add_model_type_option(options::ArgParser& parser) {
  parser.add({.flags = {"--model-type"},
              .help = "The model's type: onnx or engine (a parity plan); by default the file's own header decides. "
                      "TensorFlow (frozen, keras, ckpt) and TensorRT-only (uff, caffe, trt-network-script) types are "
                      "refused",
              .metavar = "TYPE",
              .choices = {"frozen", "keras", "ckpt", "onnx", "engine", "uff", "trt-network-script", "caffe"}});
}

void check_model_type(const options::Args& args, const std::string& path) {
  const std::optional<std::string> type = args.get("model_type");
  if (!type) return;
  if (*type == "frozen" || *type == "keras" || *type == "ckpt")
    fail(ErrorCode::kInvalidArgument, "--model-type ", *type,
         " needs TensorFlow, which parity does not have; closest in parity: export the model to ONNX (tf2onnx) and "
         "give parity the .onnx file");
  if (*type == "uff" || *type == "caffe" || *type == "trt-network-script")
    fail(ErrorCode::kInvalidArgument, "--model-type ", *type,
         " needs TensorRT, which parity does not have; closest in parity: ",
         *type == "trt-network-script" ? "`parity template onnx-graph` (a C++ program that builds or edits an ONNX model)"
                                       : "an ONNX export of the model");
  const bool plan = runtime::plan::is_plan_file(path);
  PARITY_CHECK(*type != "engine" || plan, kInvalidArgument, "--model-type engine: '", path,
               "' is not a parity plan (build one with `parity convert MODEL.onnx -o X.plan`)");
  PARITY_CHECK(*type != "onnx" || !plan, kInvalidArgument, "--model-type onnx: '", path,
               "' is a parity plan, not an ONNX model (use --model-type engine)");
}

void add_ignore_external_data_option(options::ArgParser& parser) {
  parser.add({.flags = {"--ignore-external-data"},
              .help = "Load only the model's structure, without its external data (weights that are not available): "
                      "enough to inspect or cut the graph; anything that needs the weights' values fails",
              .arity = options::Arity::kFlag});
}

model::LoadOptions load_options(const options::Args& args) {
  PARITY_CHECK(!(args.flag("ignore_external_data") && args.has("external_data_dir")), kInvalidArgument,
               "--ignore-external-data and --external-data-dir contradict each other; give one");
  return {.external_data_dir = args.get_or("external_data_dir", ""),
          .ignore_external_data = args.flag("ignore_external_data")};
}

void add_output_options(options::ArgParser& parser) {
  parser.group("Output");
  parser.add({.flags = {"-o", "--output"}, .help = "Path of the model to write", .metavar = "OUT", .required = true});
  parser.add({.flags = {"--force"}, .help = "Allow the output to overwrite the input model or its weight files",
              .arity = options::Arity::kFlag});
  model::ModelSaveArgs().add_to(parser);
}

model::Model load_input(const options::Args& args) {
  const std::string path = args.get_or("model", "");
  logger().info("Loading model: ", path);
  return model::load_model(path, load_options(args)).value();
}

model::SaveOptions save_options(const options::Args& args) { return model::ModelSaveArgs().parse(args); }

fs::path output_path(const options::Args& args, const model::Model& input) {
  const fs::path out = args.get_or("output", "");
  PARITY_CHECK(!out.empty(), kInvalidArgument, "no output path given (-o)");
  if (args.flag("force")) {
    formats::allow_overwriting_inputs();
    return out;
  }
  tools::check_not_overwriting_input(input, out, save_options(args));
  return out;
}

void save_output(const model::Model& model, const fs::path& path, const options::Args& args, bool check) {
  tools::save_checked_model(model, path, save_options(args), check);
}

void add_verify_options(options::ArgParser& parser, const std::string& what) {
  parser.add({.flags = {"--verify"},
              .help = "Run the " + what + " model against the original on N seeded inputs (default 1) with parity's "
                      "runtime and fail when an output differs beyond --verify-atol + --verify-rtol * |original|",
              .metavar = "N", .arity = options::Arity::kAny});
  parser.add({.flags = {"--verify-atol"}, .help = "Absolute tolerance of --verify (default 1e-5)", .metavar = "TOL"});
  parser.add({.flags = {"--verify-rtol"}, .help = "Relative tolerance of --verify (default 1e-5)", .metavar = "TOL"});
}

int verify_rewritten(const model::Model& original, const model::Model& rewritten, const options::Args& args,
                     const std::string& what) {
  if (!args.has("verify")) return kExitPassed;
  const auto counts = args.list("verify");
  PARITY_CHECK(counts.size() <= 1, kInvalidArgument, "--verify takes at most one count");
  const int64_t n = counts.empty() ? 1 : parse_int(counts[0], "--verify");
  PARITY_CHECK(n >= 1, kInvalidArgument, "--verify needs 1 or more iterations, got ", n);
  auto tolerance = [&](const std::string& dest, const std::string& flag) {
    const auto text = args.get(dest);
    const double tol = text ? parse_double(*text, flag) : 1e-5;
    PARITY_CHECK(tol >= 0, kInvalidArgument, flag, " must not be negative, got ", tol);
    return tol;
  };
  const double atol = tolerance("verify_atol", "--verify-atol"), rtol = tolerance("verify_rtol", "--verify-rtol");
  const tools::VerifyResult result = tools::verify_same_outputs(original, rewritten, n, atol, rtol);
  if (result.mismatch) {
    logger().error("Verify | the ", what, " model differs from the original: ", *result.mismatch);
    return kExitFailed;
  }
  logger().info("Verify | ", result.outputs_compared, " output(s) equal to the original's on ", n,
                " seeded input(s) (max abs err ", result.max_absdiff, ")");
  return kExitPassed;
}

void add_plugin_selection_options(options::ArgParser& parser) {
  parser.group("Plugins");
  parser.add({.flags = {"--plugin-dir"},
              .help = "Folder of plugins: one folder per plugin holding its pattern.yaml (format: docs/polygraphy-differences.md, Plugin patterns)",
              .metavar = "DIR", .required = true});
  parser.add({.flags = {"--include"}, .help = "Only these plugins", .metavar = "NAME",
              .arity = options::Arity::kOneOrMore});
  parser.add({.flags = {"--exclude"}, .help = "Leave these plugins out", .metavar = "NAME",
              .arity = options::Arity::kOneOrMore});
}

std::vector<tools::PluginSubstitutions> match_selected_plugins(const model::Model& model, const options::Args& args) {
  PARITY_CHECK(!(args.has("include") && args.has("exclude")), kInvalidArgument,
               "--include and --exclude cannot be used together");
  const auto plugins =
      tools::load_plugins(args.get_or("plugin_dir", ""), args.list("include"), args.list("exclude"));
  const auto graph = model::Graph::from_model(model);
  std::map<std::string, size_t> counts;
  for (const auto& p : plugins) {
    logger().info("checking ", p.name, " in model");
    counts[p.name] = 0;
  }
  const auto substitutions = tools::match_plugins(*graph, plugins);
  for (const auto& s : substitutions) counts[s.name] = s.instances.size();
  std::string summary;
  for (const auto& [name, n] : counts) summary += (summary.empty() ? "'" : ", '") + name + "': " + std::to_string(n);
  logger().info("the following plugins matched:");
  logger().info("{", summary, "}");
  return substitutions;
}

}  // namespace parity::cli::model_edit
