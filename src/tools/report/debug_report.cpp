#include "tools/report/debug_report.h"

#include <limits>
#include <set>

#include "tools/report/svg.h"

namespace parity::tools::report {

Json reduce_section(const ReduceSummary& summary) {
  Json s;
  s["type"] = "debug_reduce";
  s["model"] = summary.model;
  s["mode"] = summary.mode;
  s["check"] = summary.check;
  s["node_count"] = summary.node_count;
  Json& steps = s["steps"] = Json::array();
  double total = 0;
  size_t ran = 0;
  for (size_t i = 0; i < summary.steps.size(); ++i) {
    const ReduceStep& st = summary.steps[i];
    total += st.seconds;
    ran += !st.from_replay;
    steps.push_back({{"check", i + 1},
                     {"nodes", st.nodes},
                     {"verdict", st.failed ? "fails" : "passes"},
                     {"from_replay", st.from_replay},
                     {"seconds", st.seconds},
                     {"detail", st.detail}});
  }
  Json nodes = Json::array();
  for (size_t i = 0; i < summary.final_nodes.size(); ++i)
    nodes.push_back({{"index", i < summary.final_indices.size() ? Json(summary.final_indices[i]) : Json(nullptr)},
                     {"label", summary.final_nodes[i]}});
  s["result"] = {{"nodes", std::move(nodes)},
                 {"checks", summary.steps.size()},
                 {"checks_run", ran},
                 {"seconds", total},
                 {"output", summary.output},
                 {"passing_nodes", summary.passing_nodes ? Json(*summary.passing_nodes) : Json(nullptr)}};
  return s;
}

Json precision_section(const PrecisionSummary& summary) {
  Json s;
  s["type"] = "debug_precision";
  s["model"] = summary.model;
  s["reduced_type"] = summary.reduced_type;
  s["mode"] = summary.mode;
  s["direction"] = summary.direction;
  s["atol"] = summary.atol;
  s["rtol"] = summary.rtol;
  s["layers"] = summary.layers;
  Json& steps = s["steps"] = Json::array();
  for (size_t i = 0; i < summary.steps.size(); ++i) {
    const PrecisionStep& st = summary.steps[i];
    steps.push_back({{"build", i + 1},
                     {"fp32_layers", st.fp32_layers},
                     {"verdict", st.passed ? "passes" : "fails"},
                     {"seconds", st.seconds}});
  }
  s["passes_reduced"] = summary.passes_reduced;
  s["passes_fp32"] = summary.passes_fp32;
  s["fp32_layers"] = summary.fp32_layers;
  return s;
}

namespace {

constexpr const char* kFailColor = "#d62728";
constexpr const char* kPassColor = "#2ca02c";

// One mark per step, at its candidate size, coloured by verdict.
std::string steps_chart(const Json& steps, const char* size_key, bool size_is_list, const std::string& y_label,
                        const std::string& x_label, const std::string& id) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  svg::Series fails{"fails", {}, kFailColor}, passes{"passes", {}, kPassColor};
  std::vector<std::string> labels;
  for (const auto& st : steps) {
    const double size = size_is_list ? static_cast<double>(st[size_key].size()) : st[size_key].get<double>();
    const bool failed = st["verdict"] == "fails";
    fails.values.push_back(failed ? size : nan);
    passes.values.push_back(failed ? nan : size);
    labels.push_back(st["verdict"].get<std::string>() + ", " + svg::number(size) + " " + y_label);
  }
  svg::LayerChart chart{labels, {fails, passes}, {}, std::nullopt, std::nullopt, y_label, id, x_label, "steps"};
  return svg::layer_chart(chart);
}

std::string seconds(const Json& v) { return svg::number(v.get<double>()); }

void render_reduce(const Json& s, size_t index, std::string& out) {
  const Json& r = s["result"];
  out += "<h2>Reduction of <code>" + svg::escape(s["model"].get<std::string>()) + "</code></h2>\n";
  out += "<p>" + std::to_string(s["node_count"].get<int64_t>()) + " nodes reduced to " +
         std::to_string(r["nodes"].size()) + " in " + std::to_string(r["checks"].get<int64_t>()) + " checks (" +
         std::to_string(r["checks_run"].get<int64_t>()) + " run, " + seconds(r["seconds"]) + " s), mode " +
         svg::escape(s["mode"].get<std::string>()) + ". Check: <code>" + svg::escape(s["check"].get<std::string>()) +
         "</code>. Saved to <code>" + svg::escape(r["output"].get<std::string>()) + "</code>.</p>\n";
  out += "<figure>" +
         steps_chart(s["steps"], "nodes", false, "nodes", "check (in order), " + std::to_string(s["steps"].size()) + " checks",
                     "r" + std::to_string(index)) +
         "<figcaption>Candidate size per check: red still fails, green passes</figcaption></figure>\n";
  out += "<h3>Final subgraph</h3>\n";
  std::vector<std::vector<std::string>> nodes;
  for (const auto& n : r["nodes"])
    nodes.push_back({n["index"].is_number() ? std::to_string(n["index"].get<int64_t>()) : "-",
                     "<code>" + svg::escape(n["label"].get<std::string>()) + "</code>"});
  out += html::table({"node", "name (op)"}, nodes, "reduced-nodes");
  if (r["passing_nodes"].is_number())
    out += "<p>The passing candidate closest in size has " + std::to_string(r["passing_nodes"].get<int64_t>()) +
           " nodes.</p>\n";
  out += "<h3>Checks</h3>\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& st : s["steps"])
    rows.push_back({std::to_string(st["check"].get<int64_t>()), std::to_string(st["nodes"].get<int64_t>()),
                    html::verdict(st["verdict"] == "passes"),
                    st["from_replay"].get<bool>() ? "from the replay" : seconds(st["seconds"]),
                    svg::escape(st["detail"].get<std::string>())});
  out += html::table({"check", "nodes", "verdict", "time (s)", "detail"}, rows, "steps");
}

void render_precision(const Json& s, size_t index, std::string& out) {
  const std::string type = s["reduced_type"].get<std::string>();
  const auto& fp32 = s["fp32_layers"];
  out += "<h2>Layers that must stay fp32 in a " + svg::escape(type) + " plan of <code>" +
         svg::escape(s["model"].get<std::string>()) + "</code></h2>\n<p>";
  if (s["passes_reduced"].get<bool>())
    out += "The " + svg::escape(type) + " plan passes with every layer in " + svg::escape(type) + ".";
  else if (!s["passes_fp32"].get<bool>())
    out += "The plan fails even with every layer in fp32: precision is not the cause.";
  else
    out += std::to_string(fp32.size()) + " of " + std::to_string(s["layers"].size()) + " layers must stay fp32.";
  out += " " + std::to_string(s["steps"].size()) + " plans built (mode " + svg::escape(s["mode"].get<std::string>()) +
         ", direction " + svg::escape(s["direction"].get<std::string>()) + ", atol " + svg::number(s["atol"].get<double>()) +
         ", rtol " + svg::number(s["rtol"].get<double>()) + ").</p>\n";
  out += "<figure>" +
         steps_chart(s["steps"], "fp32_layers", true, "fp32 layers",
                     "plan built (in order), " + std::to_string(s["steps"].size()) + " builds", "p" + std::to_string(index)) +
         "<figcaption>Layers kept in fp32 per plan: red fails, green passes</figcaption></figure>\n";
  const std::set<std::string> must(fp32.begin(), fp32.end());
  std::vector<std::vector<std::string>> layers;
  for (const auto& l : s["layers"]) {
    const std::string name = l.get<std::string>();
    layers.push_back({"<code>" + svg::escape(name) + "</code>", must.count(name) ? "<b>fp32</b>" : svg::escape(type)});
  }
  out += "<h3>Layers</h3>\n" + html::table({"layer (execution order)", "precision"}, layers, "precision-layers");
  std::vector<std::vector<std::string>> rows;
  for (const auto& st : s["steps"]) {
    std::string names;
    for (const auto& l : st["fp32_layers"]) names += (names.empty() ? "" : ", ") + l.get<std::string>();
    rows.push_back({std::to_string(st["build"].get<int64_t>()), std::to_string(st["fp32_layers"].size()),
                    html::verdict(st["verdict"] == "passes"), seconds(st["seconds"]), svg::escape(names)});
  }
  out += "<h3>Plans built</h3>\n" + html::table({"build", "fp32 layers", "verdict", "time (s)", "layers in fp32"}, rows, "steps");
}

const bool kDebugReportRegistered = [] {
  register_section_renderer("debug_reduce", render_reduce);
  register_section_renderer("debug_precision", render_precision);
  return true;
}();

}  // namespace
}  // namespace parity::tools::report
