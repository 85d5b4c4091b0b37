// The navigator's performance step: latency percentiles and throughput of a runner per batch size,
// measured in windows until the last windows agree (perf_analyzer's stability rule), with batch
// sizes growing until the maximum or until throughput saturates.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/tensor_map.h"
#include "tools/navigator/status.h"

namespace parity::tools::navigator {

/// How to measure (Model Navigator's ProfilerConfig).
struct ProfilerConfig {
  bool count_windows = false;     // windows of `window_count` inferences instead of `window_ms`
  int64_t window_ms = 500;
  int64_t window_count = 50;
  double stability_percentage = 10;  // the last windows' latency and throughput within this of their mean
  int max_trials = 10;               // windows per batch size before giving up on stability
  double throughput_cutoff = 0.05;   // a batch size must add this much throughput (relative) or saturation is declared
  std::vector<int64_t> batch_sizes;  // in increasing order
  static ProfilerConfig from(const NavigatorConfig& config);
};

/// Batch sizes 1, 2, 4, ... up to max_batch_size (included).
std::vector<int64_t> batch_sizes_up_to(int64_t max_batch_size);

/// One inference of a batch; returns its latency in seconds.
using TimedInference = std::function<double(int64_t batch_size)>;

/// Profiles `infer` at every batch size of the config (stopping after saturation). Results that
/// never stabilise are reported with stable = false, not as a failure.
StepResult profile(const TimedInference& infer, const ProfilerConfig& config);

/// p-th percentile (0..100) of `values` by linear interpolation (numpy's default).
double percentile(std::vector<double> values, double p);

}  // namespace parity::tools::navigator
