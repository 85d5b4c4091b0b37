// Test-only decoding of the Polygraphy fixtures' base64 .npy payloads, independent of parity's
// own file-format code so compare tests check the comparison alone.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/dtype.h"
#include "core/run_results.h"
#include "core/tensor.h"

namespace parity::testing {

inline std::string base64_decode(const std::string& in) {
  std::string out;
  int value = 0, bits = -8;
  for (unsigned char c : in) {
    int d;
    if (c >= 'A' && c <= 'Z') d = c - 'A';
    else if (c >= 'a' && c <= 'z') d = c - 'a' + 26;
    else if (c >= '0' && c <= '9') d = c - '0' + 52;
    else if (c == '+') d = 62;
    else if (c == '/') d = 63;
    else continue;
    value = (value << 6) + d;
    bits += 6;
    if (bits >= 0) {
      out.push_back(static_cast<char>((value >> bits) & 0xFF));
      bits -= 8;
    }
  }
  return out;
}

/// Parses a version 1.0 .npy file (C order) into a Tensor.
inline Tensor tensor_from_npy(const std::string& npy) {
  const size_t header_len = static_cast<unsigned char>(npy[8]) | (static_cast<unsigned char>(npy[9]) << 8);
  const std::string header = npy.substr(10, header_len);
  const auto descr_pos = header.find("'descr': '") + 10;
  const std::string descr = header.substr(descr_pos, header.find('\'', descr_pos) - descr_pos);
  const auto shape_pos = header.find("'shape': (") + 10;
  const std::string dims = header.substr(shape_pos, header.find(')', shape_pos) - shape_pos);
  Shape shape;
  size_t pos = 0;
  while (pos < dims.size()) {
    size_t comma = dims.find(',', pos);
    std::string d = dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (d.find_first_not_of(' ') != std::string::npos) shape.push_back(std::stoll(d));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  const DType dtype = *dtype_from_numpy_descr(descr);
  const std::string data = npy.substr(10 + header_len);
  return Tensor::from_bytes(dtype, shape, data.data(), data.size());
}

inline Tensor tensor_from_json_ndarray(const nlohmann::ordered_json& j) {
  return tensor_from_npy(base64_decode(j["array"].get<std::string>()));
}

/// Reads a Polygraphy RunResults JSON file.
inline RunResults run_results_from_json(const nlohmann::ordered_json& j) {
  RunResults results;
  for (const auto& run : j["lst"]) {
    std::vector<IterationResult> iterations;
    for (const auto& it : run[1]) {
      IterationResult r;
      r.runner_name = it["runner_name"].get<std::string>();
      if (!it["runtime"].is_null()) r.runtime = it["runtime"].get<double>();
      for (const auto& [name, lazy] : it["outputs"].items()) r.outputs.set(name, tensor_from_json_ndarray(lazy["values"]));
      iterations.push_back(std::move(r));
    }
    results.add(run[0].get<std::string>(), std::move(iterations));
  }
  return results;
}

}  // namespace parity::testing
