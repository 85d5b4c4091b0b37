// What a validation has gathered so far, as exactly mergeable parts: counts, maxima, exact sums
// and fixed-bin histograms, bounded lists of the worst samples, and the sample indices done.
// Merging the states of disjoint shards in any order gives the state of one process that did them
// all, bit for bit, which is what lets ranks, shards and resumed runs report one summary.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/validate/error_histogram.h"
#include "tools/validate/exact_sum.h"

namespace parity::tools::validation {

/// Sample indices as disjoint, sorted [begin, end) ranges.
class IndexRanges {
 public:
  void add(int64_t begin, int64_t end);
  void merge(const IndexRanges& other);
  bool contains(int64_t index) const;
  int64_t count() const;
  bool overlaps(const IndexRanges& other) const;
  const std::vector<std::pair<int64_t, int64_t>>& ranges() const { return ranges_; }
  nlohmann::json to_json() const;
  static IndexRanges from_json(const nlohmann::json& j);
  bool operator==(const IndexRanges& other) const = default;

 private:
  std::vector<std::pair<int64_t, int64_t>> ranges_;
};

/// A distribution over elements: count, maximum, exact sum and histogram.
struct ErrorAccumulator {
  double max = 0;
  ExactSum sum;
  ErrorHistogram histogram;
  void add(double value);
  void merge(const ErrorAccumulator& other);
  double mean() const;
  nlohmann::json to_json() const;
  static ErrorAccumulator from_json(const nlohmann::json& j);
};

/// One figure per sample, summarized over the samples: maximum and mean of the finite ones.
struct SampleFigure {
  int64_t count = 0;      // finite values
  int64_t nonfinite = 0;  // NaN or infinite values
  double max = 0;
  ExactSum sum;
  void add(double value);
  void merge(const SampleFigure& other);
  nlohmann::json to_json() const;
  static SampleFigure from_json(const nlohmann::json& j);
};

struct WorstSample {
  int64_t index = 0;
  std::string name;
  double max_absdiff = 0, max_reldiff = 0, mean_absdiff = 0;
  bool passed = false;
  std::string inputs;  // a file `parity run --load-inputs` reads as this sample; empty when there is none
};

/// One output of one runner pair (candidate against reference).
struct OutputState {
  ErrorAccumulator abs, rel;
  int64_t samples = 0, samples_passed = 0;
  /// Per-sample figures by name: max_absdiff, mean_absdiff, max_reldiff, the trtexec norms (l0_fraction,
  /// l1_rel, l2_rel, linf_rel) and cosine_distance.
  std::map<std::string, SampleFigure> per_sample;
  // Top-k agreement over rows (the last axis holds the scores).
  int64_t topk_rows = 0, top1_agree = 0, topk_overlap = 0;
  std::vector<WorstSample> worst;  // worst first (max_absdiff, then index), at most the state's worst_limit

  void merge(const OutputState& other, size_t worst_limit);
  void add_worst(WorstSample sample, size_t worst_limit);
};

struct PairState {
  std::string reference, candidate;
  std::vector<std::pair<std::string, OutputState>> outputs;  // in the reference's output order
  OutputState& output(const std::string& name);
};

/// Accuracy against labels of one runner: top-1 and top-k hits.
struct LabelHits {
  int64_t top1 = 0, topk = 0;
};

struct SkippedSample {
  int64_t index = 0;
  std::string name, reason;
};

struct ValidationState {
  size_t worst_limit = 10;
  IndexRanges done;           // samples read and run (skipped ones included)
  int64_t samples_failed = 0;  // samples where some output of some pair failed the tolerances
  std::vector<SkippedSample> skipped;  // by index
  std::vector<PairState> pairs;
  int64_t labeled = 0;                  // samples compared with their label
  std::map<std::string, LabelHits> accuracy;  // runner -> hits
  /// label -> samples with it, and per runner the top-1 hits among them.
  std::map<int64_t, std::pair<int64_t, std::map<std::string, int64_t>>> classes;

  PairState& pair(const std::string& reference, const std::string& candidate);
  /// Adds a disjoint shard's state. Throws kInvalidArgument when the shards overlap.
  void merge(const ValidationState& other);
  nlohmann::json to_json() const;
  /// Throws kInvalidModel naming what is malformed.
  static ValidationState from_json(const nlohmann::json& j);
};

}  // namespace parity::tools::validation
