#include "tools/report/bench_report.h"

#include <map>

#include "tools/bench/report.h"
#include "tools/report/svg.h"

namespace parity::tools::report {
namespace {

constexpr const char* kRunnerColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"};

}  // namespace

Json bench_section(const std::vector<bench::Row>& rows, const bench::Settings& settings) {
  Json s;
  s["type"] = "bench";
  s["runners"] = settings.runners;
  s["threads"] = settings.threads;
  s["iterations"] = settings.iterations;
  s["warm_up"] = settings.warm_up;
  s["min_time_s"] = settings.min_time;
  s["machine"] = bench::machine_line(settings);
  Json& list = s["rows"] = Json::array();
  for (const auto& row : rows) {
    Json r;
    r["model"] = row.model;
    r["label"] = row.label;
    r["threads"] = row.threads;
    r["inputs"] = row.inputs;
    r["rounds"] = row.rounds;
    // Ratios are to the first runner with figures (the baseline of the row).
    const bench::RunnerCell* base = nullptr;
    for (const auto& c : row.cells)
      if (c.unavailable.empty() && !c.samples.empty()) {
        base = &c;
        break;
      }
    Json& cells = r["cells"] = Json::array();
    for (const auto& c : row.cells) {
      Json j;
      j["runner"] = c.runner;
      if (!c.unavailable.empty() || c.samples.empty()) {
        j["unavailable"] = c.unavailable.empty() ? "no samples" : c.unavailable;
        cells.push_back(std::move(j));
        continue;
      }
      std::vector<double> ms;
      for (double v : c.samples) ms.push_back(v * 1e3);
      j["median_ms"] = c.median() * 1e3;
      j["p10_ms"] = bench::percentile(c.samples, 10) * 1e3;
      j["p90_ms"] = bench::percentile(c.samples, 90) * 1e3;
      j["samples_ms"] = ms;
      double wall = 0;
      for (double v : c.samples) wall += v;
      if (wall > 0) j["cpu_per_wall"] = c.cpu_seconds / wall;
      j["ratio_to_" + base->runner] = c.median() / base->median();
      cells.push_back(std::move(j));
    }
    if (auto ratio = bench::ref_over_ort(row)) r["ref_over_ort"] = *ratio;
    list.push_back(std::move(r));
  }
  return s;
}

namespace {

void render_bench(const Json& s, size_t, std::string& out) {
  if (s.contains("machine")) out += "<p>Machine: " + svg::escape(s["machine"].get<std::string>()) + "</p>\n";
  out += "<h2>Latency</h2>\n<p>Every timed sample per runner and thread count (timed rounds alternate between "
         "runners); boxes span the 25th to 75th percentile, the line is the median; samples above the axis (beyond "
         "every runner's 99th percentile) sit on its top edge.</p>\n";
  std::map<std::string, std::string> colors;
  for (const auto& r : s["runners"]) colors.emplace(r.get<std::string>(), kRunnerColors[colors.size() % std::size(kRunnerColors)]);
  // One chart per model, all thread counts side by side.
  std::vector<std::string> models;
  for (const auto& row : s["rows"])
    if (std::find(models.begin(), models.end(), row["model"].get<std::string>()) == models.end())
      models.push_back(row["model"].get<std::string>());
  for (const auto& model : models) {
    std::vector<svg::Distribution> groups;
    std::vector<std::vector<std::string>> table;
    std::string label, inputs;
    for (const auto& row : s["rows"]) {
      if (row["model"].get<std::string>() != model) continue;
      label = row["label"].get<std::string>();
      inputs = row["inputs"].get<std::string>();
      for (const auto& c : row["cells"]) {
        const std::string runner = c["runner"].get<std::string>();
        const std::string threads = std::to_string(row["threads"].get<int64_t>());
        if (c.contains("unavailable")) {
          table.push_back({svg::escape(runner), threads, "<span>" + svg::escape(c["unavailable"].get<std::string>()) + "</span>", "", "", ""});
          continue;
        }
        groups.push_back({runner + " @" + threads + "t", c["samples_ms"].get<std::vector<double>>(), colors[runner]});
        std::string ratio;
        for (const auto& [k, v] : c.items())
          if (k.rfind("ratio_to_", 0) == 0) ratio = svg::number(v.get<double>()) + " (vs " + svg::escape(k.substr(9)) + ")";
        table.push_back({svg::escape(runner), threads, svg::number(c["median_ms"].get<double>()),
                         svg::number(c["p10_ms"].get<double>()) + " - " + svg::number(c["p90_ms"].get<double>()),
                         std::to_string(c["samples_ms"].size()), ratio});
      }
    }
    out += "<h3>" + svg::escape(label) + " <small>(" + svg::escape(inputs) + ")</small></h3>\n";
    out += "<figure>" + svg::distributions(groups, "latency (ms)") + "</figure>\n";
    out += html::table({"runner", "threads", "median (ms)", "p10 - p90 (ms)", "samples", "median ratio"}, table);
  }
}

const bool kBenchReportRegistered = [] {
  register_section_renderer("bench", render_bench);
  return true;
}();

}  // namespace
}  // namespace parity::tools::report
