// A histogram of non-negative errors on fixed logarithmic bins (16 per octave from 2^-64 to 2^64,
// plus zero, underflow and overflow bins). The bins never depend on the data, so histograms of
// shards add up to the histogram of the whole dataset, and percentiles read from it are the same
// however the dataset was split.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

namespace parity::tools::validation {

class ErrorHistogram {
 public:
  /// Counts one value; NaN and infinity are counted apart (nonfinite()).
  void add(double value);
  void merge(const ErrorHistogram& other);

  int64_t count() const { return count_; }  // finite values
  int64_t nonfinite() const { return nonfinite_; }
  /// numpy-style 'linear' quantile of the finite values, interpolated inside the bin that holds
  /// it (a bin spans 4.4% of its value); 0 when there are none.
  double quantile(double q) const;

  /// A bin: its edges and count, for charts (non-empty bins only, in value order).
  struct Bin {
    double lower = 0, upper = 0;
    int64_t count = 0;
  };
  std::vector<Bin> bins() const;

  nlohmann::json to_json() const;
  /// Throws kInvalidModel on a malformed histogram.
  static ErrorHistogram from_json(const nlohmann::json& j);
  bool operator==(const ErrorHistogram& other) const = default;

 private:
  static int bin_of(double value);
  static double lower_edge(int bin);
  static double upper_edge(int bin);
  std::map<int, int64_t> counts_;  // bin -> count, non-empty bins only
  int64_t count_ = 0;
  int64_t nonfinite_ = 0;
};

}  // namespace parity::tools::validation
