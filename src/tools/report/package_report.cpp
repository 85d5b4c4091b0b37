#include "tools/report/package_report.h"

#include <algorithm>
#include <limits>
#include <set>

#include "tools/report/svg.h"

namespace parity::tools::report {

namespace nav = navigator;

namespace {

Json step_json(const nav::StepResult& step) {
  Json j;
  j["status"] = nav::step_state_name(step.state);
  if (!step.reason.empty()) j["reason"] = step.reason;
  j["seconds"] = step.seconds;
  for (const auto& t : step.tolerances) j["tolerances"].push_back({{"output", t.output}, {"atol", t.atol}, {"rtol", t.rtol}});
  for (const auto& p : step.performance)
    j["performance"].push_back({{"batch_size", p.batch_size}, {"p50_ms", p.p50_ms}, {"p90_ms", p.p90_ms},
                                {"p95_ms", p.p95_ms}, {"p99_ms", p.p99_ms}, {"throughput", p.throughput},
                                {"stable", p.stable}, {"trials", p.trials}});
  if (step.saturated_at) j["saturated_at_batch_size"] = *step.saturated_at;
  return j;
}

std::string state_cell(const Json& step) {
  if (step.is_null()) return "";
  const std::string status = step["status"].get<std::string>();
  std::string cell = status == "OK" ? html::verdict(true) : status == "FAIL" ? html::verdict(false) : svg::escape(status);
  if (step.contains("reason")) cell += " <small>" + svg::escape(step["reason"].get<std::string>()) + "</small>";
  return cell;
}

// One chart of `field` per batch size: a line per format x runtime that was profiled, a mark per
// measured batch size.
std::string per_batch_chart(const Json& s, const std::string& field, const std::string& y_label, const std::string& kind,
                            const std::string& chart_id) {
  static const std::vector<std::string> kColors{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  std::set<int64_t> batch_sizes;
  for (const auto& f : s["formats"])
    for (const auto& r : f["runtimes"])
      if (r["performance"].contains("performance"))
        for (const auto& p : r["performance"]["performance"]) batch_sizes.insert(p["batch_size"].get<int64_t>());
  if (batch_sizes.empty()) return "";
  const std::vector<int64_t> sizes(batch_sizes.begin(), batch_sizes.end());
  svg::LayerChart chart;
  for (int64_t b : sizes) chart.labels.push_back("batch " + std::to_string(b));
  for (const auto& f : s["formats"])
    for (const auto& r : f["runtimes"]) {
      if (!r["performance"].contains("performance")) continue;
      svg::Series series{f["format"].get<std::string>() + " on " + r["runtime"].get<std::string>(),
                         std::vector<double>(sizes.size(), std::numeric_limits<double>::quiet_NaN()),
                         kColors[chart.series.size() % kColors.size()]};
      for (const auto& p : r["performance"]["performance"]) {
        const auto at = std::lower_bound(sizes.begin(), sizes.end(), p["batch_size"].get<int64_t>()) - sizes.begin();
        series.values[static_cast<size_t>(at)] = p[field].get<double>();
      }
      chart.series.push_back(std::move(series));
    }
  chart.y_label = y_label;
  chart.x_label = "batch size";
  chart.kind = kind;
  chart.chart_id = chart_id;
  return "<figure>" + svg::layer_chart(chart) + "</figure>\n";
}

void render_package(const Json& s, size_t, std::string& out) {
  out += "<h2>Formats</h2>\n<p>Source: " + svg::escape(s["source"].get<std::string>()) + "</p>\n";
  // Cells per format by the state of their last decisive step.
  const std::vector<std::string> categories{"passed", "failed", "skipped"};
  std::vector<svg::StackedRow> bars;
  std::vector<std::vector<std::string>> exports;
  for (const auto& f : s["formats"]) {
    svg::StackedRow row{f["format"].get<std::string>(), {0, 0, 0}};
    for (const auto& r : f["runtimes"]) {
      const bool passed = r["conversion"]["status"] == "OK" && r["correctness"]["status"] == "OK";
      const bool failed = r["conversion"]["status"] == "FAIL" || r["correctness"]["status"] == "FAIL";
      ++row.counts[passed ? 0 : failed ? 1 : 2];
    }
    bars.push_back(row);
    exports.push_back({svg::escape(f["format"].get<std::string>()), state_cell(f["export"])});
  }
  out += "<figure>" + svg::stacked_bars(categories, {"#2e7d32", "#c62828", "#9e9e9e"}, bars) + "</figure>\n";
  out += html::table({"format", "export"}, exports);

  out += "<h2>Format x runtime</h2>\n";
  std::vector<std::vector<std::string>> cells, tolerances, performance;
  for (const auto& f : s["formats"]) {
    const std::string format = svg::escape(f["format"].get<std::string>());
    for (const auto& r : f["runtimes"]) {
      const std::string runtime = svg::escape(r["runtime"].get<std::string>());
      cells.push_back({format, runtime, state_cell(r["conversion"]), state_cell(r["correctness"]),
                       state_cell(r["performance"]), r["verified"].get<bool>() ? "yes" : "no"});
      if (r["correctness"].contains("tolerances"))
        for (const auto& t : r["correctness"]["tolerances"])
          tolerances.push_back({format, runtime, svg::escape(t["output"].get<std::string>()),
                                svg::number(t["atol"].get<double>()), svg::number(t["rtol"].get<double>())});
      if (r["performance"].contains("performance"))
        for (const auto& p : r["performance"]["performance"])
          performance.push_back({format, runtime, std::to_string(p["batch_size"].get<int64_t>()),
                                 svg::number(p["p50_ms"].get<double>()), svg::number(p["p90_ms"].get<double>()),
                                 svg::number(p["p95_ms"].get<double>()), svg::number(p["p99_ms"].get<double>()),
                                 svg::number(p["throughput"].get<double>()), p["stable"].get<bool>() ? "yes" : "no"});
    }
  }
  out += html::table({"format", "runtime", "conversion", "correctness", "performance", "verified"}, cells, "package-matrix");
  out += "<h2>Measured tolerances</h2>\n<p>atol = max |source - format|, rtol = max |source - format| / |format| "
         "(elements where the format's value is 0 count in atol only).</p>\n";
  out += html::table({"format", "runtime", "output", "atol", "rtol"}, tolerances);
  out += "<h2>Performance</h2>\n";
  out += per_batch_chart(s, "p50_ms", "p50 latency (ms)", "latency", "package-latency");
  out += per_batch_chart(s, "throughput", "throughput (/s)", "throughput", "package-throughput");
  out += html::table({"format", "runtime", "batch", "p50 (ms)", "p90 (ms)", "p95 (ms)", "p99 (ms)", "throughput (/s)", "stable"},
                     performance, "package-performance");
}

const bool kPackageReportRegistered = [] {
  register_section_renderer("package", render_package);
  return true;
}();

}  // namespace

Json package_section(const nav::WorkspaceStatus& status) {
  Json s;
  s["type"] = "package";
  s["source"] = status.config.source;
  s["parity_version"] = status.parity_version;
  s["formats"] = Json::array();  // also for a status without formats: the renderer reads it
  for (const auto& f : status.formats) {
    Json format;
    format["format"] = f.format;
    format["export"] = step_json(f.export_step);
    format["runtimes"] = Json::array();
    for (const auto& r : f.runtimes) {
      Json runtime;
      runtime["runtime"] = r.runtime;
      for (const char* step : {"conversion", "correctness", "performance"}) {
        const nav::StepResult* found = r.find_step(step);
        runtime[step] = step_json(found ? *found : nav::StepResult{});
      }
      runtime["verified"] = r.verified();
      format["runtimes"].push_back(runtime);
    }
    s["formats"].push_back(format);
  }
  return s;
}

}  // namespace parity::tools::report
