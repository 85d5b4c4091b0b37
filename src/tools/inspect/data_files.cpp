#include "tools/inspect/data_files.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "core/formats/data_file.h"
#include "core/logger.h"
#include "core/low_precision.h"
#include "core/stats.h"

namespace parity::tools {

namespace {

constexpr const char* kTab = "    ";

// Polygraphy's util.indent_block: prefix each line with `level` tabs.
std::string indent_block(const std::string& block, int level) {
  std::string tab;
  for (int i = 0; i < level; ++i) tab += kTab;
  std::string out = tab;
  size_t start = 0;
  bool first = true;
  while (start < block.size()) {
    size_t end = block.find('\n', start);
    if (end == std::string::npos) end = block.size();
    if (!first) out += "\n" + tab;
    out += block.substr(start, end - start);
    first = false;
    start = end + 1;
  }
  return out;
}

std::string strip(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::string metadata_string(const Tensor& t) {
  return str_cat("[dtype=", dtype_name(t.dtype()), ", shape=", shape_to_string(t.shape()), "]");
}

// Polygraphy's str_from_iters (tools/inspect/subtool/data.py).
std::string str_from_iterations(const std::vector<const TensorMap*>& iterations, const InspectDataOptions& opt) {
  std::string out;
  for (size_t index = 0; index < iterations.size(); ++index) {
    int indent = 1;
    if (iterations.size() > 1 && opt.all) {
      out += indent_block(str_cat("\n-- Iteration: ", index, "\n"), 0);
      indent = 2;
    }
    for (const auto& [name, tensor] : *iterations[index]) {
      out += indent_block("\n" + name + " " + metadata_string(tensor) + " | Stats: " + stats_string(tensor), indent - 1);
      if (opt.histogram) out += "\n" + indent_block(format_histogram(tensor), indent);
      if (opt.show_values) out += "\n" + indent_block(array_to_string(tensor, opt.print), indent);
    }
    if (indent == 2) out += "\n";
    if (!opt.all) break;
  }
  return out;
}

std::string text_for(const DataFile& file, const InspectDataOptions& opt) {
  std::string out;
  if (file.kind == DataFileKind::kRunResults) {
    out = str_cat("==== Run Results (", file.run_results.size(), " runners) ====\n\n");
    size_t width = 0;
    for (const auto& run : file.run_results.runs) width = std::max(width, run.first.size());
    for (const auto& [runner, iterations] : file.run_results.runs) {
      std::vector<const TensorMap*> maps;
      for (const auto& it : iterations) maps.push_back(&it.outputs);
      out += fmt::format("---- {:<{}} ({} iterations) ----\n", runner, width, iterations.size());
      out += str_from_iterations(maps, opt) + "\n";
    }
  } else {
    std::vector<const TensorMap*> maps;
    for (const auto& it : file.iterations) maps.push_back(&it);
    out = str_cat("==== Data (", file.iterations.size(), " iterations) ====\n");
    out += str_from_iterations(maps, opt) + "\n";
  }
  return strip(indent_block(out, 0));
}

nlohmann::ordered_json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json tensor_json(const std::string& name, const Tensor& t, const InspectDataOptions& opt) {
  nlohmann::ordered_json j;
  j["name"] = name;
  j["dtype"] = dtype_name(t.dtype());
  j["shape"] = t.shape();
  if (t.dtype() == DType::kString || is_complex(t.dtype()) || t.dtype() == kNumpyVoid1) {
    j["stats"] = nullptr;
  } else {
    const TensorStats s = compute_stats(t);
    nlohmann::ordered_json st;
    st["mean"] = number_or_null(s.mean);
    st["std_dev"] = number_or_null(s.std_dev);
    st["var"] = number_or_null(s.var);
    st["median"] = number_or_null(s.median);
    st["min"] = number_or_null(s.min);
    st["min_index"] = s.argmin;
    st["max"] = number_or_null(s.max);
    st["max_index"] = s.argmax;
    st["avg_magnitude"] = number_or_null(s.avg_magnitude);
    if (s.has_quantiles) {
      st["p90"] = number_or_null(s.p90);
      st["p95"] = number_or_null(s.p95);
      st["p99"] = number_or_null(s.p99);
    }
    j["stats"] = std::move(st);
    if (opt.histogram) {
      if (auto h = compute_histogram(t)) {
        j["histogram"] = {{"edges", h->edges}, {"counts", h->counts}};
      } else {
        j["histogram"] = nullptr;
      }
    }
    if (opt.show_values) {
      nlohmann::ordered_json values = nlohmann::ordered_json::array();
      for (int64_t i = 0; i < t.numel(); ++i) values.push_back(number_or_null(t.value_as_double(i)));
      j["values"] = std::move(values);
    }
  }
  return j;
}

nlohmann::ordered_json iterations_json(const std::vector<const TensorMap*>& maps, const InspectDataOptions& opt,
                                       const std::vector<std::optional<double>>* runtimes) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (size_t i = 0; i < maps.size(); ++i) {
    if (!opt.all && i > 0) break;
    nlohmann::ordered_json it;
    it["index"] = i;
    if (runtimes) it["runtime"] = (*runtimes)[i] ? nlohmann::ordered_json(*(*runtimes)[i]) : nlohmann::ordered_json(nullptr);
    nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
    for (const auto& [name, tensor] : *maps[i]) tensors.push_back(tensor_json(name, tensor, opt));
    it["tensors"] = std::move(tensors);
    out.push_back(std::move(it));
  }
  return out;
}

nlohmann::ordered_json json_for(const std::string& path, const DataFile& file, const InspectDataOptions& opt) {
  nlohmann::ordered_json j;
  j["path"] = path;
  j["kind"] = data_file_kind_name(file.kind);
  if (file.kind == DataFileKind::kRunResults) {
    nlohmann::ordered_json runners = nlohmann::ordered_json::array();
    for (const auto& [runner, iterations] : file.run_results.runs) {
      std::vector<const TensorMap*> maps;
      std::vector<std::optional<double>> runtimes;
      for (const auto& it : iterations) {
        maps.push_back(&it.outputs);
        runtimes.push_back(it.runtime);
      }
      nlohmann::ordered_json r;
      r["name"] = runner;
      r["num_iterations"] = iterations.size();
      r["iterations"] = iterations_json(maps, opt, &runtimes);
      runners.push_back(std::move(r));
    }
    j["runners"] = std::move(runners);
  } else {
    std::vector<const TensorMap*> maps;
    for (const auto& it : file.iterations) maps.push_back(&it);
    j["num_iterations"] = file.iterations.size();
    j["iterations"] = iterations_json(maps, opt, nullptr);
  }
  return j;
}

bool has_hidden_iterations(const DataFile& file) {
  if (file.kind == DataFileKind::kRunResults) {
    for (const auto& run : file.run_results.runs)
      if (run.second.size() > 1) return true;
    return false;
  }
  return file.iterations.size() > 1;
}

}  // namespace

void inspect_data_files(const std::vector<std::string>& paths, const InspectDataOptions& opt) {
  std::vector<std::pair<std::string, DataFile>> files;
  for (const auto& path : paths) files.emplace_back(path, load_data(path));

  nlohmann::ordered_json doc;
  doc["files"] = nlohmann::ordered_json::array();
  for (const auto& [path, file] : files) {
    if (opt.json) {
      doc["files"].push_back(json_for(path, file, opt));
      continue;
    }
    logger().info(text_for(file, opt));
    if (!opt.all && has_hidden_iterations(file))
      logger().info("Showing only the first iteration", file.kind == DataFileKind::kRunResults ? " of each runner" : "",
                    " of ", path, "; use --all to show every iteration");
  }
  if (opt.json) {
    std::printf("%s\n", doc.dump(2).c_str());
    std::fflush(stdout);
  }
}

}  // namespace parity::tools
