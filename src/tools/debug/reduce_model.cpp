#include "tools/debug/reduce_model.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "compare/feed_files.h"
#include "core/formats/file_io.h"
#include "core/logger.h"
#include "tools/debug/artifacts.h"
#include "tools/debug/recorded_model.h"
#include "tools/debug/replay.h"
#include "tools/debug/subgraph_cut.h"

namespace parity::tools::debug {

namespace {

namespace fs = std::filesystem;

bool mentions(const std::vector<std::string>& argv, const std::string& token) {
  return std::any_of(argv.begin(), argv.end(),
                     [&](const std::string& a) { return a.find(token) != std::string::npos; });
}

// The last lines of a check's output (the interesting part of a long log).
std::string reduce_tail_lines(const std::string& text, size_t lines) {
  size_t at = text.size();
  while (at > 0 && text[at - 1] == '\n') --at;
  for (size_t seen = 0; at > 0; --at)
    if (text[at - 1] == '\n' && ++seen == lines) break;
  return text.substr(at);
}

// What is being reduced, so a replay file is not applied to another model or setup.
std::string fingerprint(const GraphCutter& cutter, const ReduceModelOptions& options) {
  std::ostringstream settings;
  settings << (options.reduce.mode == ReduceMode::kBisect ? "bisect" : "linear") << options.reduce.reduce_outputs
           << options.reduce.reduce_inputs;
  if (options.command)
    for (const auto& a : options.command->argv) settings << ' ' << a;
  if (options.runners)
    for (const auto& r : options.runners->runners) settings << " --" << r;
  std::string text = settings.str();
  for (size_t i = 0; i < cutter.node_count(); ++i) text += "|" + cutter.node_label(i);
  std::ostringstream out;
  out << cutter.node_count() << "-nodes-" << std::hex << std::hash<std::string>{}(text);
  return out.str();
}

// The per-check model is scratch: written plainly, without the fsync of an atomic save (a
// reduction writes hundreds of them; syncing each costs more than the check on a busy disk).
void write_scratch(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  PARITY_CHECK(out.good(), kIo, "cannot write ", path, " (the model each check runs)");
}

// Whether each candidate must fit the check's own data: a command given no {inputs}, or the user.
bool keeps_model_inputs(const ReduceModelOptions& options) {
  return options.command ? !mentions(options.command->argv, "{inputs}") : !options.runners;
}

class Reduction {
 public:
  Reduction(const ReduceModelOptions& options, const GraphCutter& cutter, const std::vector<TensorMap>& values)
      : options_(options),
        cutter_(cutter),
        values_(values),
        artifacts_(options.artifacts, options.artifacts_dir),
        replay_(fingerprint(cutter, options)),
        iter_inputs_(options.iter_inputs.empty()
                         ? (fs::path(options.iter_artifact).parent_path() / "polygraphy_debug_inputs.json").string()
                         : options.iter_inputs) {
    if (options.load_replay) {
      logger().info("Loading iteration information from debug replay: ", *options.load_replay);
      replay_.load(*options.load_replay);
      logger().info("Loaded ", replay_.size(), " verdict(s) from ", *options.load_replay);
    }
  }

  bool fails(const NodeSet& nodes) {
    ++checks_;
    const std::string what = std::to_string(nodes.size()) + " of " + std::to_string(cutter_.node_count()) + " nodes";
    if (auto known = replay_.find(nodes)) {
      logger().info("Check ", checks_, ": ", what, " -> ", *known ? "fails" : "passes", " (from the replay)");
      steps_.push_back({nodes.size(), *known, true, 0, ""});
      any_failed_ = any_failed_ || *known;
      return *known;
    }
    const auto started = std::chrono::steady_clock::now();
    std::optional<Cut> cut = cutter_.cut(nodes);
    PARITY_ASSERT(cut, "the reducer asked for a candidate without outputs");
    warn_about_generated_frozen_values(*cut);
    formats::forget_input(options_.iter_artifact);  // the previous check's runners read it
    write_scratch(options_.iter_artifact, model::serialize_model(cut->model));
    ++ran_;
    std::string detail;
    const bool failed = judge(*cut, what, &detail);
    steps_.push_back({nodes.size(), failed, false,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), detail});
    any_failed_ = any_failed_ || failed;
    replay_.record(nodes, failed);
    formats::forget_input(options_.save_replay);  // resuming reads the replay it goes on writing
    replay_.save(options_.save_replay);
    return failed;
  }

  void cleanup() const {
    std::error_code ec;
    fs::remove(options_.iter_artifact, ec);
    fs::remove(iter_inputs_, ec);
  }

  void fill(ReduceModelResult& result) {
    result.steps = std::move(steps_);
    result.checks = checks_;
    result.ran = ran_;
    result.any_failed = any_failed_;
  }

 private:
  bool judge(const Cut& cut, const std::string& what, std::string* detail) {
    if (options_.command) {
      const CheckCommand& check = *options_.command;
      if (mentions(check.argv, "{inputs}")) {
        formats::forget_input(iter_inputs_);
        compare::save_feeds(iter_inputs_, feeds_for(cut, values_));
      }
      const CheckOutcome outcome = run_check_command(
          check, substitute(check.argv, {{"model", options_.iter_artifact}, {"inputs", iter_inputs_}}));
      if (options_.show_output)
        logger().info(outcome.output);
      else
        logger().verbose(reduce_tail_lines(outcome.output, 10));
      artifacts_.sort(ran_, outcome.failed, outcome.exit_status);
      logger().info("Check ", checks_, ": ", what, " -> ", outcome.failed ? "fails" : "passes", " (exit status ",
                    outcome.exit_status, ")");
      *detail = "exit status " + std::to_string(outcome.exit_status);
      return outcome.failed;
    }
    if (options_.runners) {
      const bool failed =
          runner_check_fails(*options_.runners, options_.iter_artifact, feeds_for(cut, values_), detail);
      logger().info("Check ", checks_, ": ", what, " -> ", failed ? "fails (" + *detail + ")" : "passes");
      return failed;
    }
    const bool failed = !options_.ask_passed(options_.iter_artifact);
    logger().info("Check ", checks_, ": ", what, " -> ", failed ? "fails" : "passes", " (answered)");
    *detail = "answered";
    return failed;
  }

  // Frozen values come from debug reduce's own feeds: when the check loads other data, they
  // disagree with it and candidates fail for that alone.
  void warn_about_generated_frozen_values(const Cut& cut) {
    if (cut.frozen.empty() || !options_.data.load_inputs.empty() || warned_generated_) return;
    warned_generated_ = true;
    logger().warning("Candidates cut branches away by freezing their values (e.g. '", cut.frozen.front(),
                     "'), computed from generated inputs. Please ensure that you have provided a data loader argument "
                     "directly to debug reduce (i.e. before --check, e.g. --load-inputs) if the --check command loads "
                     "its own inputs: otherwise the frozen values do not match its data, and candidates may fail for "
                     "that alone");
  }

  const ReduceModelOptions& options_;
  const GraphCutter& cutter_;
  const std::vector<TensorMap>& values_;
  const ArtifactSorter artifacts_;
  DebugReplay replay_;
  const std::string iter_inputs_;
  std::vector<report::ReduceStep> steps_;
  size_t checks_ = 0, ran_ = 0;
  bool any_failed_ = false;
  bool warned_generated_ = false;
};

void warn_about_shape_operations(const model::Model& base, bool folded) {
  if (folded) return;
  const auto& nodes = base.proto().graph().node();
  if (std::none_of(nodes.begin(), nodes.end(), [](const auto& n) { return n.op_type() == "Shape"; })) return;
  logger().warning(
      "This model includes shape operations, which may cause issues while reducing (cuts expose shape "
      "values as inputs or constants): fold them first with --fold-constants (with --model-input-shapes "
      "for dynamic inputs)");
}

}  // namespace

ReduceModelResult reduce_model(const model::Model& model, const ReduceModelOptions& options) {
  const RecordedModel recorded = record_model(model, options.data, options.iterations,
                                              options.fold_constants ? Folding::kAll : Folding::kConstantNodes);
  warn_about_shape_operations(recorded.base, options.fold_constants);
  const bool model_inputs = keeps_model_inputs(options);
  const GraphCutter cutter(recorded.base, model_inputs ? CutBoundary::kModelInputs : CutBoundary::kExposed,
                           model_inputs ? recorded.values.front().clone() : TensorMap{});
  PARITY_CHECK(cutter.node_count() > 0, kInvalidArgument, "the model has no nodes to reduce");
  if (model_inputs && options.iterations > 1)
    logger().info("Candidates keep the model's inputs: values of cut-away nodes are frozen from the first of the ",
                  options.iterations, " feeds");

  Reduction reduction(options, cutter, recorded.values);
  const ReduceGraph graph{cutter.node_count(), [&](size_t i) { return cutter.ancestors(i); },
                          [&](const NodeSet& nodes) { return cutter.cut(nodes).has_value(); }};
  const ReduceResult found = reduce(
      graph, [&](const NodeSet& nodes) { return reduction.fails(nodes); }, options.reduce);
  reduction.cleanup();

  ReduceModelResult result;
  reduction.fill(result);
  result.reduced = std::move(cutter.cut(found.failing)->model);
  if (found.passing) {
    result.passing = std::move(cutter.cut(*found.passing)->model);
    result.passing_nodes = found.passing->size();
  }
  result.node_count = cutter.node_count();
  for (size_t i : found.failing) result.final_nodes.push_back(cutter.node_label(i));
  result.final_indices = found.failing;
  return result;
}

std::string describe_nodes(const std::vector<std::string>& labels) {
  std::string text;
  for (size_t i = 0; i < labels.size() && i < 8; ++i) text += (i ? ", " : "") + labels[i];
  return labels.size() > 8 ? text + ", ..." : text;
}

report::ReduceSummary reduce_summary(const ReduceModelOptions& options, ReduceModelResult result) {
  report::ReduceSummary summary;
  summary.mode = options.reduce.mode == ReduceMode::kBisect ? "bisect" : "linear";
  if (options.command)
    for (const auto& a : options.command->argv) summary.check += (summary.check.empty() ? "" : " ") + a;
  if (options.runners)
    for (const auto& r : options.runners->runners) summary.check += (summary.check.empty() ? "" : " vs ") + r;
  summary.node_count = result.node_count;
  summary.steps = std::move(result.steps);
  summary.final_nodes = std::move(result.final_nodes);
  summary.final_indices = std::move(result.final_indices);
  if (result.passing) summary.passing_nodes = result.passing_nodes;
  return summary;
}

}  // namespace parity::tools::debug
