// run_validate_job: the whole `parity validate` run around tools::validate() — MPI, checkpoints
// and resume, the summary, the report and the log lines.
#include <unistd.h>

#include <filesystem>
#include <random>

#include "core/formats/file_io.h"
#include "core/logger.h"
#include "core/stats.h"
#include "runtime/plan/plan_file.h"
#include "runtime/session.h"
#include "tools/navigator/formats.h"
#include "tools/navigator/package.h"
#include "tools/navigator/samples.h"
#include "tools/report/report.h"
#include "tools/report/validate_report.h"
#include "tools/validate/summary.h"
#include "tools/validate/validate_args.h"

namespace parity::tools::validation {
namespace {

std::string g(double v) { return format_g(v, 5); }

std::string percent(int64_t num, int64_t den) { return den ? format_g(100.0 * num / den, 4) + "%" : "-"; }

void write_summary(const std::string& path, const SummaryJson& summary) {
  formats::write_binary_file(path, summary.dump(2) + "\n");
}

// What the summary says, for people: one line per output and runner pair, accuracy, the worst sample.
void log_summary(const SummaryJson& s) {
  const auto& n = s["samples"];
  logger().info("Samples: ", n["validated"].get<int64_t>(), " validated, ", n["passed"].get<int64_t>(), " passed, ",
                n["failed"].get<int64_t>(), " failed, ", n["skipped"].get<int64_t>(), " skipped");
  for (const auto& pair : s["comparisons"])
    for (const auto& o : pair["outputs"]) {
      const auto& a = o["abs_error"];
      const auto& r = o["rel_error"];
      std::string line = str_cat(pair["candidate"].get<std::string>(), " vs ", pair["reference"].get<std::string>(), " | ",
                                 o["name"].get<std::string>(), " | passed ",
                                 percent(o["samples_passed"].get<int64_t>(), o["samples"].get<int64_t>()), " | abs max ",
                                 g(a["max"]), " mean ", g(a["mean"]), " p99 ", g(a["p99"]), " | rel max ", g(r["max"]),
                                 " p99 ", g(r["p99"]));
      if (o.contains("top_k"))
        line += str_cat(" | top-1 agreement ", format_g(100 * o["top_k"]["top1_agreement"].get<double>(), 4), "%");
      logger().info(line);
      if (!o["worst"].empty() && !o["worst"][0]["rerun"].is_null())
        logger().info("    worst: ", o["worst"][0]["sample"].get<std::string>(), ": ",
                      o["worst"][0]["rerun"].get<std::string>());
    }
  if (s.contains("accuracy"))
    for (const auto& r : s["accuracy"]["runners"])
      logger().info("Accuracy ", r["runner"].get<std::string>(), ": top-1 ", format_g(100 * r["top1"].get<double>(), 4),
                    "%, top-k ", format_g(100 * r["topk"].get<double>(), 4), "%");
}

// Where this process keeps its checkpoint: the summary itself, or one file per MPI rank.
std::string checkpoint_path(const std::string& summary, const Collective* collective) {
  if (!collective || collective->size() <= 1) return summary;
  return str_cat(summary, ".rank", collective->rank(), "-of-", collective->size());
}

std::optional<ValidationState> resumed_state(const std::string& path, const SummaryInfo& info) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    logger().info("Nothing to resume: ", path, " does not exist yet");
    return std::nullopt;
  }
  auto [old, state] = read_summary(path);
  formats::forget_input(path);  // read to be continued, so it may be written again
  PARITY_CHECK(old.dataset == info.dataset && old.settings == info.settings && old.model == info.model,
               kInvalidArgument, "--resume: '", path, "' was made with another model, dataset or settings");
  return state;
}

// A navigator package unpacked for the run (each process its own copy), removed afterwards.
class UnpackedPackage {
 public:
  explicit UnpackedPackage(const std::string& package) {
    std::random_device random;
    dir_ = std::filesystem::temp_directory_path() / str_cat("parity-validate-", getpid(), "-", random());
    navigator::unpack_package(package, dir_);
  }
  ~UnpackedPackage() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  UnpackedPackage(const UnpackedPackage&) = delete;
  UnpackedPackage& operator=(const UnpackedPackage&) = delete;
  std::filesystem::path model(const std::string& format) const { return navigator::PackageDescriptor(dir_).get_model(format); }

 private:
  std::filesystem::path dir_;
};

// MODEL.nav: the run uses the unpacked format's model; the summary names the package and format.
std::unique_ptr<UnpackedPackage> open_package(ValidateJob& job, std::string& model_label) {
  model_label = job.config.model_path;
  if (std::filesystem::path(job.config.model_path).extension() != ".nav") return nullptr;
  auto package = std::make_unique<UnpackedPackage>(job.config.model_path);
  const std::string format = job.nav_format.value_or("onnx");
  if (navigator::format_info(format).kind == navigator::FormatKind::kPlan) {
    job.config.plan_path = package->model(format).string();
    job.config.plan_label = job.config.model_path + ":" + format;
    job.config.plan_name = format;
    job.config.model_path = package->model("onnx").string();
  } else {
    if (format != "onnx") model_label += ":" + format;
    job.config.model_path = package->model(format).string();
  }
  return package;
}

}  // namespace

bool run_validate_job(ValidateJob job) {
  std::unique_ptr<Collective> collective;
  if (job.use_mpi && launched_by_mpi()) {
    auto opened = open_mpi_collective();
    PARITY_CHECK(opened, kUnavailable, "started by an MPI launcher but MPI is unavailable: ",
                 opened ? std::string() : opened.error().what(), " (install libopenmpi-dev and rebuild, or pass --no-mpi)");
    collective = std::move(opened).value();
    if (collective->rank() != 0) logger().set_severity(Severity::kWarning);
  }
  std::string model_label;
  const auto package = open_package(job, model_label);
  if (runtime::plan::is_plan_file(job.config.model_path)) {
    // A plan declares its inputs to the runtime that loads it.
    auto session = runtime::Session::create(job.config.model_path).value();
    job.dataset.inputs = session.input_metadata();
    job.config.model_outputs = session.output_metadata();
  } else {
    const auto io = navigator::read_onnx_io(job.config.model_path);
    job.dataset.inputs = io.inputs;
    job.config.model_outputs = io.outputs;
  }
  const auto dataset = open_dataset(job.dataset_path, job.dataset);
  const bool distributed = collective && collective->size() > 1;
  SummaryInfo info;
  info.model = model_label;
  info.dataset = dataset_json(job.dataset_path, *dataset);
  info.settings = settings_json(job.config);
  info.shard_index = distributed ? collective->rank() : job.config.shard.index;
  info.shard_count = distributed ? collective->size() : job.config.shard.count;
  logger().info("Validating ", job.config.model_path, " on ", dataset->size(), " samples (", dataset->kind(), ") with ",
                join_names(job.config.runners), distributed ? str_cat(" on ", collective->size(), " MPI ranks") : "");

  std::optional<std::string> checkpoint;
  if (job.summary_path) checkpoint = checkpoint_path(*job.summary_path, collective.get());
  if (job.resume) job.config.resume = resumed_state(*checkpoint, info);
  if (checkpoint && job.config.checkpoint_every > 0)
    job.config.checkpoint = [&](const ValidationState& state) { write_summary(*checkpoint, make_summary(info, state)); };

  ValidateResult result = validate(job.config, *dataset, collective.get());
  if (!result.root) return true;
  info.shard_index = distributed ? 0 : info.shard_index;
  info.shard_count = distributed ? 1 : info.shard_count;
  info.ranks = result.ranks;
  info.wall_seconds = result.wall_seconds;
  if (job.summary_path)
    save_worst_samples(result.state, *dataset,
                       (std::filesystem::path(*job.summary_path).parent_path() /
                        (std::filesystem::path(*job.summary_path).stem().string() + ".samples")).string());
  const SummaryJson summary = make_summary(info, result.state);
  log_summary(summary);
  if (job.summary_path) {
    write_summary(*job.summary_path, summary);
    logger().info("Wrote summary ", *job.summary_path);
    if (distributed)
      for (int r = 0; r < collective->size(); ++r) {
        std::error_code ec;
        std::filesystem::remove(str_cat(*job.summary_path, ".rank", r, "-of-", collective->size()), ec);
      }
  }
  if (job.report_path) {
    report::Report report("parity validate: " + std::filesystem::path(job.config.model_path).filename().string(),
                          job.command_line);
    report.add_section(report::validate_section(summary));
    report.write(*job.report_path);
    logger().info("Wrote report ", *job.report_path);
  }
  return summary["passed"].get<bool>();
}

}  // namespace parity::tools::validation
