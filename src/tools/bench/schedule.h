// `parity bench`'s schedule: times several runners on the same model and feed in one process.
// Fairness rules: every runner of a row gets the same generated feed and the same thread count;
// timed iterations alternate between runners (round k starts with runner k mod n), so load from
// other processes and thermal drift hit all runners alike instead of whichever ran last.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/metadata.h"
#include "core/tensor_map.h"
#include "runners/registry.h"
#include "options/data_loader_args.h"

namespace parity::tools::bench {

/// What the bench command's options say.
struct Settings {
  std::vector<std::string> models;
  std::vector<std::string> runners;
  std::vector<int> threads;
  int64_t iterations = 10;  // minimum timed rounds per row
  int64_t warm_up = 2;      // untimed runs per runner (at least one runs, checking the feed)
  double min_time = 1.0;    // seconds of timing per row at least (--min-time, or trtexec's --duration)
  /// --percentile: latency percentiles reported per runner besides the median and p10-p90.
  std::vector<double> percentiles;
  /// The measured sgemm ceiling per thread count (GFLOP/s), filled before the rows are timed.
  std::map<int, double> sgemm_gflops;
  options::DataLoaderOptions data;
  /// Per data.input_shapes item: whether some model took it (unused ones get a warning).
  std::vector<bool> shape_used;
  bool profile = false;
  int64_t profile_top = 8;
  /// --concurrent: counts of threads that share one ref Session (1 kernel thread each) for the
  /// throughput table (tools/bench/throughput.h); empty: no throughput table.
  std::vector<int> concurrent;
  /// --isa: the cap on ref's vector kernels and oneDNN ("native": none).
  std::string isa = "native";
  int64_t seed() const { return data.seed.value_or(1); }
};

/// Where a ref run spends its time, by operator type (from the session's per-node profile).
struct OpTime {
  std::string op_type;
  int nodes = 0;
  double seconds = 0.0;  // per run
};

/// One node's time in a --profile run, with what tells its kernel apart.
struct NodeTime {
  std::string op_type;
  std::string name;
  std::string detail;        // "k3x3 s2 g32" for convolutions and pooling
  std::string output_shape;  // "1x32x112x112"
  double seconds = 0.0;      // per run
};

/// numpy.percentile's default (linear interpolation between closest ranks) on sorted samples.
double percentile(const std::vector<double>& sorted, double q);

/// One runner's figures in a row.
struct RunnerCell {
  std::string runner;
  std::string unavailable;      // non-empty: why this runner has no figure
  std::vector<double> samples;  // seconds, sorted once timing is done
  double cpu_seconds = 0.0;     // process CPU time (all threads) during the timed runs
  double median() const { return percentile(samples, 50); }
};

/// One model at one thread count.
struct Row {
  std::string model;  // as given
  std::string label;  // file stem
  int threads = 1;
  std::string inputs;  // "x 1x3x224x224"
  std::vector<RunnerCell> cells;
  int rounds = 0;
  /// FLOPs of one run counted from the graph (model/cost.h, 2 per MAC), at the fed shapes; 0 when
  /// the model could not be counted.
  double flops = 0.0;
  std::vector<OpTime> ref_profile;  // with --profile, slowest first
  std::vector<NodeTime> ref_nodes;  // with --profile, slowest first
  double ref_profile_total = 0.0;   // seconds per profiled run
  /// The cell of `runner` when it has figures.
  const RunnerCell* cell(const std::string& runner) const;
};

/// A runner's achieved GFLOP/s on a row (the row's FLOPs over its median), when it has figures.
std::optional<double> achieved_gflops(const Row& row, const std::string& runner);

/// ref's median over ort's, when both have figures.
std::optional<double> ref_over_ort(const Row& row);

/// The feed every runner of a row gets: the data-loader options' shapes and value ranges that
/// name inputs of `model`, seeded. Marks the input shapes it used in settings.shape_used.
TensorMap bench_feed(const std::string& model, const TensorMetadata& metadata, Settings& settings);

/// The same options with `threads` for every runner (RunnerInfo::set_threads: ref's kernel
/// threads, ORT's intra-op threads with one inter-op thread, OpenCV's and LibTorch's threads).
runners::RunnerOptions options_for_threads(runners::RunnerOptions options, int threads);

/// Times every runner of `settings` on `model` at `threads` threads, with the runtimes' own
/// options; runners that cannot load or run the model get a reason instead of figures. Marks
/// the input shapes it used in settings.shape_used.
Row bench_row(const std::string& model, int threads, Settings& settings, const runners::RunnerOptions& runner_options);

}  // namespace parity::tools::bench
