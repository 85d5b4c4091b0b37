// `parity bench --concurrent N`: throughput of one ref Session shared by N threads, each run on 1
// kernel thread (runtime/session.h: concurrent runs of one Session), the way a server embeds it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runners/registry.h"
#include "tools/bench/schedule.h"

namespace parity::tools::bench {

/// One model with `threads` threads sharing its Session.
struct ThroughputRow {
  std::string model;  // as given
  std::string label;  // file stem
  int threads = 1;
  std::string unavailable;             // non-empty: why there is no figure
  std::vector<double> per_second;      // inferences per second of each timed round
  /// Process CPU time (all threads) per inference of each round: equal at every count when
  /// sharing the Session costs nothing, whatever else the machine runs.
  std::vector<double> cpu_seconds_per_inference;
  double median_per_second() const;    // 0 without rounds
};

/// Rounds of timing per thread count: the counts alternate round by round, so load from other
/// processes hits all of them alike, and the median of the rounds is reported.
inline constexpr int kThroughputRounds = 3;

/// Times `model` on one ref Session (the ref runner's options from `args`, 1 kernel thread) shared
/// by each count of settings.concurrent and by 1 thread, the baseline: one row per count, in
/// ascending order. Each round lets every thread run until settings.min_time seconds passed and
/// it made settings.iterations runs, and counts every thread's runs over the round's wall time.
std::vector<ThroughputRow> bench_throughput(const std::string& model, Settings& settings,
                                            const runners::RunnerOptions& runner_options);

/// The throughput table: inferences per second per thread count, and the gain over 1 thread.
std::string throughput_text(const std::vector<ThroughputRow>& rows);
/// The same figures, with every round, for the JSON report.
nlohmann::ordered_json throughput_json(const std::vector<ThroughputRow>& rows);

}  // namespace parity::tools::bench
