#include "tools/validate/validate_args.h"

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "core/formats/file_io.h"
#include "core/logger.h"
#include "core/text.h"
#include "tools/report/report.h"
#include "tools/report/validate_report.h"
#include "tools/validate/summary.h"

namespace parity::tools::validation {
namespace {

using options::Arity;

std::vector<double> parse_doubles(const std::string& text, const std::string& flag) {
  std::vector<double> values;
  for (const auto& item : split_list(text, flag)) values.push_back(parse_double(item, flag));
  PARITY_CHECK(!values.empty(), kInvalidArgument, flag, ": no values");
  return values;
}

Shard parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  PARITY_CHECK(slash != std::string::npos, kInvalidArgument, "--shard: expected I/N (e.g. 0/4), got '", text, "'");
  const Shard shard{parse_int(text.substr(0, slash), "--shard index"), parse_int(text.substr(slash + 1), "--shard count")};
  PARITY_CHECK(shard.count >= 1 && shard.index >= 0 && shard.index < shard.count, kInvalidArgument,
               "--shard: index must be in [0, N) and N >= 1, got '", text, "'");
  return shard;
}

ImagePreprocessing parse_image(const options::Args& args) {
  ImagePreprocessing pre;
  pre.layout = args.get_or("image_layout", pre.layout);
  pre.channel_order = args.get_or("channel_order", pre.channel_order);
  if (auto size = args.get("resize")) {
    const Shape hw = parse_shape(*size, "--resize");
    PARITY_CHECK(hw.size() == 2 && hw[0] > 0 && hw[1] > 0, kInvalidArgument, "--resize: expected HxW (e.g. 224x224), got '",
                 *size, "'");
    pre.resize = std::pair{hw[0], hw[1]};
  }
  if (auto v = args.get("scale")) pre.scale = parse_double(*v, "--scale");
  if (auto v = args.get("mean")) pre.mean = parse_doubles(*v, "--mean");
  if (auto v = args.get("std")) pre.std = parse_doubles(*v, "--std");
  return pre;
}

}  // namespace

std::vector<int64_t> read_labels(const std::string& path) {
  std::istringstream in(formats::read_binary_file(path));
  std::vector<int64_t> labels;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const std::string text = trim(line);
    if (text.empty()) continue;
    try {
      labels.push_back(parse_int(text, "label"));
    } catch (const Error&) {
      throw Error(ErrorCode::kInvalidArgument,
                  str_cat("label file '", path, "' line ", number, ": expected one integer label, got '", text, "'"));
    }
  }
  return labels;
}

void ValidateArgs::add_to(options::ArgParser& parser) const {
  parser.add({.flags = {}, .dest = "model", .help = "ONNX model to validate", .metavar = "MODEL", .arity = Arity::kOne});
  parser.group("Dataset");
  parser.add({.flags = {"--dataset"}, .help = "Folder of .npy/.npz samples, images or test_data_set_N folders, or an "
                                              "inputs JSON", .metavar = "PATH", .required = true});
  parser.add({.flags = {"--batch-axis"},
              .help = "The .npy/.npz files hold many samples stacked along this axis (each sample keeps it, size 1)",
              .metavar = "AXIS"});
  parser.add({.flags = {"--labels"}, .help = "One integer label per sample and line, in dataset order", .metavar = "FILE"});
  parser.add({.flags = {"--label-output"}, .help = "Output holding the class scores (default: the first)", .metavar = "NAME"});
  parser.add({.flags = {"--skip-bad-samples"}, .help = "Count and list unreadable or mismatched samples instead of failing",
              .arity = Arity::kFlag});
  parser.add({.flags = {"--image-layout"}, .help = "Layout of image feeds (default NCHW)", .metavar = "LAYOUT",
              .choices = {"NCHW", "NHWC", "CHW", "HWC"}});
  parser.add({.flags = {"--channel-order"}, .help = "Channels of image feeds (default RGB)", .metavar = "ORDER",
              .choices = {"RGB", "BGR", "GRAY"}});
  parser.add({.flags = {"--resize"}, .help = "Resize images to HxW (bilinear)", .metavar = "HxW"});
  parser.add({.flags = {"--scale"}, .help = "Pixel scale, applied first (default 1/255)", .metavar = "S"});
  parser.add({.flags = {"--mean"}, .help = "Per-channel mean subtracted after scaling (default 0)", .metavar = "M[,M,M]"});
  parser.add({.flags = {"--std"}, .help = "Per-channel std divided by last (default 1)", .metavar = "S[,S,S]"});
  parser.group("Runners");
  runner_args_.add_list_to(parser, "Runners, comma-separated (default ref); each is compared with the reference");
  parser.add({.flags = {"--reference"}, .help = "The runner the others are compared with (default: the first)",
              .metavar = "RUNNER"});
  parser.add({.flags = {"--reference-outputs"},
              .help = "Compare every runner with stored outputs instead: DIR/<sample>.npz (or .npy), or `dataset` for "
                      "the dataset's own (ONNX test data's output_K.pb)", .metavar = "DIR"});
  parser.add({.flags = {"--nav-format"},
              .help = "With a package (MODEL.nav): the format to validate, e.g. plan-int8 (a plan: a candidate beside "
                      "the package's onnx on --runners) or onnx-fp16 (default onnx)", .metavar = "FORMAT"});
  parser.add({.flags = {"--plan-file"},
              .help = "A plan file (parity convert -o X.plan) validated as one more candidate, \"plan-file\" (the plan "
                      "runner in --runners builds one from MODEL instead)", .metavar = "FILE"});
  compare_args_.add_to(parser);
  parser.group("Metrics");
  parser.add({.flags = {"--top-k"}, .help = "Top-k agreement with the reference (and top-k accuracy) over the last axis",
              .metavar = "K"});
  parser.add({.flags = {"--worst"}, .help = "Worst samples kept per output and runner pair (default 10)", .metavar = "N"});
  parser.group("Scale-out");
  parser.add({.flags = {"--shard"}, .help = "Validate shard I of N only (without MPI); merge with `validate merge`",
              .metavar = "I/N"});
  parser.add({.flags = {"--no-mpi"}, .help = "Ignore an MPI launcher: every process validates its --shard alone",
              .arity = Arity::kFlag});
  parser.group("Output");
  parser.add({.flags = {"--save-summary"}, .help = "Summary JSON (docs/validate.md)", .metavar = "S.json"});
  parser.add({.flags = {"--report"}, .help = "HTML (or JSON) report: error distributions, worst samples, accuracy",
              .metavar = "R.html"});
  parser.add({.flags = {"--resume"}, .help = "Continue from the --save-summary file's checkpoint", .arity = Arity::kFlag});
  parser.add({.flags = {"--checkpoint-every"}, .help = "Write the summary every N samples (default 1000; 0: at the end)",
              .metavar = "N"});
  runner_args_.add_runtime_options_to(parser);
}

ValidateJob ValidateArgs::parse(const options::Args& args) const {
  ValidateJob job;
  ValidateConfig& c = job.config;
  c.model_path = args.get_or("model", "");
  PARITY_CHECK(std::filesystem::exists(c.model_path), kNotFound, "model file '", c.model_path, "' does not exist");
  c.runners = runner_args_.parse_list(args, "ref");
  c.reference = args.get("reference");
  if (c.reference)
    PARITY_CHECK(std::find(c.runners.begin(), c.runners.end(), *c.reference) != c.runners.end(), kInvalidArgument,
                 "--reference '", *c.reference, "' is not one of --runners (", join_names(c.runners), ")");
  c.runner_args = &args;
  c.reference_outputs = args.get("reference_outputs");
  PARITY_CHECK(!c.reference_outputs || !c.reference, kInvalidArgument,
               "--reference and --reference-outputs both name the reference: give one");
  if (c.reference_outputs && *c.reference_outputs != "dataset")
    PARITY_CHECK(std::filesystem::is_directory(*c.reference_outputs), kNotFound, "--reference-outputs: folder '",
                 *c.reference_outputs, "' does not exist");
  c.plan_path = args.get("plan_file");
  job.nav_format = args.get("nav_format");
  PARITY_CHECK(!job.nav_format || std::filesystem::path(c.model_path).extension() == ".nav", kInvalidArgument,
               "--nav-format selects a format of a package: MODEL must be a .nav file");
  if (c.plan_path)
    PARITY_CHECK(std::filesystem::exists(*c.plan_path), kNotFound, "--plan-file: file '", *c.plan_path, "' does not exist");
  const compare::CompareSettings compare = compare_args_.parse(args);
  // The Comparator's group is shared with `run`; validate judges samples with CompareFunc.simple.
  PARITY_CHECK(compare.func == "simple", kInvalidArgument, "--compare ", compare.func,
               ": validate compares with the simple function (its error statistics are what it aggregates)");
  PARITY_CHECK(!compare.check_fp16_range && !compare.validate, kInvalidArgument, compare.validate ? "--validate" : "--check-fp16-range",
               " checks the tensors of one run (parity run); validate counts NaN/inf errors in its summary (\"nonfinite\")");
  c.compare = compare.simple;
  c.fail_fast = compare.fail_fast;
  if (auto k = args.get("top_k")) c.top_k = parse_int(*k, "--top-k");
  PARITY_CHECK(c.top_k >= 0, kInvalidArgument, "--top-k must be positive");
  if (auto n = args.get("worst")) c.worst_count = static_cast<size_t>(std::max<int64_t>(0, parse_int(*n, "--worst")));
  if (auto path = args.get("labels")) {
    c.labels = read_labels(*path);
    c.labels_path = *path;
  }
  c.label_output = args.get("label_output");
  c.skip_bad_samples = args.has("skip_bad_samples");
  if (auto s = args.get("shard")) c.shard = parse_shard(*s);
  c.checkpoint_every = args.get("checkpoint_every") ? parse_int(*args.get("checkpoint_every"), "--checkpoint-every") : 1000;
  job.dataset_path = args.get_or("dataset", "");
  job.dataset.image = parse_image(args);
  if (auto axis = args.get("batch_axis")) job.dataset.batch_axis = parse_int(*axis, "--batch-axis");
  job.summary_path = args.get("save_summary");
  job.report_path = args.get("report");
  if (job.report_path) report::check_report_path(*job.report_path);
  if (job.summary_path) formats::check_writable_location(*job.summary_path);
  job.resume = args.has("resume");
  PARITY_CHECK(!job.resume || job.summary_path, kInvalidArgument, "--resume continues the --save-summary file: give it");
  job.use_mpi = !args.has("no_mpi");
  return job;
}

}  // namespace parity::tools::validation
