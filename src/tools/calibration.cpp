#include "tools/calibration.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/formats/file_io.h"
#include "core/status.h"

namespace parity::tools {

namespace {

constexpr const char* kCacheHeader = "parity-calibration-minmax-v1";

void record(std::map<std::string, float>& amaxes, const std::string& name, const Tensor& t) {
  if (t.dtype() != DType::kFloat32 || t.numel() == 0) return;
  const float* data = t.data<float>();
  float amax = 0;
  for (int64_t i = 0; i < t.numel(); ++i)
    if (std::isfinite(data[i])) amax = std::max(amax, std::fabs(data[i]));
  float& slot = amaxes[name];
  slot = std::max(slot, amax);
}

}  // namespace

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
  std::string text = std::string(kCacheHeader) + "\n";
  for (const auto& [name, scale] : table.scales) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "%08x", std::bit_cast<uint32_t>(scale));
    text += name + ": " + hex + "\n";
  }
  formats::write_binary_file(path.string(), text);
}

CalibrationTable read_calibration_cache(const std::filesystem::path& path) {
  const std::string text = formats::read_binary_file(path.string());
  std::istringstream in(text);
  std::string line;
  PARITY_CHECK(std::getline(in, line) && line == kCacheHeader, kInvalidArgument, "calibration cache '",
               path.string(), "' does not start with '", kCacheHeader, "'");
  CalibrationTable table;
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
