#include "tools/report/validate_report.h"

#include <cmath>
#include <map>

#include "tools/report/svg.h"

namespace parity::tools::report {
namespace {

std::string num_text(const Json& v) { return v.is_number() ? svg::number(v.get<double>()) : svg::escape(v.dump()); }

std::string pct(double v) { return svg::number(100 * v) + "%"; }

// The summary's fine log bins regrouped by decade, as the other reports draw error histograms.
svg::Histogram decade_histogram(const Json& bins, const std::string& label, std::optional<double> threshold) {
  svg::Histogram h;
  h.log_x = true;
  h.x_label = label;
  h.threshold = threshold;
  std::map<int, int64_t> decades;
  for (const auto& b : bins) {
    const double lower = b[0].get<double>();
    const int64_t count = b[2].get<int64_t>();
    if (lower <= 0) h.zeros += count;
    else decades[static_cast<int>(std::floor(std::log10(lower)))] += count;
  }
  if (decades.empty()) return h;
  for (int d = decades.begin()->first; d <= decades.rbegin()->first; ++d) {
    h.edges.push_back(std::pow(10.0, d));
    h.counts.push_back(decades.count(d) ? decades[d] : 0);
  }
  h.edges.push_back(std::pow(10.0, decades.rbegin()->first + 1));
  return h;
}

void render_validate(const Json& s, size_t, std::string& out) {
  const Json& n = s["samples"];
  out += "<h2>Validation on " + svg::escape(s["dataset"]["path"].get<std::string>()) + " " +
         html::verdict(s["passed"].get<bool>()) + "</h2>\n";
  out += html::table({"model", "dataset", "samples", "validated", "passed", "failed", "skipped"},
                     {{svg::escape(s["model"].get<std::string>()), svg::escape(s["dataset"]["kind"].get<std::string>()),
                       std::to_string(s["dataset"]["samples"].get<int64_t>()), std::to_string(n["validated"].get<int64_t>()),
                       std::to_string(n["passed"].get<int64_t>()), std::to_string(n["failed"].get<int64_t>()),
                       std::to_string(n["skipped"].get<int64_t>())}});
  const double atol = s["settings"]["atol"].get<double>(), rtol = s["settings"]["rtol"].get<double>();
  for (const auto& pair : s["comparisons"])
    for (const auto& o : pair["outputs"]) {
      out += "<h3>" + svg::escape(pair["candidate"].get<std::string>()) + " vs " +
             svg::escape(pair["reference"].get<std::string>()) + ": " + svg::escape(o["name"].get<std::string>()) + "</h3>\n";
      std::vector<std::vector<std::string>> rows;
      for (const char* kind : {"abs_error", "rel_error"}) {
        const Json& e = o[kind];
        rows.push_back({kind, num_text(e["max"]), num_text(e["mean"]), num_text(e["p50"]), num_text(e["p90"]), num_text(e["p99"]), num_text(e["p999"]),
                        std::to_string(e["nonfinite"].get<int64_t>())});
      }
      out += html::table({"error", "max", "mean", "p50", "p90", "p99", "p99.9", "NaN/inf"}, rows);
      std::string line = "<p>Samples passed: " + std::to_string(o["samples_passed"].get<int64_t>()) + " of " +
                         std::to_string(o["samples"].get<int64_t>()) + " (" + pct(o["pass_rate"].get<double>()) + ")";
      if (o.contains("top_k"))
        line += "; top-1 agreement " + pct(o["top_k"]["top1_agreement"].get<double>()) + ", top-" +
                std::to_string(o["top_k"]["k"].get<int64_t>()) + " overlap " + pct(o["top_k"]["topk_overlap"].get<double>());
      out += line + "</p>\n";
      out += "<figure>" + svg::histogram(decade_histogram(o["histograms"]["abs_error"], "absolute error", atol)) + "</figure>\n";
      out += "<figure>" + svg::histogram(decade_histogram(o["histograms"]["rel_error"], "relative error", rtol)) + "</figure>\n";
      std::vector<std::vector<std::string>> worst;
      for (const auto& w : o["worst"])
        worst.push_back({svg::escape(w["sample"].get<std::string>()), num_text(w["max_absdiff"]), num_text(w["max_reldiff"]),
                         w["passed"].get<bool>() ? "yes" : "no",
                         w["rerun"].is_null() ? "" : "<code>" + svg::escape(w["rerun"].get<std::string>()) + "</code>"});
      if (!worst.empty())
        out += "<h4>Worst samples</h4>\n" + html::table({"sample", "max abs", "max rel", "passed", "rerun"}, worst);
    }
  if (s.contains("accuracy")) {
    const Json& a = s["accuracy"];
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : a["runners"])
      rows.push_back({svg::escape(r["runner"].get<std::string>()), pct(r["top1"].get<double>()), pct(r["topk"].get<double>())});
    out += "<h3>Accuracy against " + svg::escape(a["labels"].get<std::string>()) + "</h3>\n" +
           html::table({"runner", "top-1", "top-k"}, rows);
    std::vector<std::vector<std::string>> classes;
    for (const auto& c : a["classes"]) {
      std::vector<std::string> row{std::to_string(c["label"].get<int64_t>()), std::to_string(c["samples"].get<int64_t>())};
      for (const auto& [runner, hits] : c["top1_hits"].items())
        row.push_back(svg::escape(runner) + ": " + std::to_string(hits.get<int64_t>()));
      classes.push_back(std::move(row));
    }
    out += "<h4>Per class (top-1 hits)</h4>\n" + html::table({"label", "samples", "hits"}, classes);
  }
  if (!s["skipped_samples"].empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& k : s["skipped_samples"])
      rows.push_back({svg::escape(k["sample"].get<std::string>()), svg::escape(k["reason"].get<std::string>())});
    out += "<h3>Skipped samples</h3>\n" + html::table({"sample", "reason"}, rows);
  }
}

const bool kValidateReportRegistered = [] {
  register_section_renderer("validate", render_validate);
  return true;
}();

}  // namespace

Json validate_section(const nlohmann::ordered_json& summary) {
  Json s = summary;
  s.erase("checkpoint");
  s["type"] = "validate";
  return s;
}

}  // namespace parity::tools::report
