#include "tools/calibration.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/formats/file_io.h"
#include "core/status.h"

#include <onnx/onnx_pb.h>

namespace parity::tools {

namespace {

constexpr const char* kCacheHeaderPrefix = "parity-calibration-";
constexpr const char* kCacheHeaderSuffix = "-v2";
constexpr const char* kFirstCacheHeaderSuffix = "-v1";  // before caches recorded their model
constexpr int kHistogramBins = 2048;
constexpr int kQuantizedBins = 128;

void record(std::map<std::string, float>& amaxes, const std::string& name, const Tensor& t) {
  if (t.dtype() != DType::kFloat32 || t.numel() == 0) return;
  const float* data = t.data<float>();
  float amax = 0;
  for (int64_t i = 0; i < t.numel(); ++i)
    if (std::isfinite(data[i])) amax = std::max(amax, std::fabs(data[i]));
  float& slot = amaxes[name];
  slot = std::max(slot, amax);
}

/// Runs every feed of `feeds` through `session`, calling `visit(name, tensor)` for each float32
/// tensor (the feed's and every node output); returns the batch count.
template <typename Visit>
size_t visit_tensors(const runtime::Session& session, compare::FeedSource& feeds, const Visit& visit) {
  runtime::RunOptions options;
  options.hook = [&](const std::string& name, const runtime::Value& value) {
    if (value.is_tensor() && value.tensor().dtype() == DType::kFloat32) visit(name, value.tensor());
  };
  size_t batches = 0;
  for (size_t i = 0;; ++i) {
    std::optional<TensorMap> feed = feeds.feed(i);
    if (!feed) break;
    for (const auto& [name, t] : *feed)
      if (t.dtype() == DType::kFloat32) visit(name, t);
    session.run(*feed, options);
    ++batches;
  }
  return batches;
}

/// KL(P || Q) of two unnormalized histograms over the same bins.
double kl_divergence(const std::vector<double>& p, const std::vector<double>& q) {
  double sp = 0, sq = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    sp += p[i];
    sq += q[i];
  }
  if (sp == 0 || sq == 0) return 1e30;
  double kl = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == 0) continue;
    const double qi = q[i] == 0 ? 1e-8 : q[i] / sq;  // smoothing: a bin Q lost is costly, not infinite
    kl += (p[i] / sp) * std::log((p[i] / sp) / qi);
  }
  return kl;
}

/// The bin count (of kHistogramBins) to clip at: the one whose kQuantizedBins-level version of
/// the clipped histogram diverges least from it.
int entropy_threshold_bins(const std::vector<double>& hist) {
  int best_bins = kHistogramBins;
  double best_kl = 1e30;
  // Candidates every 16 bins (1/128 of the range): finer steps cost minutes on a large model
  // for thresholds a fraction of a quantization step apart.
  for (int bins = kQuantizedBins; bins <= kHistogramBins; bins += 16) {
    std::vector<double> p(hist.begin(), hist.begin() + bins);
    for (int i = bins; i < kHistogramBins; ++i) p[bins - 1] += hist[i];  // outliers saturate
    // Q: the histogram's first `bins` bins (outliers not folded in, so clipping them costs)
    // merged into kQuantizedBins groups, each group's mass spread evenly over its bins that P
    // does not leave empty.
    std::vector<double> q(bins, 0.0);
    for (int g = 0; g < kQuantizedBins; ++g) {
      const int begin = g * bins / kQuantizedBins, end = (g + 1) * bins / kQuantizedBins;
      double mass = 0;
      int nonzero = 0;
      for (int i = begin; i < end; ++i) {
        mass += hist[i];
        nonzero += p[i] != 0;
      }
      for (int i = begin; i < end; ++i)
        if (p[i] != 0) q[i] = mass / nonzero;
    }
    const double kl = kl_divergence(p, q);
    if (kl < best_kl) {
      best_kl = kl;
      best_bins = bins;
    }
  }
  return best_bins;
}

}  // namespace

CalibrationTable calibrate_entropy(const runtime::Session& session, compare::FeedSource& feeds) {
  feeds.set_input_metadata(session.input_metadata());
  std::map<std::string, float> amaxes;
  const size_t batches = visit_tensors(session, feeds, [&](const std::string& name, const Tensor& t) {
    record(amaxes, name, t);
  });
  PARITY_CHECK(batches > 0, kInvalidArgument, "int8 calibration: the data loader gave no inputs");
  std::map<std::string, std::vector<double>> histograms;
  visit_tensors(session, feeds, [&](const std::string& name, const Tensor& t) {
    const float amax = amaxes[name];
    if (!(amax > 0)) return;
    auto& hist = histograms[name];
    hist.resize(kHistogramBins, 0.0);
    const float* data = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (!std::isfinite(data[i])) continue;
      const int bin = std::min(kHistogramBins - 1, static_cast<int>(std::fabs(data[i]) / amax * kHistogramBins));
      hist[bin] += 1;
    }
  });
  CalibrationTable table;
  table.batches = batches;
  table.algorithm = "entropy";
  for (const auto& [name, amax] : amaxes) {
    auto it = histograms.find(name);
    if (it == histograms.end()) {
      table.scales[name] = amax / 127.0f;
      continue;
    }
    const int bins = entropy_threshold_bins(it->second);
    const float threshold = std::min(amax, (static_cast<float>(bins) + 0.5f) * amax / kHistogramBins);
    table.scales[name] = threshold / 127.0f;
  }
  return table;
}

CalibrationTable calibrate_min_max(const runtime::Session& session, compare::FeedSource& feeds) {
  CalibrationTable table;
  std::map<std::string, float> amaxes;
  feeds.set_input_metadata(session.input_metadata());
  runtime::RunOptions options;
  options.hook = [&](const std::string& name, const runtime::Value& value) {
    if (value.is_tensor()) record(amaxes, name, value.tensor());
  };
  for (size_t i = 0;; ++i) {
    std::optional<TensorMap> feed = feeds.feed(i);
    if (!feed) break;
    for (const auto& [name, t] : *feed) record(amaxes, name, t);
    session.run(*feed, options);
    ++table.batches;
  }
  PARITY_CHECK(table.batches > 0, kInvalidArgument, "int8 calibration: the data loader gave no inputs");
  for (const auto& [name, amax] : amaxes) table.scales[name] = amax / 127.0f;
  return table;
}

void write_calibration_cache(const std::filesystem::path& path, const CalibrationTable& table) {
  std::string text = std::string(kCacheHeaderPrefix) + table.algorithm + kCacheHeaderSuffix;
  if (!table.model_fingerprint.empty()) text += " model=" + table.model_fingerprint + " source=" + table.model_name;
  text += "\n";
  for (const auto& [name, scale] : table.scales) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "%08x", std::bit_cast<uint32_t>(scale));
    text += name + ": " + hex + "\n";
  }
  formats::write_binary_file(path.string(), text);
}

namespace {

/// Parses a cache's first line into `table` (algorithm, recorded model); false when it is not one.
bool parse_cache_header(const std::string& line, CalibrationTable& table) {
  for (const char* algorithm : {"minmax", "entropy"}) {
    const std::string stem = std::string(kCacheHeaderPrefix) + algorithm;
    if (line == stem + kFirstCacheHeaderSuffix || line == stem + kCacheHeaderSuffix) {
      table.algorithm = algorithm;
      return true;
    }
    const std::string model_field = stem + kCacheHeaderSuffix + " model=";
    if (line.rfind(model_field, 0) != 0) continue;
    const size_t source = line.find(" source=", model_field.size());
    if (source == std::string::npos) return false;
    table.algorithm = algorithm;
    table.model_fingerprint = line.substr(model_field.size(), source - model_field.size());
    table.model_name = line.substr(source + 8);
    return true;
  }
  return false;
}

void hash_bytes(uint64_t& h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;  // FNV-1a
  }
  h ^= 0xff;  // field separator: ("ab", "c") and ("a", "bc") differ
  h *= 1099511628211ull;
}

}  // namespace

std::string calibration_fingerprint(const onnx::ModelProto& model) {
  uint64_t h = 14695981039346656037ull;
  const auto& g = model.graph();
  for (const auto& v : g.input()) {
    hash_bytes(h, v.name());
    hash_bytes(h, std::to_string(v.type().tensor_type().elem_type()));
  }
  for (const auto& v : g.output()) hash_bytes(h, v.name());
  for (const auto& t : g.initializer()) hash_bytes(h, t.name());
  for (const auto& n : g.node()) {
    hash_bytes(h, n.domain() + "::" + n.op_type());
    for (const auto& i : n.input()) hash_bytes(h, i);
    for (const auto& o : n.output()) hash_bytes(h, o);
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

CalibrationTable read_calibration_cache_for(const std::filesystem::path& path, const onnx::ModelProto& model,
                                            const std::string& model_name) {
  CalibrationTable table = read_calibration_cache(path);
  const std::string fingerprint = calibration_fingerprint(model);
  PARITY_CHECK(table.model_fingerprint.empty() || table.model_fingerprint == fingerprint, kInvalidArgument,
               "calibration cache '", path.string(), "' was made for model '", table.model_name, "' (fingerprint ",
               table.model_fingerprint, "), not for '", model_name, "' (fingerprint ", fingerprint,
               "): delete it to recalibrate or give this model's cache");
  return table;
}

CalibrationTable read_calibration_cache(const std::filesystem::path& path) {
  const std::string text = formats::read_binary_file(path.string());
  std::istringstream in(text);
  std::string line;
  CalibrationTable table;
  const std::string minmax = std::string(kCacheHeaderPrefix) + "minmax" + kCacheHeaderSuffix;
  const std::string entropy = std::string(kCacheHeaderPrefix) + "entropy" + kCacheHeaderSuffix;
  PARITY_CHECK(std::getline(in, line) && parse_cache_header(line, table), kInvalidArgument, "calibration cache '",
               path.string(), "' does not start with '", minmax, "' or '", entropy, "'");
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const size_t colon = line.rfind(": ");
    uint32_t bits = 0;
    int consumed = 0;
    const bool ok = colon != std::string::npos && line.size() - colon - 2 == 8 &&
                    std::sscanf(line.c_str() + colon + 2, "%8x%n", &bits, &consumed) == 1 && consumed == 8;
    PARITY_CHECK(ok, kInvalidArgument, "calibration cache '", path.string(), "' line ", number,
                 ": expected 'tensor: <8 hex digits>', got '", line, "'");
    const float scale = std::bit_cast<float>(bits);
    PARITY_CHECK(std::isfinite(scale) && scale >= 0, kInvalidArgument, "calibration cache '", path.string(), "' line ",
                 number, ": the scale is not a finite non-negative number");
    table.scales[line.substr(0, colon)] = scale;
  }
  return table;
}

}  // namespace parity::tools
