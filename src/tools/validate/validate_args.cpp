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

Shape parse_resize(const std::string& size, const std::string& flag) {
  const Shape hw = parse_shape(size, flag);
  PARITY_CHECK(hw.size() == 2 && hw[0] > 0 && hw[1] > 0, kInvalidArgument, "--resize: expected HxW (e.g. 224x224), got '",
               size, "'");
  return hw;
}

// The checks across options and of the files they name, in the order a command line reads them.
void check_job(ValidateJob& job) {
  ValidateConfig& c = job.config;
  if (c.reference)
    PARITY_CHECK(std::find(c.runners.begin(), c.runners.end(), *c.reference) != c.runners.end(), kInvalidArgument,
                 "--reference '", *c.reference, "' is not one of --runners (", join_names(c.runners), ")");
  PARITY_CHECK(!c.reference_outputs || !c.reference, kInvalidArgument,
               "--reference and --reference-outputs both name the reference: give one");
  if (c.reference_outputs && *c.reference_outputs != "dataset")
    PARITY_CHECK(std::filesystem::is_directory(*c.reference_outputs), kNotFound, "--reference-outputs: folder '",
                 *c.reference_outputs, "' does not exist");
  PARITY_CHECK(!job.nav_format || std::filesystem::path(c.model_path).extension() == ".nav", kInvalidArgument,
               "--nav-format selects a format of a package: MODEL must be a .nav file");
  if (c.plan_path)
    PARITY_CHECK(std::filesystem::exists(*c.plan_path), kNotFound, "--plan-file: file '", *c.plan_path, "' does not exist");
  const compare::CompareSettings& compare = job.compare;
  // The Comparator's group is shared with `run`; validate judges samples with CompareFunc.simple.
  PARITY_CHECK(compare.func == "simple", kInvalidArgument, "--compare ", compare.func,
               ": validate compares with the simple function (its error statistics are what it aggregates)");
  PARITY_CHECK(!compare.check_fp16_range && !compare.validate, kInvalidArgument, compare.validate ? "--validate" : "--check-fp16-range",
               " checks the tensors of one run (parity run); validate counts NaN/inf errors in its summary (\"nonfinite\")");
  c.compare = compare.simple;
  c.fail_fast = compare.fail_fast;
  PARITY_CHECK(c.top_k >= 0, kInvalidArgument, "--top-k must be positive");
  if (!c.labels_path.empty()) c.labels = read_labels(c.labels_path);
  if (job.report_path) report::check_report_path(*job.report_path);
  if (job.summary_path) formats::check_writable_location(*job.summary_path);
  PARITY_CHECK(!job.resume || job.summary_path, kInvalidArgument, "--resume continues the --save-summary file: give it");
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

ValidateArgs::ValidateArgs() {
  using options::Given;
  using J = ValidateJob;
  add({.flags = {}, .dest = "model", .help = "ONNX model to validate", .metavar = "MODEL", .arity = Arity::kOne},
      [](J& job, const Given& given) {
        job.config.model_path = given.value().value_or("");
        PARITY_CHECK(std::filesystem::exists(job.config.model_path), kNotFound, "model file '", job.config.model_path,
                     "' does not exist");
      });
  section("Dataset");
  add({.flags = {"--dataset"}, .help = "Folder of .npy/.npz samples, images or test_data_set_N folders, or an "
                                       "inputs JSON", .metavar = "PATH", .required = true},
      options::field(&J::dataset_path));
  add({.flags = {"--batch-axis"},
       .help = "The .npy/.npz files hold many samples stacked along this axis (each sample keeps it, size 1)",
       .metavar = "AXIS"},
      [](J& job, const Given& given) {
        if (auto axis = given.value()) job.dataset.batch_axis = parse_int(*axis, given.flag);
      });
  add({.flags = {"--labels"}, .help = "One integer label per sample and line, in dataset order", .metavar = "FILE"},
      [](J& job, const Given& given) { job.config.labels_path = given.value().value_or(""); });
  add({.flags = {"--label-output"}, .help = "Output holding the class scores (default: the first)", .metavar = "NAME"},
      [](J& job, const Given& given) { job.config.label_output = given.value(); });
  add({.flags = {"--skip-bad-samples"}, .help = "Count and list unreadable or mismatched samples instead of failing",
       .arity = Arity::kFlag},
      [](J& job, const Given& given) { job.config.skip_bad_samples = given.given(); });
  add({.flags = {"--image-layout"}, .help = "Layout of image feeds (default NCHW)", .metavar = "LAYOUT",
       .choices = {"NCHW", "NHWC", "CHW", "HWC"}},
      [](J& job, const Given& given) {
        if (auto v = given.value()) job.dataset.image.layout = *v;
      });
  add({.flags = {"--channel-order"}, .help = "Channels of image feeds (default RGB)", .metavar = "ORDER",
       .choices = {"RGB", "BGR", "GRAY"}},
      [](J& job, const Given& given) {
        if (auto v = given.value()) job.dataset.image.channel_order = *v;
      });
  add({.flags = {"--resize"}, .help = "Resize images to HxW (bilinear)", .metavar = "HxW"},
      [](J& job, const Given& given) {
        if (auto v = given.value()) {
          const Shape hw = parse_resize(*v, given.flag);
          job.dataset.image.resize = std::pair{hw[0], hw[1]};
        }
      });
  add({.flags = {"--scale"}, .help = "Pixel scale, applied first (default 1/255)", .metavar = "S"},
      [](J& job, const Given& given) {
        if (auto v = given.value()) job.dataset.image.scale = parse_double(*v, given.flag);
      });
  add({.flags = {"--mean"}, .help = "Per-channel mean subtracted after scaling (default 0)", .metavar = "M[,M,M]"},
      [](J& job, const Given& given) {
        if (auto v = given.value()) job.dataset.image.mean = parse_doubles(*v, given.flag);
      });
  add({.flags = {"--std"}, .help = "Per-channel std divided by last (default 1)", .metavar = "S[,S,S]"},
      [](J& job, const Given& given) {
        if (auto v = given.value()) job.dataset.image.std = parse_doubles(*v, given.flag);
      });
  section("Runners");
  add(runners::RunnerArgs::list_spec("Runners, comma-separated (default ref); each is compared with the reference"),
      [](J& job, const Given& given) {
        job.config.runners = runners::RunnerArgs::runner_list(given.given() ? given.values : std::vector<std::string>{"ref"});
      });
  add({.flags = {"--reference"}, .help = "The runner the others are compared with (default: the first)",
       .metavar = "RUNNER"},
      [](J& job, const Given& given) { job.config.reference = given.value(); });
  add({.flags = {"--reference-outputs"},
       .help = "Compare every runner with stored outputs instead: DIR/<sample>.npz (or .npy), or `dataset` for "
               "the dataset's own (ONNX test data's output_K.pb)", .metavar = "DIR"},
      [](J& job, const Given& given) { job.config.reference_outputs = given.value(); });
  add({.flags = {"--nav-format"},
       .help = "With a package (MODEL.nav): the format to validate, e.g. plan-int8 (a plan: a candidate beside "
               "the package's onnx on --runners) or onnx-fp16 (default onnx)", .metavar = "FORMAT"},
      options::field(&J::nav_format));
  add({.flags = {"--plan-file"},
       .help = "A plan file (parity convert -o X.plan) validated as one more candidate, \"plan-file\" (the plan "
               "runner in --runners builds one from MODEL instead)", .metavar = "FILE"},
      [](J& job, const Given& given) { job.config.plan_path = given.value(); });
  include(compare::ComparatorCompareArgs(), &J::compare);
  section("Metrics");
  add({.flags = {"--top-k"}, .help = "Top-k agreement with the reference (and top-k accuracy) over the last axis",
       .metavar = "K"},
      [](J& job, const Given& given) {
        if (auto k = given.value()) job.config.top_k = parse_int(*k, given.flag);
      });
  add({.flags = {"--worst"}, .help = "Worst samples kept per output and runner pair (default 10)", .metavar = "N"},
      [](J& job, const Given& given) {
        if (auto n = given.value())
          job.config.worst_count = static_cast<size_t>(std::max<int64_t>(0, parse_int(*n, given.flag)));
      });
  section("Scale-out");
  add({.flags = {"--shard"}, .help = "Validate shard I of N only (without MPI); merge with `validate merge`",
       .metavar = "I/N"},
      [](J& job, const Given& given) {
        if (auto v = given.value()) job.config.shard = parse_shard(*v);
      });
  add({.flags = {"--no-mpi"}, .help = "Ignore an MPI launcher: every process validates its --shard alone",
       .arity = Arity::kFlag},
      [](J& job, const Given& given) { job.use_mpi = !given.given(); });
  section("Output");
  add({.flags = {"--save-summary"}, .help = "Summary JSON (docs/validate.md)", .metavar = "S.json"},
      options::field(&J::summary_path));
  add({.flags = {"--report"}, .help = "HTML (or JSON) report: error distributions, worst samples, accuracy",
       .metavar = "R.html"},
      options::field(&J::report_path));
  add({.flags = {"--resume"}, .help = "Continue from the --save-summary file's checkpoint", .arity = Arity::kFlag},
      options::field(&J::resume));
  add({.flags = {"--checkpoint-every"}, .help = "Write the summary every N samples (default 1000; 0: at the end)",
       .metavar = "N"},
      [](J& job, const Given& given) {
        job.config.checkpoint_every = given.value() ? parse_int(*given.value(), given.flag) : 1000;
      });
  check(check_job);
}

}  // namespace parity::tools::validation
