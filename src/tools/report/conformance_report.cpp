#include "tools/report/conformance_report.h"

#include <map>

#include <onnx/defs/schema.h>

#include "model/schemas/newer_onnx.h"
#include "tools/report/svg.h"

namespace parity::tools::report {

std::string operator_family(const std::string& op_type, const std::string& domain) {
  model::register_newer_onnx_schemas();
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op_type, domain);
  if (!schema) return "other";
  // ONNX keeps each family's schemas in onnx/defs/<family>/ (defs.cc, old.cc); parity's schemas of
  // operators newer than its libonnx live in model/schemas/<family>.cpp.
  const std::string& file = schema->file();
  if (const size_t at = file.rfind("defs/"); at != std::string::npos) {
    const size_t end = file.find('/', at + 5);
    return end == std::string::npos ? "other" : file.substr(at + 5, end - at - 5);
  }
  if (const size_t at = file.rfind("model/schemas/"); at != std::string::npos) {
    const size_t end = file.rfind(".cpp");
    if (end != std::string::npos && end > at + 14) return file.substr(at + 14, end - at - 14);
  }
  return "other";
}

Json conformance_section(const std::string& runner, const std::vector<ConformanceCase>& cases) {
  // Outcomes as tests name them, and as the summary counts them.
  static const std::pair<const char*, const char*> kOutcomes[] = {
      {"pass", "passed"}, {"fail", "failed"}, {"error", "errored"}, {"skipped", "skipped"}};
  Json s;
  s["type"] = "conformance";
  s["runner"] = runner;
  std::map<std::string, std::map<std::string, int64_t>> families;
  std::map<std::string, int64_t> totals;
  Json& tests = s["tests"] = Json::array();
  for (const auto& c : cases) {
    ++families[c.family][c.outcome];
    ++totals[c.outcome];
    Json t;
    t["id"] = c.id;
    t["result"] = c.outcome;
    t["op_type"] = c.op_type;
    t["family"] = c.family;
    if (!c.message.empty()) t["message"] = c.message;
    if (c.outcome == "pass" || c.outcome == "fail") t["max_abs_error"] = c.max_abs_error;
    t["seconds"] = c.seconds;
    tests.push_back(std::move(t));
  }
  Json summary;
  for (const auto& [o, key] : kOutcomes) summary[key] = totals[o];
  summary["total"] = cases.size();
  s["summary"] = summary;
  Json& fam = s["families"] = Json::array();
  for (const auto& [name, counts] : families) {
    Json f;
    f["family"] = name;
    for (const auto& [o, key] : kOutcomes) f[key] = counts.count(o) ? counts.at(o) : 0;
    fam.push_back(std::move(f));
  }
  return s;
}

namespace {

void render_conformance(const Json& s, size_t, std::string& out) {
  const Json& sum = s["summary"];
  const bool passed = sum["failed"].get<int64_t>() == 0 && sum["errored"].get<int64_t>() == 0;
  out += "<h2>ONNX backend conformance: " + svg::escape(s["runner"].get<std::string>()) + " " + html::verdict(passed) + "</h2>\n";
  out += html::table({"passed", "failed", "errored", "skipped", "total"},
                     {{std::to_string(sum["passed"].get<int64_t>()), std::to_string(sum["failed"].get<int64_t>()),
                       std::to_string(sum["errored"].get<int64_t>()), std::to_string(sum["skipped"].get<int64_t>()),
                       std::to_string(sum["total"].get<int64_t>())}});
  std::vector<svg::StackedRow> rows;
  for (const auto& f : s["families"])
    rows.push_back({f["family"].get<std::string>(),
                    {f["passed"].get<int64_t>(), f["failed"].get<int64_t>(), f["errored"].get<int64_t>(),
                     f["skipped"].get<int64_t>()}});
  out += "<h3>Per operator family</h3>\n<figure>" +
         svg::stacked_bars({"passed", "failed", "errored", "skipped"}, {"#2ca02c", "#d62728", "#ff7f0e", "#bbbbbb"}, rows) +
         "</figure>\n";
  std::vector<std::vector<std::string>> bad;
  for (const auto& t : s["tests"]) {
    const std::string r = t["result"].get<std::string>();
    if (r != "fail" && r != "error") continue;
    bad.push_back({svg::escape(t["id"].get<std::string>()), svg::escape(t["family"].get<std::string>()),
                   "<span>" + svg::escape(r) + "</span>", "<span>" + svg::escape(t.value("message", "")) + "</span>"});
  }
  if (!bad.empty()) out += "<h3>Failed and errored tests</h3>\n" + html::table({"test", "family", "result", "message"}, bad);
}

const bool kConformanceReportRegistered = [] {
  register_section_renderer("conformance", render_conformance);
  return true;
}();

}  // namespace
}  // namespace parity::tools::report
