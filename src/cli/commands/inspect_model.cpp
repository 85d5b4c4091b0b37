// `parity inspect model MODEL`: opset/IR/producer, graph inputs and outputs, weights summary and,
// with --show, every node with its tensors, attributes and nested subgraphs (Polygraphy's layout).
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "core/formats/file_io.h"
#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "tools/plan_report.h"
#include "core/logger.h"
#include "core/status.h"
#include "model/cost.h"
#include "model/graph.h"
#include "model/known_operators.h"
#include "model/model.h"
#include "model/model_summary.h"
#include "tools/plan_build.h"
#include "model/shape_inference.h"
#include "model/transforms/extract.h"
#include "model/transforms/unbounded_dds.h"

namespace parity::cli {
namespace {

class InspectModelCommand : public Command {
 public:
  std::string name() const override { return "inspect model"; }
  bool logs_passed_line() const override { return false; }
  std::string summary() const override { return "Display information about an ONNX model or a parity plan"; }

  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "model", .help = "Path to the ONNX model or parity plan (.plan)", .metavar = "MODEL", .required = true});
    parser.add({.flags = {"--show"},
                .help = "What to show besides the overview: layers (every node with its tensors), attrs (node "
                        "attributes; implies layers), weights (initializer values), cost (per node MACs, parameters "
                        "and output bytes from shape inference, with totals), info (parity's additions to Polygraphy's "
                        "text: IR version, producer, metadata, doc string, the weights summary)",
                .arity = options::Arity::kOneOrMore,
                .choices = {"layers", "attrs", "weights", "cost", "info"}});
    parser.add({.flags = {"--external-data-dir", "--load-external-data", "--ext"}, .dest = "external_data_dir",
                .help = "Folder holding the model's external data (default: the model's folder)", .metavar = "DIR"});
    model_edit::add_ignore_external_data_option(parser);
    parser.add({.flags = {"--list-unbounded-dds"},
                .help = "List the tensors that give a data-dependent shape without an upper bound (a Range, Pad, "
                        "Resize, Tile or Expand size computed at run time); shape inference runs first. Bound them "
                        "with surgeon sanitize --set-unbounded-dds-upper-bound",
                .arity = options::Arity::kFlag});
    parser.add({.flags = {"--format"}, .help = "Output format", .choices = {"text", "json"}, .default_value = "text"});
    parser.add({.flags = {"-o", "--output"}, .help = "Also write the report to this file", .metavar = "PATH"});
    parser.add({.flags = {"--convert-to", "--display-as"}, .dest = "display_as",
                .help = "Show the model as this format: trt (or plan) builds parity's engine, a plan, from the ONNX "
                        "model (fp32, its own shapes) and shows the plan",
                .metavar = "FORMAT", .choices = {"trt", "plan"}});
    model_edit::add_model_type_option(parser);
    parser.add({.flags = {"--shape-inference"},
                .help = "Run ONNX shape inference (with data propagation) first, to show more tensor shapes",
                .arity = options::Arity::kFlag});
  }

  int run(const options::Args& args) override {
    const std::string path = *args.get("model");
    const bool json = args.get_or("format", "text") == "json";
    // JSON goes to stdout for other programs; keep chatter out of it.
    if (json) logger().verbose("Loading model: ", path);
    else logger().info("Loading model: ", path);
    model_edit::check_model_type(args, path);
    if (runtime::plan::is_plan_file(path)) return inspect_plan(path, args, json);
    if (args.has("display_as")) return inspect_as_plan(path, args, json);
    model::Model model = model::load_model(path, model_edit::load_options(args)).value();
    if (args.flag("shape_inference") || args.flag("list_unbounded_dds")) {
      // An op (or op version) without a schema would be skipped silently, its outputs left unknown.
      const auto unknown = model::unknown_operators(model.proto());
      if (!unknown.empty()) fail(ErrorCode::kUnsupported, unknown.front().message);
    }
    if (args.flag("shape_inference")) {
      onnx::ModelProto inferred(model.proto());
      model::infer_shapes(inferred, /*data_prop=*/true);
      model.proto() = std::move(inferred);
    }
    auto graph = model::Graph::from_model(model);
    graph->toposort();  // refuses cyclic graphs with the nodes of the cycle

    model::SummaryOptions options;
    options.external_values_missing = model.external_data_ignored();
    bool show_cost = false;
    for (const auto& what : args.list("show")) {
      if (what == "layers") options.layers = true;
      if (what == "attrs") options.layers = options.attrs = true;
      if (what == "weights") options.weights = true;
      if (what == "cost") show_cost = true;
      if (what == "info") options.info = true;
    }
    std::string report = json ? model::summarize_model_json(*graph, options)
                              : "==== ONNX Model ====\n" + model::summarize_model_text(*graph, options);
    if (show_cost) report = with_cost(report, model::count_cost(model.proto()), json);
    if (args.flag("list_unbounded_dds")) report = with_unbounded_dds(report, model, json);
    return emit(report, args, json);
  }

 private:
  // Prints the report (JSON to stdout as is, text through the logger) and writes it where asked.
  static int emit(const std::string& report, const options::Args& args, bool json) {
    if (json) {
      std::fputs((report + "\n").c_str(), stdout);
      std::fflush(stdout);
    } else {
      logger().info(report);
    }
    write_report(report, args);
    return kExitPassed;
  }

  // A plan file (parity convert -o X.plan): the engine view, read without building kernels.
  // --display-as trt: the plan parity would build from the model, shown as a plan file is.
  static int inspect_as_plan(const std::string& path, const options::Args& args, bool json) {
    const model::Model model = model::load_model(path, model_edit::load_options(args)).value();
    const tools::BuiltPlan built = tools::build_plan(model, std::filesystem::path(path).parent_path(), {});
    std::random_device random;
    const std::filesystem::path plan =
        std::filesystem::temp_directory_path() / str_cat("parity-inspect-", random(), random(), ".plan");
    struct Remove {
      std::filesystem::path path;
      ~Remove() {
        std::error_code ec;
        std::filesystem::remove(path, ec);
      }
    } remove{plan};
    runtime::plan::save_plan(built.session, plan, std::filesystem::path(path).filename().string(), built.build_seconds);
    return inspect_plan(plan.string(), args, json);
  }

  static int inspect_plan(const std::string& path, const options::Args& args, bool json) {
    bool layers = false, attrs = false;
    for (const auto& what : args.list("show")) {
      layers = layers || what == "layers" || what == "attrs";
      attrs = attrs || what == "attrs";
      PARITY_CHECK(what != "cost", kInvalidArgument, "--show cost is for ONNX models; inspect the model the plan was "
                   "built from");
      PARITY_CHECK(what != "weights", kInvalidArgument, "--show weights is for ONNX models; a plan's weights are ",
                   "summarized under Memory");
    }
    const runtime::plan::PlanSummary summary = runtime::plan::summarize_plan(path);
    const std::string report = json ? tools::plan_report_json(summary, layers, attrs) : tools::plan_report_text(summary, layers, attrs);
    return emit(report, args, json);
  }

  // The summary with the cost table appended (text) or under "cost" (JSON).
  static std::string with_cost(const std::string& report, const model::ModelCost& cost, bool json) {
    if (!json) return report + "\n\n" + model::cost_table_text(cost);
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(report);
    nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
    for (const auto& n : cost.nodes)
      nodes.push_back({{"name", n.name}, {"op_type", n.op_type}, {"macs", n.macs}, {"params", n.params},
                       {"activation_bytes", n.activation_bytes}, {"shapes_known", n.shapes_known}});
    j["cost"] = {{"macs", cost.macs}, {"flops", cost.flops()}, {"params", cost.params},
                 {"activation_bytes", cost.activation_bytes},
                 {"nodes_with_unknown_shapes", cost.nodes_with_unknown_shapes}, {"nodes", std::move(nodes)}};
    return j.dump(2);
  }

  // Polygraphy's line "Found tensors with unbounded DDS: [...]" (text) or "unbounded_dds" (JSON).
  static std::string with_unbounded_dds(const std::string& report, const model::Model& model, bool json) {
    const auto graph = model::transforms::graph_with_inferred_types(model);
    std::vector<std::string> names;
    for (const auto& t : model::transforms::find_unbounded_dds(*graph)) names.push_back(t->name);
    if (json) {
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(report);
      j["unbounded_dds"] = names;
      return j.dump(2);
    }
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "'" : ", '") + n + "'";
    return report + "\n\nFound tensors with unbounded DDS: [" + list + "]";
  }

  static void write_report(const std::string& report, const options::Args& args) {
    if (auto out = args.get("output")) {
      formats::write_binary_file(*out, report + "\n");
      logger().info("Wrote report to: ", *out);
    }
  }
};

PARITY_REGISTER_COMMAND(InspectModelCommand);

}  // namespace
}  // namespace parity::cli
