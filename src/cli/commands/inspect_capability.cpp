// `parity inspect capability MODEL [--runners ref,ort] [-o DIR]`: which nodes each runner supports
// and the partition of the model into supported and unsupported subgraphs (Polygraphy's
// `inspect capability`, for every runner parity has, extension runners included). Each node, then
// each supported partition, is run on the runner with the values the full model produced for its
// inputs; -o writes every partition as a model of its own.
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "core/formats/file_io.h"
#include "core/logger.h"
#include "options/data_loader_args.h"
#include "runners/registry.h"
#include "runners/runner_args.h"
#include "tools/debug/capability.h"
#include "tools/debug/recorded_model.h"
#include "tools/debug/runner_check.h"

namespace parity::cli {
namespace {

namespace fs = std::filesystem;
using namespace parity::tools::debug;

// A private scratch folder for the pieces handed to runners.
class ScratchFolder {
 public:
  ScratchFolder() {
    std::string tmpl = (fs::temp_directory_path() / "parity-capability-XXXXXX").string();
    PARITY_CHECK(::mkdtemp(tmpl.data()), kIo, "cannot create a scratch folder in ", fs::temp_directory_path().string());
    path_ = tmpl;
  }
  ~ScratchFolder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// "Conv x3 (..reason..)" rows: unsupported op types with their count and first reason.
std::string unsupported_table(const GraphCutter& cutter, const Capability& capability) {
  std::map<std::string, std::pair<size_t, std::string>> by_op;
  for (size_t i = 0; i < capability.nodes.size(); ++i)
    if (!capability.nodes[i].supported) {
      auto& entry = by_op[cutter.op_type(i)];
      if (entry.first++ == 0) entry.second = capability.nodes[i].reason;
    }
  std::ostringstream out;
  for (const auto& [op, entry] : by_op) out << "    " << op << " x" << entry.first << ": " << entry.second << "\n";
  return out.str();
}

class InspectCapabilityCommand : public Command {
 public:
  std::string name() const override { return "inspect capability"; }
  std::string summary() const override {
    return "Show which nodes each runner supports and partition the model into supported/unsupported subgraphs";
  }

  void add_options(options::ArgParser& parser) override {
    model_edit::add_model_argument(parser);
    parser.group("Capability");
    runner_args_.add_list_to(parser, "Runners to inspect, comma-separated (default: every available runner)");
    parser.add({.flags = {"-o", "--output"},
                .help = "Folder receiving <runner>/supported_subgraph-N.onnx, unsupported_subgraph-N.onnx and "
                        "results.txt",
                .metavar = "DIR"});
    parser.add({.flags = {"--no-fold-constants"}, .help = "Do not fold constants first", .arity = options::Arity::kFlag});
    data_loader_args_.add_to(parser);
    runner_args_.add_runtime_options_to(parser);
  }

  int run(const options::Args& args) override {
    const runners::RunnerOptions runner_options = runner_args_.parse_runtime_options(args);
    std::vector<std::string> runner_names;
    if (args.has("runners")) {
      runner_names = runner_args_.parse_list(args, "");
    } else {
      for (const auto& info : runners::RunnerRegistry::instance().all())
        if (info.selected_by_default && info.available(runner_options).is_ok()) runner_names.push_back(info.name);
    }
    for (const auto& name : runner_names) runners::RunnerRegistry::instance().find(name)->require_available(runner_options);
    const std::optional<std::string> out_dir = args.get("output");
    if (out_dir) {
      std::error_code ec;
      fs::create_directories(*out_dir, ec);
      PARITY_CHECK(!ec && fs::is_directory(*out_dir), kIo, "-o: cannot create folder ", *out_dir,
                   ec ? ": " + ec.message() : std::string());
    }
    const options::DataLoaderOptions data = data_loader_args_.parse(args);
    const model::Model original = model_edit::load_input(args);
    const RecordedModel recorded = record_model(original, data, 1, args.flag("no_fold_constants") ? Folding::kNone : Folding::kAll);
    const GraphCutter cutter(recorded.base);
    const ScratchFolder scratch;

    for (const auto& runner : runner_names) {
      size_t pieces = 0;
      const SupportCheck runs = [&](const Cut& cut, const std::vector<TensorMap>& feeds) {
        const std::string path = scratch.file("piece-" + std::to_string(pieces++) + ".onnx");
        model::save_model(cut.model, path).throw_if_error();
        Status st = runs_on(runner, runner_options, path, feeds.front());
        if (st.is_ok()) return st;
        // The scratch file's name means nothing to the user; the report names the node.
        std::string message = st.message();
        for (size_t at = message.find(path); at != std::string::npos; at = message.find(path))
          message.replace(at, path.size(), "the node's model");
        return Status(Error(st.error().code(), message));
      };
      logger().info("Inspecting runner '", runner, "' on ", cutter.node_count(), " nodes");
      const Capability capability = find_capability(cutter, recorded.values, runs);
      if (out_dir) {
        std::error_code ec;
        fs::create_directories(fs::path(*out_dir) / runner, ec);
        PARITY_CHECK(!ec, kIo, "-o: cannot create folder ", (fs::path(*out_dir) / runner).string(), ": ", ec.message());
      }
      std::ostringstream report;
      report << "Runner " << runner << ": " << capability.supported_count() << " of " << cutter.node_count()
             << " nodes supported, " << capability.partitions.size() << " partition(s)\n";
      if (capability.supported_count() < cutter.node_count())
        report << "  Unsupported op types:\n" << unsupported_table(cutter, capability);
      size_t supported_n = 0, unsupported_n = 0;
      for (const auto& partition : capability.partitions) {
        const size_t n = partition.supported ? supported_n++ : unsupported_n++;
        const std::string name = std::string(partition.supported ? "supported" : "unsupported") + "_subgraph-" +
                                 std::to_string(n);
        report << "  " << name << ": nodes " << format_node_set(partition.nodes) << " ("
               << cutter.node_label(partition.nodes.front());
        if (partition.nodes.size() > 1) report << " .. " << cutter.node_label(partition.nodes.back());
        report << ")\n";
        if (out_dir) {
          const fs::path dir = fs::path(*out_dir) / runner;
          model::save_model(cutter.cut(partition.nodes)->model, dir / (name + ".onnx")).throw_if_error();
        }
      }
      logger().info(report.str());
      if (out_dir) {
        formats::write_binary_file((fs::path(*out_dir) / runner / "results.txt").string(), report.str());
        logger().info("Saved partitions of '", runner, "' to ", (fs::path(*out_dir) / runner).string());
      }
    }
    return kExitPassed;
  }

 private:
  runners::RunnerArgs runner_args_;
  options::DataLoaderArgs data_loader_args_;
};

PARITY_REGISTER_COMMAND(InspectCapabilityCommand);

}  // namespace
}  // namespace parity::cli
