#include "core/formats/data_file.h"

#include <cctype>
#include <filesystem>

#include "core/formats/file_io.h"
#include "core/formats/npy.h"
#include "core/formats/npz.h"
#include "core/formats/polygraphy_json_detail.h"

namespace parity {

namespace {

char first_non_space(const std::string& bytes) {
  for (char c : bytes)
    if (!std::isspace(static_cast<unsigned char>(c))) return c;
  return '\0';
}

bool has_extension(const std::string& path, const char* ext) {
  return std::filesystem::path(path).extension() == ext;
}

DataFileKind kind_from_content(const std::string& bytes, const std::string& path) {
  if (looks_like_npy(bytes)) return DataFileKind::kNpy;
  if (looks_like_zip(bytes)) return DataFileKind::kNpz;
  const char first = first_non_space(bytes);
  if (first == '[') return DataFileKind::kInputsJson;
  if (first == '{') {
    // An object is RunResults when it says so; a bare {name: array} object is one input iteration.
    const auto j = polygraphy_json::parse(bytes, path);
    const auto cls = polygraphy_json::class_of(j);
    return cls && *cls == "RunResults" ? DataFileKind::kRunResults : DataFileKind::kInputsJson;
  }
  if (bytes.empty())
    fail(ErrorCode::kInvalidModel, path, ": empty file (expected Polygraphy JSON, .npy or .npz)");
  if (has_extension(path, ".npy") || has_extension(path, ".npz"))
    fail(ErrorCode::kInvalidModel, path, ": not a valid ", std::filesystem::path(path).extension().string(),
         " file (bad magic bytes)");
  fail(ErrorCode::kInvalidModel, path,
       ": unrecognized data file (expected Polygraphy RunResults/inputs JSON, .npy or .npz)");
}

}  // namespace

const char* data_file_kind_name(DataFileKind kind) {
  switch (kind) {
    case DataFileKind::kRunResults: return "RunResults JSON";
    case DataFileKind::kInputsJson: return "inputs JSON";
    case DataFileKind::kNpy: return ".npy";
    case DataFileKind::kNpz: return ".npz";
  }
  return "?";
}

DataFileKind detect_data_file(const std::string& path) {
  return kind_from_content(formats::read_binary_file(path), path);
}

namespace {

DataFile decode_data_file(const std::string& path) {
  std::string bytes = formats::read_binary_file(path);
  DataFile file;
  file.kind = kind_from_content(bytes, path);
  switch (file.kind) {
    case DataFileKind::kNpy: {
      TensorMap map;
      map.set(std::filesystem::path(path).stem().string(), npy_from_string(std::move(bytes), path));
      file.iterations.push_back(std::move(map));
      break;
    }
    case DataFileKind::kNpz:
      file.iterations.push_back(npz_from_bytes(bytes, path));
      break;
    case DataFileKind::kRunResults:
      file.run_results = polygraphy_json::decode_run_results(polygraphy_json::parse(bytes, path), path);
      break;
    case DataFileKind::kInputsJson:
      file.iterations = polygraphy_json::decode_inputs(polygraphy_json::parse(bytes, path), path);
      break;
  }
  return file;
}

}  // namespace

DataFile load_data(const std::string& path) {
  return with_error_context({.file = path}, [&] { return decode_data_file(path); });
}

TensorMapList load_data_file(const std::string& path) {
  DataFile file = load_data(path);
  if (file.kind != DataFileKind::kRunResults) return std::move(file.iterations);
  TensorMapList all;
  for (auto& run : file.run_results.runs)
    for (auto& iteration : run.second) all.push_back(std::move(iteration.outputs));
  return all;
}

}  // namespace parity
