#include "tools/validate/error_histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/status.h"

namespace parity::tools::validation {
namespace {

constexpr int kSubBins = 16;
constexpr int kMinExponent = -64;  // frexp exponents: values from 2^(kMinExponent-1)
constexpr int kMaxExponent = 64;
constexpr int kZeroBin = 0;
constexpr int kUnderflowBin = 1;
constexpr int kFirstLogBin = 2;
constexpr int kOverflowBin = kFirstLogBin + (kMaxExponent - kMinExponent) * kSubBins;

}  // namespace

int ErrorHistogram::bin_of(double value) {
  if (value <= 0) return kZeroBin;
  int exponent = 0;
  const double fraction = std::frexp(value, &exponent);  // [0.5, 1)
  if (exponent < kMinExponent) return kUnderflowBin;
  if (exponent >= kMaxExponent) return kOverflowBin;
  const int sub = std::min(kSubBins - 1, static_cast<int>((fraction - 0.5) * 2 * kSubBins));
  return kFirstLogBin + (exponent - kMinExponent) * kSubBins + sub;
}

double ErrorHistogram::lower_edge(int bin) {
  if (bin == kZeroBin) return 0;
  if (bin == kUnderflowBin) return 0;
  if (bin >= kOverflowBin) return std::ldexp(0.5, kMaxExponent);
  const int offset = bin - kFirstLogBin;
  const int exponent = kMinExponent + offset / kSubBins;
  return std::ldexp(0.5 + 0.5 * (offset % kSubBins) / kSubBins, exponent);
}

double ErrorHistogram::upper_edge(int bin) {
  if (bin == kZeroBin) return 0;
  if (bin == kUnderflowBin) return std::ldexp(0.5, kMinExponent);
  if (bin >= kOverflowBin) return std::numeric_limits<double>::max();
  const int offset = bin - kFirstLogBin;
  const int exponent = kMinExponent + offset / kSubBins;
  return std::ldexp(0.5 + 0.5 * (offset % kSubBins + 1) / kSubBins, exponent);
}

void ErrorHistogram::add(double value) {
  if (!std::isfinite(value)) {
    ++nonfinite_;
    return;
  }
  ++counts_[bin_of(std::fabs(value))];
  ++count_;
}

void ErrorHistogram::merge(const ErrorHistogram& other) {
  for (const auto& [bin, n] : other.counts_) counts_[bin] += n;
  count_ += other.count_;
  nonfinite_ += other.nonfinite_;
}

double ErrorHistogram::quantile(double q) const {
  if (count_ == 0) return 0;
  const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(count_ - 1);
  int64_t before = 0;
  for (const auto& [bin, n] : counts_) {
    if (rank < static_cast<double>(before + n)) {
      if (bin == kZeroBin) return 0;
      const double within = n > 1 ? (rank - static_cast<double>(before)) / static_cast<double>(n - 1) : 0.5;
      return lower_edge(bin) + within * (upper_edge(bin) - lower_edge(bin));
    }
    before += n;
  }
  return upper_edge(counts_.rbegin()->first);
}

std::vector<ErrorHistogram::Bin> ErrorHistogram::bins() const {
  std::vector<Bin> out;
  for (const auto& [bin, n] : counts_) out.push_back({lower_edge(bin), upper_edge(bin), n});
  return out;
}

nlohmann::json ErrorHistogram::to_json() const {
  nlohmann::json bins = nlohmann::json::array();
  for (const auto& [bin, n] : counts_) bins.push_back({bin, n});
  return {{"bins", bins}, {"nonfinite", nonfinite_}};
}

ErrorHistogram ErrorHistogram::from_json(const nlohmann::json& j) {
  PARITY_CHECK(j.is_object() && j.contains("bins") && j["bins"].is_array(), kInvalidModel,
               "a histogram must be an object with \"bins\"");
  ErrorHistogram h;
  for (const auto& b : j["bins"]) {
    PARITY_CHECK(b.is_array() && b.size() == 2 && b[0].is_number_integer() && b[1].is_number_integer(), kInvalidModel,
                 "a histogram bin must be [bin, count]");
    const int bin = b[0].get<int>();
    const int64_t n = b[1].get<int64_t>();
    PARITY_CHECK(bin >= kZeroBin && bin <= kOverflowBin && n > 0, kInvalidModel, "histogram bin ", bin, " (count ", n,
                 ") is out of range");
    h.counts_[bin] += n;
    h.count_ += n;
  }
  h.nonfinite_ = j.value("nonfinite", int64_t{0});
  return h;
}

}  // namespace parity::tools::validation
