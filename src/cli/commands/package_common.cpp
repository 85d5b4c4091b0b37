#include "cli/commands/package_common.h"

#include <unistd.h>

#include <fmt/format.h>

#include "core/logger.h"
#include "core/status.h"
#include "core/text.h"

namespace parity::cli::package_cli {

namespace fs = std::filesystem;
namespace nav = tools::navigator;

OpenedPackage::OpenedPackage(const std::string& path) : path_(path) {
  PARITY_CHECK(fs::exists(path_), kNotFound, "the package ", path, " does not exist");
  if (fs::is_directory(path_)) {
    descriptor_ = std::make_unique<nav::PackageDescriptor>(path_);
    return;
  }
  std::string tmpl = (fs::temp_directory_path() / "parity-nav-XXXXXX").string();
  PARITY_CHECK(::mkdtemp(tmpl.data()), kIo, "cannot create a temporary folder to unpack ", path);
  temp_ = fs::path(tmpl) / "workspace";
  nav::unpack_package(path_, temp_);
  descriptor_ = std::make_unique<nav::PackageDescriptor>(temp_);
}

OpenedPackage::~OpenedPackage() {
  if (temp_.empty()) return;
  std::error_code ec;
  fs::remove_all(temp_.parent_path(), ec);
}

void OpenedPackage::write_back() {
  if (temp_.empty()) return;
  // Keep samples when the package had them (a --no-data package stays without).
  const bool has_data = fs::exists(temp_ / "model_input");
  descriptor_->save(path_, {.keep_data = has_data, .override = true});
}

void print_status_table(const nav::WorkspaceStatus& status) {
  fmt::print("{:<16} {:<8} {:<11} {:<11} {:<11} {:<9} {:>12} {:>12}\n", "format", "runtime", "conversion",
             "correctness", "performance", "verified", "p50 ms (b1)", "max thr/s");
  for (const auto& format : status.formats) {
    if (format.runtimes.empty() || !format.export_step.ok()) {
      fmt::print("{:<16} {:<8} export {}{}\n", format.format, "-", nav::step_state_name(format.export_step.state),
                 format.export_step.reason.empty() ? "" : ": " + format.export_step.reason);
      continue;
    }
    for (const auto& runtime : format.runtimes) {
      auto state = [&](const char* step) {
        const nav::StepResult* s = runtime.find_step(step);
        return std::string(nav::step_state_name(s ? s->state : nav::StepState::kNotRun));
      };
      std::string p50 = "-", throughput = "-";
      if (const nav::StepResult* perf = runtime.find_step("performance"); perf && !perf->performance.empty()) {
        p50 = fmt::format("{:.3f}", perf->performance.front().p50_ms);
        double best = 0;
        for (const auto& row : perf->performance) best = std::max(best, row.throughput);
        throughput = fmt::format("{:.1f}", best);
      }
      fmt::print("{:<16} {:<8} {:<11} {:<11} {:<11} {:<9} {:>12} {:>12}\n", format.format, runtime.runtime,
                 state("conversion"), state("correctness"), state("performance"), runtime.verified() ? "yes" : "no", p50,
                 throughput);
      for (const char* step : {"conversion", "correctness", "performance"})
        if (const nav::StepResult* s = runtime.find_step(step); s && s->state == nav::StepState::kFail)
          fmt::print("    {} {}: {}\n", step, nav::step_state_name(s->state), s->reason);
    }
  }
  std::fflush(stdout);
}

void add_profiler_overrides(options::ArgParser& parser) {
  parser.group("Profiling");
  parser.add({.flags = {"--measurement-mode"}, .help = "time_windows or count_windows", .metavar = "MODE",
              .choices = {"time_windows", "count_windows"}});
  parser.add({.flags = {"--window-ms"}, .help = "Length of a time window", .metavar = "MS"});
  parser.add({.flags = {"--window-count"}, .help = "Inferences of a count window", .metavar = "N"});
  parser.add({.flags = {"--stability-percentage"}, .help = "The last 3 windows must agree within this", .metavar = "PCT"});
  parser.add({.flags = {"--max-trials"}, .help = "Windows per batch size before a result is flagged unstable", .metavar = "N"});
  parser.add({.flags = {"--max-batch-size"}, .help = "Largest batch size to profile", .metavar = "N"});
  parser.add({.flags = {"--throughput-cutoff"}, .help = "Relative throughput gain below which a larger batch saturates",
              .metavar = "F"});
}

nav::ProfileOptions profiler_overrides(const options::Args& args) {
  nav::ProfileOptions options;
  options.measurement_mode = args.get("measurement_mode");
  if (auto v = args.get("window_ms")) options.window_ms = parse_int(*v, "--window-ms");
  if (auto v = args.get("window_count")) options.window_count = parse_int(*v, "--window-count");
  if (auto v = args.get("stability_percentage")) options.stability_percentage = parse_double(*v, "--stability-percentage");
  if (auto v = args.get("max_trials")) options.max_trials = static_cast<int>(parse_int(*v, "--max-trials"));
  if (auto v = args.get("max_batch_size")) options.max_batch_size = parse_int(*v, "--max-batch-size");
  if (auto v = args.get("throughput_cutoff")) options.throughput_cutoff = parse_double(*v, "--throughput-cutoff");
  options.quiet = !logger().enabled(Severity::kInfo);
  return options;
}

}  // namespace parity::cli::package_cli
