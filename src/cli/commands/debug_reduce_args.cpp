#include "cli/commands/debug_reduce_args.h"

#include <cctype>
#include <cstdio>
#include <iostream>

#include "core/logger.h"
#include "core/text.h"
#include "runners/registry.h"

namespace parity::cli {

using namespace parity::tools::debug;

namespace {

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

}  // namespace

void DebugReduceArgs::add_to(options::ArgParser& parser) {
  parser.group("Reduction");
  parser.add({.flags = {"--mode"},
              .help = "bisect: binary search from the outputs, then from the inputs (few checks); linear: try "
                      "removing each node once (one check per node; also shrinks failures spread over branches)",
              .metavar = "MODE",
              .choices = {"bisect", "linear"},
              .default_value = "bisect"});
  parser.add({.flags = {"--no-reduce-outputs"},
              .help = "Keep the nodes after the failure (reduce from the inputs only)",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--no-reduce-inputs"},
              .help = "Keep the nodes before the failure (reduce from the outputs only)",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--model-input-shapes", "--model-inputs"},
              .dest = "model_input_shapes",
              .help = "The model's input shapes, NAME:[d0,...]: the recording runs at them, so every candidate's "
                      "tensors carry them (as --input-shapes)",
              .metavar = "NAME:SHAPE",
              .arity = options::Arity::kOneOrMore});
  parser.add({.flags = {"--force-fallback-shape-inference", "--no-shape-inference"},
              .dest = "shape_inference_choice",
              .help = "Accepted as Polygraphy spells them; no effect: candidates always carry the types and shapes "
                      "the recording ran with (what Polygraphy's fallback shape inference gives)",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--fold-constants"},
              .help = "Fold every constant-computable node first (turns shape computations into constants, so "
                      "cuts do not expose them); by default only Constant nodes become initializers, as in Polygraphy",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--no-fold-constants"},
              .help = "Only Constant nodes become initializers (the default)",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--min-good"},
              .help = "Also save the passing candidate closest in size to the result (a model without the "
                      "failure, to diff against)",
              .metavar = "PATH"});
  parser.add({.flags = {"--save-debug-replay"},
              .help = "Write every check's verdict here after each check, so an interrupted reduction can resume",
              .metavar = "PATH",
              .default_value = "polygraphy_debug_replay.json"});
  parser.add({.flags = {"--load-debug-replay"},
              .help = "Take the verdicts of checks already run from this replay file instead of running them again",
              .metavar = "PATH"});

  parser.group("Check (an external command, or the built-in comparison of runners)");
  parser.add({.flags = {"--check"},
              .help = "Command deciding whether a candidate fails (non-zero exit status = fails). {model} is "
                      "replaced by the candidate's path (--iter-artifact), {inputs} by a Polygraphy inputs JSON "
                      "holding the candidate's inputs as the full model computed them. Must come last",
              .metavar = "CMD",
              .arity = options::Arity::kRemainder});
  parser.add({.flags = {"--iter-artifact"},
              .help = "Where each candidate is written for the check (Polygraphy's name by default)",
              .metavar = "PATH",
              .default_value = "polygraphy_debug.onnx"});
  parser.add({.flags = {"--iter-inputs"},
              .help = "Where each candidate's inputs are written when the check mentions {inputs} (default: "
                      "polygraphy_debug_inputs.json beside --iter-artifact)",
              .metavar = "PATH"});
  parser.add({.flags = {"--fail-code"},
              .help = "Only these exit statuses mean the candidate fails",
              .metavar = "N",
              .arity = options::Arity::kOneOrMore});
  parser.add({.flags = {"--ignore-fail-code"},
              .help = "Exit statuses that do not mean a failure",
              .metavar = "N",
              .arity = options::Arity::kOneOrMore});
  parser.add({.flags = {"--fail-regex"},
              .help = "A failing status counts only when the check's output matches one of these regular "
                      "expressions (to tell one failure from another)",
              .metavar = "REGEX",
              .arity = options::Arity::kOneOrMore});
  parser.add({.flags = {"--show-output"},
              .help = "Show the check command's output for every check",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--artifacts"},
              .help = "Files the check writes, moved after each check into good/ or bad/ of --artifacts-dir",
              .metavar = "PATH",
              .arity = options::Arity::kOneOrMore});
  parser.add({.flags = {"--artifacts-dir"},
              .help = "Folder receiving good/ and bad/ artifacts",
              .metavar = "DIR",
              .default_value = "polygraphy_artifacts"});
  runner_args_.add_flags_to(parser, "Built-in check: runners compared on each candidate (instead of --check)");
  compare_args_.add_to(parser);

  data_loader_args_.add_to(parser);
  iteration_args_.add_iterations_to(parser);
  runner_args_.add_runtime_options_to(parser);
}

const char* DebugReduceArgs::epilog() {
  return "Candidates are subsets of the model's nodes. Checked by runners or by a --check given {inputs},\n"
         "tensors a candidate consumes but does not compute become its inputs, fed with the values the\n"
         "full model produced for them (every --iterations feed; a candidate fails when any iteration\n"
         "fails). Otherwise (as in Polygraphy) candidates keep the model's own inputs, those tensors\n"
         "become constants holding the values of the first feed, and the outputs are the values no kept\n"
         "node consumes. Every tensor of every feed is held in memory meanwhile: reduce at small\n"
         "--input-shapes where the failure allows.\n"
         "Examples:\n"
         "  parity debug reduce model.onnx -o reduced.onnx --ref --ort\n"
         "  parity debug reduce model.onnx -o reduced.onnx --mode linear \\\n"
         "      --check parity run {model} --ref --ort --load-inputs {inputs}";
}

ReduceModelOptions DebugReduceArgs::parse(const options::Args& args) const {
  ReduceModelOptions options = parse_check(args);
  options.reduce = {parse_reduce_mode(args.get_or("mode", "bisect")), !args.flag("no_reduce_outputs"),
                    !args.flag("no_reduce_inputs")};
  options.data = data_loader_args_.parse(args);
  for (const auto& item : args.list("model_input_shapes"))
    options.data.input_shapes.push_back(options::parse_input_shape(item));
  options.iterations = iteration_args_.parse(args).iterations;
  options.fold_constants = args.flag("fold_constants");
  options.show_output = args.flag("show_output");
  options.iter_artifact = args.get_or("iter_artifact", "polygraphy_debug.onnx");
  options.iter_inputs = args.get_or("iter_inputs", "");
  options.save_replay = args.get_or("save_debug_replay", "polygraphy_debug_replay.json");
  options.load_replay = args.get("load_debug_replay");
  options.artifacts = args.list("artifacts");
  options.artifacts_dir = args.get_or("artifacts_dir", "polygraphy_artifacts");

  return options;
}

// The external command, the runners or the user: whichever decides each candidate.
ReduceModelOptions DebugReduceArgs::parse_check(const options::Args& args) const {
  const std::vector<std::string> runner_names = runner_args_.parse_flags(args);
  ReduceModelOptions options;
  const bool external = args.has("check");
  PARITY_CHECK(!external || runner_names.empty(), kInvalidArgument,
               "give either --check or runners to compare, not both");
  PARITY_CHECK(external || runner_names.size() != 1, kInvalidArgument,
               "one runner cannot decide whether a candidate fails: give at least two runners to compare (e.g. "
               "--ref --ort), --check CMD..., or neither to answer for each candidate");
  if (external) {
    options.command =
        CheckCommand{args.list("check"), parse_codes(args, "fail_code", "--fail-code"),
                     parse_codes(args, "ignore_fail_code", "--ignore-fail-code"), args.list("fail_regex")};
    validate_check_command(*options.command);
  } else if (!runner_names.empty()) {
    const runners::RunnerOptions runner_options = runner_args_.parse_runtime_options(args);
    for (const auto& name : runner_names)
      runners::RunnerRegistry::instance().find(name)->require_available(runner_options);
    options.runners = RunnerCheck{runner_names, runner_options, compare_args_.parse(args)};
  } else {
    logger().info("No --check and no runners: interactive mode, asking whether each candidate passed");
    options.ask_passed = ask_whether_passed;
  }
  return options;
}

}  // namespace parity::cli
