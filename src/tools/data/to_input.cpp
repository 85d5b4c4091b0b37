#include "tools/data/to_input.h"

#include <algorithm>
#include <filesystem>

#include "compare/feed_files.h"
#include "core/formats/file_io.h"
#include "core/formats/polygraphy_json.h"
#include "core/text.h"

namespace parity::tools::data {

namespace {

bool is_run_results_json(const std::string& path) {
  if (std::filesystem::is_directory(path)) return false;
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".npz") return false;
  // RunResults is a JSON object; an inputs file is a JSON list.
  const std::string text = formats::read_binary_file(path);
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{';
}

}  // namespace

std::vector<TensorMap> iterations_of(const std::string& path) {
  if (!is_run_results_json(path)) return compare::load_feeds(path);
  const RunResults results = read_run_results(path);
  std::vector<std::vector<TensorMap>> runs;
  for (const auto& [runner, iterations] : results.runs) {
    std::vector<TensorMap> outputs;
    for (const auto& iteration : iterations) outputs.push_back(iteration.outputs);
    runs.push_back(std::move(outputs));
  }
  return merge_iterations(runs);
}

std::vector<TensorMap> merge_iterations(const std::vector<std::vector<TensorMap>>& files) {
  std::vector<TensorMap> merged;
  for (const auto& file : files) {
    if (merged.size() < file.size()) merged.resize(file.size());
    for (size_t i = 0; i < file.size(); ++i)
      for (const auto& [name, tensor] : file[i]) merged[i].set(name, tensor);
  }
  return merged;
}

}  // namespace parity::tools::data
