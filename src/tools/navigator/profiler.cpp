#include "tools/navigator/profiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace parity::tools::navigator {

namespace {

// perf_analyzer judges stability over the last three windows.
constexpr size_t kStableWindows = 3;

struct Window {
  std::vector<double> latencies;  // seconds
  // Time spent in inference: one stream runs inferences back to back, so this is the window's
  // busy time (the loop's own overhead left out, which also makes the rule testable).
  double seconds = 0;
  double mean() const { return std::accumulate(latencies.begin(), latencies.end(), 0.0) / latencies.size(); }
  double inferences_per_second() const { return seconds > 0 ? latencies.size() / seconds : 0; }
};

Window run_window(const TimedInference& infer, int64_t batch_size, const ProfilerConfig& config) {
  Window window;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    window.latencies.push_back(infer(batch_size));
    window.seconds += window.latencies.back();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (config.count_windows ? static_cast<int64_t>(window.latencies.size()) >= config.window_count
                             : elapsed * 1000 >= config.window_ms)
      break;
  }
  return window;
}

bool within(const std::vector<double>& values, double percentage) {
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / values.size();
  if (mean == 0) return true;
  for (double v : values)
    if (std::abs(v - mean) > mean * percentage / 100) return false;
  return true;
}

bool stable(const std::vector<Window>& windows, double percentage) {
  if (windows.size() < kStableWindows) return false;
  std::vector<double> latency, throughput;
  for (size_t i = windows.size() - kStableWindows; i < windows.size(); ++i) {
    latency.push_back(windows[i].mean());
    throughput.push_back(windows[i].inferences_per_second());
  }
  return within(latency, percentage) && within(throughput, percentage);
}

BatchPerformance measure_batch(const TimedInference& infer, int64_t batch_size, const ProfilerConfig& config) {
  infer(batch_size);  // warm-up: first runs allocate and pack
  std::vector<Window> windows;
  BatchPerformance result;
  result.batch_size = batch_size;
  while (static_cast<int>(windows.size()) < std::max(config.max_trials, 1)) {
    windows.push_back(run_window(infer, batch_size, config));
    if (stable(windows, config.stability_percentage)) {
      result.stable = true;
      break;
    }
  }
  result.trials = static_cast<int>(windows.size());
  const size_t first = windows.size() > kStableWindows ? windows.size() - kStableWindows : 0;
  std::vector<double> ms;
  double seconds = 0;
  for (size_t i = first; i < windows.size(); ++i) {
    for (double l : windows[i].latencies) ms.push_back(l * 1000);
    seconds += windows[i].seconds;
  }
  result.inferences = static_cast<int64_t>(ms.size());
  result.avg_ms = std::accumulate(ms.begin(), ms.end(), 0.0) / ms.size();
  result.p50_ms = percentile(ms, 50);
  result.p90_ms = percentile(ms, 90);
  result.p95_ms = percentile(ms, 95);
  result.p99_ms = percentile(ms, 99);
  result.throughput = seconds > 0 ? static_cast<double>(ms.size()) * batch_size / seconds : 0;
  return result;
}

}  // namespace

ProfilerConfig ProfilerConfig::from(const NavigatorConfig& config) {
  ProfilerConfig p;
  p.count_windows = config.measurement_mode == "count_windows";
  p.window_ms = config.window_ms;
  p.window_count = config.window_count;
  p.stability_percentage = config.stability_percentage;
  p.max_trials = config.max_trials;
  p.throughput_cutoff = config.throughput_cutoff;
  p.batch_sizes = batch_sizes_up_to(config.batch_dim ? config.max_batch_size : 1);
  return p;
}

std::vector<int64_t> batch_sizes_up_to(int64_t max_batch_size) {
  std::vector<int64_t> sizes;
  for (int64_t b = 1; b < max_batch_size; b *= 2) sizes.push_back(b);
  sizes.push_back(std::max<int64_t>(max_batch_size, 1));
  return sizes;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = p / 100 * (values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (rank - lo);
}

StepResult profile(const TimedInference& infer, const ProfilerConfig& config) {
  StepResult result;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t batch_size : config.batch_sizes) {
    BatchPerformance row = measure_batch(infer, batch_size, config);
    if (!result.performance.empty()) {
      // Copies, not references: the push_back below may move the vector's elements.
      const double previous_throughput = result.performance.back().throughput;
      const int64_t previous_batch_size = result.performance.back().batch_size;
      if (row.throughput < previous_throughput * (1 + config.throughput_cutoff)) {
        result.performance.push_back(row);
        result.saturated_at = previous_batch_size;
        break;
      }
    }
    result.performance.push_back(row);
  }
  result.state = StepState::kOk;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace parity::tools::navigator
