// `parity debug reduce MODEL -o reduced.onnx (--check CMD... | --ref --ort ...)`: shrinks a model
// that fails to the smallest subgraph that still fails (Polygraphy's `debug reduce`). The model is
// folded and run once on parity's runtime; every candidate is a subset of its nodes whose cut
// tensors become graph inputs carrying the values that run produced. The algorithm lives in
// tools/debug/.
#include <onnx/onnx_pb.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "compare/compare_args.h"
#include "compare/feed_files.h"
#include "core/formats/file_io.h"
#include "core/logger.h"
#include "core/text.h"
#include "options/data_loader_args.h"
#include "runners/registry.h"
#include "runners/runner_args.h"
#include "tools/debug/artifacts.h"
#include "tools/debug/check_command.h"
#include "tools/debug/recorded_model.h"
#include "tools/debug/reduce.h"
#include "tools/debug/replay.h"
#include "tools/debug/runner_check.h"
#include "tools/debug/subgraph_cut.h"
#include "tools/report/debug_report.h"
#include "tools/report/report_args.h"

namespace parity::cli {
namespace {

namespace fs = std::filesystem;
using namespace parity::tools::debug;

// Polygraphy's interactive mode (neither --check nor runners): the user says whether each candidate
// passed, answering p or f on standard input.
bool ask_whether_passed(const std::string& artifact) {
  std::string prompt = "Did '" + artifact + "' [p]ass or [f]ail?";
  for (;;) {
    std::printf(">>> %s ", prompt.c_str());
    std::fflush(stdout);
    std::string answer;
    PARITY_CHECK(static_cast<bool>(std::getline(std::cin, answer)), kInvalidArgument,
                 "interactive mode: no answer (standard input is closed); give --check CMD... or two runners to "
                 "compare (e.g. --ref --ort)");
    const char c = answer.empty() ? '\0' : static_cast<char>(std::tolower(static_cast<unsigned char>(answer[0])));
    if (c == 'p' || c == 'f') return c == 'p';
    prompt = "Please choose either: 'p' or 'f':";
  }
}

std::vector<int> parse_codes(const options::Args& args, const std::string& dest, const std::string& flag) {
  std::vector<int> codes;
  for (const auto& text : args.list(dest)) codes.push_back(static_cast<int>(parse_int(text, flag)));
  return codes;
}

bool mentions(const std::vector<std::string>& argv, const std::string& token) {
  for (const auto& a : argv)
    if (a.find(token) != std::string::npos) return true;
  return false;
}

// The last lines of a check's output (the interesting part of a long log).
std::string tail_lines(const std::string& text, size_t lines) {
  size_t at = text.size();
  while (at > 0 && text[at - 1] == '\n') --at;
  for (size_t seen = 0; at > 0; --at)
    if (text[at - 1] == '\n' && ++seen == lines) break;
  return text.substr(at);
}

// Identifies what is being reduced, so a replay file is not applied to another model or setup.
std::string fingerprint(const GraphCutter& cutter, const std::string& settings) {
  std::string text = settings;
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

class DebugReduceCommand : public Command {
 public:
  std::string name() const override { return "debug reduce"; }
  std::string summary() const override { return "Reduce a failing model to the smallest subgraph that still fails"; }

  void add_options(options::ArgParser& parser) override {
    model_edit::add_model_argument(parser);
    parser.group("Reduction");
    parser.add({.flags = {"--mode"},
                .help = "bisect: binary search from the outputs, then from the inputs (few checks); linear: try "
                        "removing each node once (one check per node; also shrinks failures spread over branches)",
                .metavar = "MODE", .choices = {"bisect", "linear"}, .default_value = "bisect"});
    parser.add({.flags = {"--no-reduce-outputs"}, .help = "Keep the nodes after the failure (reduce from the inputs only)",
                .arity = options::Arity::kFlag});
    parser.add({.flags = {"--no-reduce-inputs"}, .help = "Keep the nodes before the failure (reduce from the outputs only)",
                .arity = options::Arity::kFlag});
    parser.add({.flags = {"--model-input-shapes", "--model-inputs"}, .dest = "model_input_shapes",
                .help = "The model's input shapes, NAME:[d0,...]: the recording runs at them, so every candidate's "
                        "tensors carry them (as --input-shapes)",
                .metavar = "NAME:SHAPE", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--force-fallback-shape-inference", "--no-shape-inference"}, .dest = "shape_inference_choice",
                .help = "Accepted as Polygraphy spells them; no effect: candidates always carry the types and shapes "
                        "the recording ran with (what Polygraphy's fallback shape inference gives)",
                .arity = options::Arity::kFlag});
    parser.add({.flags = {"--no-fold-constants"},
                .help = "Do not fold constants first (folding turns shape computations into constants, so cuts "
                        "do not expose them as inputs)",
                .arity = options::Arity::kFlag});
    parser.add({.flags = {"--min-good"},
                .help = "Also save the passing candidate closest in size to the result (a model without the "
                        "failure, to diff against)",
                .metavar = "PATH"});
    parser.add({.flags = {"--save-debug-replay"},
                .help = "Write every check's verdict here after each check, so an interrupted reduction can resume",
                .metavar = "PATH", .default_value = "polygraphy_debug_replay.json"});
    parser.add({.flags = {"--load-debug-replay"},
                .help = "Take the verdicts of checks already run from this replay file instead of running them again",
                .metavar = "PATH"});

    parser.group("Check (an external command, or the built-in comparison of runners)");
    parser.add({.flags = {"--check"},
                .help = "Command deciding whether a candidate fails (non-zero exit status = fails). {model} is "
                        "replaced by the candidate's path (--iter-artifact), {inputs} by a Polygraphy inputs JSON "
                        "holding the candidate's inputs as the full model computed them. Must come last",
                .metavar = "CMD", .arity = options::Arity::kRemainder});
    parser.add({.flags = {"--iter-artifact"},
                .help = "Where each candidate is written for the check (Polygraphy's name by default)",
                .metavar = "PATH", .default_value = "polygraphy_debug.onnx"});
    parser.add({.flags = {"--iter-inputs"},
                .help = "Where each candidate's inputs are written when the check mentions {inputs} (default: "
                        "polygraphy_debug_inputs.json beside --iter-artifact)",
                .metavar = "PATH"});
    parser.add({.flags = {"--fail-code"}, .help = "Only these exit statuses mean the candidate fails",
                .metavar = "N", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--ignore-fail-code"}, .help = "Exit statuses that do not mean a failure",
                .metavar = "N", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--fail-regex"},
                .help = "A failing status counts only when the check's output matches one of these regular "
                        "expressions (to tell one failure from another)",
                .metavar = "REGEX", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--show-output"}, .help = "Show the check command's output for every check",
                .arity = options::Arity::kFlag});
    parser.add({.flags = {"--artifacts"},
                .help = "Files the check writes, moved after each check into good/ or bad/ of --artifacts-dir",
                .metavar = "PATH", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--artifacts-dir"}, .help = "Folder receiving good/ and bad/ artifacts",
                .metavar = "DIR", .default_value = "polygraphy_artifacts"});
    runner_args_.add_flags_to(parser, "Built-in check: runners compared on each candidate (instead of --check)");
    compare_args_.add_to(parser);

    data_loader_args_.add_to(parser);
    iteration_args_.add_iterations_to(parser);
    model_edit::add_output_options(parser);
    runner_args_.add_runtime_options_to(parser);
    report_args_.add_to(parser);

    parser.set_epilog(
        "Candidates are subsets of the (folded) model's nodes: tensors a candidate consumes but does not\n"
        "compute become its inputs, fed with the values the full model produced for them (every\n"
        "--iterations feed; a candidate fails when any iteration fails). Every tensor of every feed is\n"
        "held in memory meanwhile: reduce at small --input-shapes where the failure allows.\n"
        "Examples:\n"
        "  parity debug reduce model.onnx -o reduced.onnx --ref --ort\n"
        "  parity debug reduce model.onnx -o reduced.onnx --mode linear \\\n"
        "      --check parity run {model} --ref --ort --load-inputs {inputs}");
  }

  int run(const options::Args& args) override {
    const std::vector<std::string> runner_names = runner_args_.parse_flags(args);
    CheckCommand check{args.list("check"), parse_codes(args, "fail_code", "--fail-code"),
                       parse_codes(args, "ignore_fail_code", "--ignore-fail-code"), args.list("fail_regex")};
    const bool external = args.has("check");
    const bool interactive = !external && runner_names.empty();
    PARITY_CHECK(external || interactive || runner_names.size() >= 2, kInvalidArgument,
                 "one runner cannot decide whether a candidate fails: give at least two runners to compare (e.g. "
                 "--ref --ort), --check CMD..., or neither to answer for each candidate");
    if (interactive)
      logger().info("No --check and no runners: interactive mode, asking whether each candidate passed");
    PARITY_CHECK(!external || runner_names.empty(), kInvalidArgument,
                 "give either --check or runners to compare, not both");
    if (external) validate_check_command(check);
    for (const auto& name : runner_names) runners::RunnerRegistry::instance().find(name)->require_available(&args);
    const ReduceOptions reduce_options{parse_reduce_mode(args.get_or("mode", "bisect")), !args.flag("no_reduce_outputs"),
                                       !args.flag("no_reduce_inputs")};
    options::DataLoaderOptions data = data_loader_args_.parse(args);
    for (const auto& item : args.list("model_input_shapes")) data.input_shapes.push_back(options::parse_input_shape(item));
    const options::IterationOptions iterations = iteration_args_.parse(args);
    const RunnerCheck runner_check{runner_names, &args, compare_args_.parse(args)};
    const ArtifactSorter artifacts(args.list("artifacts"), args.get_or("artifacts_dir", "polygraphy_artifacts"));
    const std::string iter_artifact = args.get_or("iter_artifact", "polygraphy_debug.onnx");
    // Beside the candidate by default, so reductions with their own --iter-artifact never share it.
    const std::string iter_inputs =
        args.get_or("iter_inputs", (fs::path(iter_artifact).parent_path() / "polygraphy_debug_inputs.json").string());
    const std::string replay_path = args.get_or("save_debug_replay", "polygraphy_debug_replay.json");

    model::Model original = model_edit::load_input(args);
    const fs::path out = model_edit::output_path(args, original);
    for (const auto& path : {out.string(), iter_artifact, replay_path}) formats::check_writable_location(path);
    if (auto min_good = args.get("min_good")) formats::check_writable_location(*min_good);
    const tools::report::ReportOptions report_options = report_args_.parse(args);

    // The base model: folded, sorted, run once to record every value and type every tensor.
    const RecordedModel recorded = record_model(original, data, iterations.iterations, !args.flag("no_fold_constants"));
    const std::vector<TensorMap>& values = recorded.values;
    const GraphCutter cutter(recorded.base);
    PARITY_CHECK(cutter.node_count() > 0, kInvalidArgument, "the model has no nodes to reduce");

    std::ostringstream settings;
    settings << args.get_or("mode", "bisect") << reduce_options.reduce_outputs << reduce_options.reduce_inputs;
    for (const auto& a : check.argv) settings << ' ' << a;
    for (const auto& r : runner_names) settings << " --" << r;
    DebugReplay replay(fingerprint(cutter, settings.str()));
    if (auto path = args.get("load_debug_replay")) {
      logger().info("Loading iteration information from debug replay: ", *path);
      replay.load(*path);
      logger().info("Loaded ", replay.size(), " verdict(s) from ", *path);
    }

    size_t check_count = 0, ran = 0;
    const bool show_output = args.flag("show_output");
    std::vector<tools::report::ReduceStep> steps;  // every check, for --report
    auto fails = [&](const NodeSet& nodes) -> bool {
      ++check_count;
      const auto started = std::chrono::steady_clock::now();
      const std::string what = std::to_string(nodes.size()) + " of " + std::to_string(cutter.node_count()) + " nodes";
      if (auto known = replay.find(nodes)) {
        logger().info("Check ", check_count, ": ", what, " -> ", *known ? "fails" : "passes", " (from the replay)");
        steps.push_back({nodes.size(), *known, true, 0, ""});
        return *known;
      }
      std::string detail;
      std::optional<Cut> cut = cutter.cut(nodes);
      PARITY_ASSERT(cut, "the reducer asked for a candidate without outputs");
      formats::forget_input(iter_artifact);  // the previous check's runners read it
      write_scratch(iter_artifact, model::serialize_model(cut->model));
      bool failed = false;
      ++ran;
      if (external) {
        if (mentions(check.argv, "{inputs}")) {
          formats::forget_input(iter_inputs);
          compare::save_feeds(iter_inputs, feeds_for(*cut, values));
        }
        const CheckOutcome outcome =
            run_check_command(check, substitute(check.argv, {{"model", iter_artifact}, {"inputs", iter_inputs}}));
        failed = outcome.failed;
        if (show_output)
          logger().info(outcome.output);
        else
          logger().verbose(tail_lines(outcome.output, 10));
        artifacts.sort(ran, failed, outcome.exit_status);
        logger().info("Check ", check_count, ": ", what, " -> ", failed ? "fails" : "passes", " (exit status ",
                      outcome.exit_status, ")");
        detail = "exit status " + std::to_string(outcome.exit_status);
      } else if (interactive) {
        failed = !ask_whether_passed(iter_artifact);
        logger().info("Check ", check_count, ": ", what, " -> ", failed ? "fails" : "passes", " (answered)");
        detail = "answered";
      } else {
        std::string why;
        failed = runner_check_fails(runner_check, iter_artifact, feeds_for(*cut, values), &why);
        logger().info("Check ", check_count, ": ", what, " -> ", failed ? "fails (" + why + ")" : "passes");
        detail = why;
      }
      steps.push_back({nodes.size(), failed, false,
                       std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), detail});
      replay.record(nodes, failed);
      formats::forget_input(replay_path);  // resuming reads the replay it goes on writing
      replay.save(replay_path);
      return failed;
    };

    NodeSet all;
    for (size_t i = 0; i < cutter.node_count(); ++i) all.push_back(i);
    if (!fails(all)) {
      // As Polygraphy does, a model that passes is no error: it is saved as it is, with the hint.
      cleanup(iter_artifact, iter_inputs);
      logger().warning("the model passes the check: nothing to reduce (does the check fail on the full model?); "
                       "saving it unchanged");
      model_edit::save_output(cutter.cut(all)->model, out, args);
      return kExitPassed;
    }
    const ReduceGraph graph{cutter.node_count(), [&](size_t i) { return cutter.ancestors(i); },
                            [&](const NodeSet& nodes) { return cutter.cut(nodes).has_value(); }};
    const ReduceResult result = reduce(graph, fails, reduce_options);
    cleanup(iter_artifact, iter_inputs);

    const Cut reduced = *cutter.cut(result.failing);
    std::string labels;
    for (size_t i = 0; i < result.failing.size() && i < 8; ++i) labels += (i ? ", " : "") + cutter.node_label(result.failing[i]);
    if (result.failing.size() > 8) labels += ", ...";
    logger().info("Reduced ", cutter.node_count(), " nodes to ", result.failing.size(), " (", labels, ") in ",
                  check_count, " checks (", ran, " run)");
    model_edit::save_output(reduced.model, out, args);
    if (auto min_good = args.get("min_good")) {
      if (result.passing) {
        model_edit::save_output(cutter.cut(*result.passing)->model, *min_good, args);
        logger().info("Passing model closest in size (", result.passing->size(), " nodes) saved to ", *min_good);
      } else {
        logger().warning("No passing candidate was seen; --min-good ", *min_good, " not written");
      }
    }
    if (report_options.path) {
      tools::report::ReduceSummary summary;
      summary.model = args.get_or("model", "");
      summary.mode = args.get_or("mode", "bisect");
      for (const auto& a : check.argv) summary.check += (summary.check.empty() ? "" : " ") + a;
      for (const auto& r : runner_names) summary.check += (summary.check.empty() ? "" : " vs ") + r;
      summary.node_count = cutter.node_count();
      summary.steps = std::move(steps);
      for (size_t i : result.failing) summary.final_nodes.push_back(cutter.node_label(i));
      summary.final_indices = result.failing;
      if (result.passing) summary.passing_nodes = result.passing->size();
      summary.output = out.string();
      tools::report::Report page("parity debug reduce: " + fs::path(summary.model).filename().string(), current_command_line());
      page.add_section(tools::report::reduce_section(summary));
      page.write(*report_options.path);
      logger().info("Wrote report ", *report_options.path);
    }
    return kExitPassed;
  }

 private:
  static void cleanup(const std::string& iter_artifact, const std::string& iter_inputs) {
    std::error_code ec;
    fs::remove(iter_artifact, ec);
    fs::remove(iter_inputs, ec);
  }

  runners::RunnerArgs runner_args_;
  compare::ComparatorCompareArgs compare_args_;
  tools::report::ReportArgs report_args_{"every check as a step: candidate size, verdict, time; the final subgraph"};
  options::DataLoaderArgs data_loader_args_;
  options::IterationArgs iteration_args_{{.iterations = 1,
                                          .iterations_help = "Feeds to record and check (a candidate fails when any fails)"}};
};

PARITY_REGISTER_COMMAND(DebugReduceCommand);

}  // namespace
}  // namespace parity::cli
