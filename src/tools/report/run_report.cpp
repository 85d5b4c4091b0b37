#include "tools/report/run_report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "core/dtype.h"
#include "core/stats.h"
#include "tools/report/svg.h"

namespace parity::tools::report {
namespace {

using compare::LayerResult;
using compare::LayerwiseReport;

constexpr int kBinsPerDecade = 4;
constexpr int kMaxBins = 40;
constexpr int kLinearBins = 20;

Json shape_json(const Shape& shape) { return Json(shape); }

Json stats_json(const Tensor& t) {
  try {
    const TensorStats s = compute_stats(t);
    Json j;
    j["mean"] = s.mean;
    j["std_dev"] = s.std_dev;
    j["var"] = s.var;
    j["median"] = s.median;
    j["min"] = s.min;
    j["max"] = s.max;
    j["argmin"] = s.argmin;
    j["argmax"] = s.argmax;
    j["avg_magnitude"] = s.avg_magnitude;
    if (s.has_quantiles) {
      j["p90"] = s.p90;
      j["p95"] = s.p95;
      j["p99"] = s.p99;
    }
    return j;
  } catch (const Error&) {
    return nullptr;  // strings and complex numbers have no statistics (Polygraphy prints an error there)
  }
}

// null (NaN/inf after dump) reads back as NaN.
double num(const Json& j) { return j.is_number() ? j.get<double>() : std::numeric_limits<double>::quiet_NaN(); }

Json output_comparison(const std::string& name0, const Tensor& out0, const std::string& name1, const Tensor& out1,
                       bool passed, const RunReportOptions& options) {
  const double atol = options.tolerances.atol.get(name0), rtol = options.tolerances.rtol.get(name0);
  Json o;
  o["name"] = name0;
  if (name1 != name0) o["name1"] = name1;
  o["passed"] = passed;
  o["dtype"] = std::string(dtype_name(out0.dtype()));
  o["shape"] = shape_json(out0.shape());
  o["atol"] = atol;
  o["rtol"] = rtol;
  o["stats0"] = stats_json(out0);
  o["stats1"] = stats_json(out1);
  try {
    const compare::ErrorStatistics e =
        compare::compute_error_statistics(out0, out1, atol, rtol, options.tolerances.infinities_compare_equal);
    o["error"] = {{"max_absdiff", e.max_absdiff},       {"max_reldiff", e.max_reldiff},
                  {"mean_absdiff", e.mean_absdiff},     {"mean_reldiff", e.mean_reldiff},
                  {"median_absdiff", e.median_absdiff}, {"median_reldiff", e.median_reldiff}};
    o["absdiff_stats"] = stats_json(e.absdiff);
    o["reldiff_stats"] = stats_json(e.reldiff);
    o["abs_histogram"] = error_histogram(e.absdiff);
    o["rel_histogram"] = error_histogram(e.reldiff);
    o["heatmaps"] = error_heatmaps(e.absdiff, options.per_channel, options.heatmap_side, options.max_channels);
  } catch (const Error& err) {
    // Outputs the comparison could not judge numerically (shapes, strings): the verdict stands alone.
    o["error_note"] = err.what();
  }
  return o;
}

}  // namespace

Json error_histogram(const Tensor& errors) {
  int64_t zeros = 0, nonfinite = 0;
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  std::vector<double> values;
  values.reserve(static_cast<size_t>(errors.numel()));
  for (int64_t i = 0; i < errors.numel(); ++i) {
    const double v = std::fabs(errors.value_as_double(i));
    if (!std::isfinite(v)) ++nonfinite;
    else if (v == 0) ++zeros;
    else {
      lo = std::min(lo, v), hi = std::max(hi, v);
      values.push_back(v);
    }
  }
  Json h;
  h["zeros"] = zeros;
  h["nonfinite"] = nonfinite;
  std::vector<double> edges;
  bool log_bins = false;
  if (!values.empty()) {
    const double lo_exp = std::floor(std::log10(lo)), hi_exp = std::ceil(std::log10(hi));
    log_bins = hi_exp - lo_exp > 1;
    if (log_bins) {
      const int bins = std::min(kMaxBins, static_cast<int>(hi_exp - lo_exp) * kBinsPerDecade);
      for (int i = 0; i <= bins; ++i) edges.push_back(std::pow(10.0, lo_exp + (hi_exp - lo_exp) * i / bins));
    } else {
      const double a = lo == hi ? lo * 0.5 : lo, b = lo == hi ? hi * 1.5 : hi;
      for (int i = 0; i <= kLinearBins; ++i) edges.push_back(a + (b - a) * i / kLinearBins);
    }
  }
  std::vector<int64_t> counts(edges.empty() ? 0 : edges.size() - 1, 0);
  for (double v : values) {
    const auto it = std::upper_bound(edges.begin(), edges.end(), v);
    const size_t bin = std::clamp<size_t>(static_cast<size_t>(it - edges.begin()), 1, counts.size()) - 1;
    ++counts[bin];
  }
  h["log"] = log_bins;
  h["edges"] = edges;
  h["counts"] = counts;
  return h;
}

Json error_heatmaps(const Tensor& errors, bool per_channel, int64_t side, int64_t max_channels) {
  Json maps = Json::array();
  const Shape& shape = errors.shape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank < 2 || rank > 4 || errors.numel() == 0) return maps;
  const int64_t h = shape[rank - 2], w = shape[rank - 1];
  const int64_t channels = rank >= 3 ? shape[rank - 3] : 1;
  const int64_t planes = errors.numel() / (h * w);  // batch x channels
  const int64_t fy = (h + side - 1) / side, fx = (w + side - 1) / side;
  const int64_t rows = (h + fy - 1) / fy, cols = (w + fx - 1) / fx;
  const bool split = per_channel && rank >= 3;
  const int64_t groups = split ? std::min(channels, max_channels) : 1;
  for (int64_t g = 0; g < groups; ++g) {
    std::vector<double> cells(static_cast<size_t>(rows * cols), 0.0);
    for (int64_t p = 0; p < planes; ++p) {
      if (split && p % channels != g) continue;
      const int64_t base = p * h * w;
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          const double v = std::fabs(errors.value_as_double(base + y * w + x));
          double& cell = cells[static_cast<size_t>(y / fy * cols + x / fx)];
          // NaN wins: a NaN anywhere in a cell is the most important thing to see there.
          if (!std::isnan(cell) && (std::isnan(v) || v > cell)) cell = v;
        }
    }
    Json m;
    m["label"] = split ? "channel " + std::to_string(g) : (rank >= 3 ? "max over " + std::string(rank == 4 ? "batch and " : "") + "channels" : "");
    m["rows"] = rows;
    m["cols"] = cols;
    m["cell"] = {fy, fx};
    m["values"] = cells;
    maps.push_back(std::move(m));
  }
  return maps;
}

Json run_section(const RunResults& results, const std::vector<std::pair<size_t, size_t>>& comparisons,
                 const compare::AccuracyResult* accuracy, bool passed, const RunReportOptions& options) {
  Json s;
  s["type"] = "run";
  s["passed"] = passed;
  Json& runners = s["runners"] = Json::array();
  for (const auto& [name, iterations] : results.runs) {
    Json r;
    r["name"] = name;
    r["iterations"] = iterations.size();
    Json times = Json::array();
    for (const auto& it : iterations) times.push_back(it.runtime ? Json(*it.runtime) : Json(nullptr));
    r["runtimes_s"] = times;
    runners.push_back(std::move(r));
  }
  Json& pairs = s["comparisons"] = Json::array();
  for (size_t p = 0; p < comparisons.size(); ++p) {
    const auto& [a, b] = comparisons[p];
    const auto& run0 = results.runs[a];
    const auto& run1 = results.runs[b];
    for (size_t i = 0; i < std::min(run0.second.size(), run1.second.size()); ++i) {
      const compare::IterationMatch* match =
          accuracy && p < accuracy->pairs().size() && i < accuracy->pairs()[p].iterations.size()
              ? &accuracy->pairs()[p].iterations[i] : nullptr;
      Json c;
      c["runner0"] = run0.first;
      c["runner1"] = run1.first;
      c["iteration"] = i;
      Json outputs = Json::array();
      bool all = true;
      const TensorMap& outs0 = run0.second[i].outputs;
      const TensorMap& outs1 = run1.second[i].outputs;
      for (const auto& name : outs0.names()) {
        const auto other = compare::match_output_name(name, outs0.names(), outs1.names());
        if (!other) continue;
        bool ok = true;
        if (match)
          for (const auto& [n, r] : *match)
            if (n == name) ok = r.passed;
        all &= ok;
        outputs.push_back(output_comparison(name, outs0.at(name), *other, outs1.at(*other), ok, options));
      }
      c["passed"] = all;
      c["outputs"] = std::move(outputs);
      pairs.push_back(std::move(c));
    }
  }
  // Runs compared with nothing (one runner, or --load-outputs alone): their outputs' statistics.
  Json& alone = s["outputs"] = Json::array();
  for (size_t r = 0; r < results.runs.size(); ++r) {
    const bool compared = std::any_of(comparisons.begin(), comparisons.end(),
                                      [&](const auto& c) { return c.first == r || c.second == r; });
    if (compared) continue;
    const auto& [name, iterations] = results.runs[r];
    for (size_t i = 0; i < iterations.size(); ++i)
      for (const auto& out : iterations[i].outputs.names()) {
        const Tensor& t = iterations[i].outputs.at(out);
        alone.push_back({{"runner", name}, {"iteration", i}, {"name", out}, {"dtype", std::string(dtype_name(t.dtype()))},
                         {"shape", shape_json(t.shape())}, {"stats", stats_json(t)}});
      }
  }
  return s;
}

namespace {

// Where the divergence starts: the node whose inputs agree and whose output does not, with each
// input's errors (or that it is a model input or weight, the same on both sides) and the output's.
Json divergence_start_json(const LayerwiseReport& r, size_t at, const compare::SimpleCompareOptions& tolerances) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < r.layers.size(); ++i) index.emplace(r.layers[i].name, i);
  const LayerResult& out = r.layers[at];
  auto errors = [&](const LayerResult& l, Json j) {
    j["max_absdiff"] = l.max_absdiff;
    j["max_reldiff"] = l.max_reldiff;
    j["atol"] = tolerances.atol.get(l.name);
    j["rtol"] = tolerances.rtol.get(l.name);
    j["passed"] = l.passed;
    return j;
  };
  Json inputs = Json::array();
  for (const auto& name : out.inputs) {
    auto it = index.find(name);
    if (it == index.end() || r.layers[it->second].op_type == "Constant") {
      inputs.push_back({{"name", name}, {"layer", nullptr}, {"shared", true}});
      continue;
    }
    inputs.push_back(errors(r.layers[it->second], {{"name", name}, {"layer", it->second}, {"shared", false}}));
  }
  return {{"layer", at}, {"node", out.node}, {"op_type", out.op_type}, {"inputs", std::move(inputs)},
          {"output", errors(out, {{"name", out.name}, {"layer", at}})}};
}

}  // namespace

Json layerwise_section(const std::vector<LayerwiseReport>& iterations, const compare::SimpleCompareOptions& tolerances) {
  std::vector<LayerwiseComparison> comparisons;
  for (size_t i = 0; i < iterations.size(); ++i) comparisons.push_back({iterations[i], i, ""});
  return layerwise_section(comparisons, tolerances);
}

Json layerwise_section(const std::vector<LayerwiseComparison>& comparisons, const compare::SimpleCompareOptions& tolerances) {
  Json s;
  s["type"] = "layerwise";
  s["reference"] = comparisons.empty() ? "" : comparisons.front().report.reference_name;
  s["peer"] = comparisons.empty() ? "" : comparisons.front().report.peer_name;
  s["error_stat"] = compare::error_stat_name(tolerances.check_error_stat.default_value());
  bool passed = true;
  Json& list = s["iterations"] = Json::array();
  for (const LayerwiseComparison& c : comparisons) {
    const LayerwiseReport& r = c.report;
    passed &= r.passed();
    Json it;
    it["iteration"] = c.iteration;
    it["reference"] = r.reference_name;
    it["peer"] = r.peer_name;
    it["golden_file"] = c.golden_file.empty() ? Json(nullptr) : Json(c.golden_file);
    it["passed"] = r.passed();
    it["first_failure"] = r.first_failure ? Json(*r.first_failure) : Json(nullptr);
    // Comparisons that did not look for it (one runner against a golden run) get it here.
    const std::optional<size_t> start = r.divergence_start ? r.divergence_start
                                        : r.first_failure  ? compare::find_divergence_start(r)
                                                           : std::nullopt;
    it["divergence_start"] = start ? divergence_start_json(r, *start, tolerances) : Json(nullptr);
    it["memory"] = {{"peak_rss_bytes", r.peak_rss_bytes},
                    {"total_tensor_bytes", r.total_tensor_bytes},
                    {"largest_tensor_bytes", r.largest_tensor_bytes},
                    {"peak_peer_bytes_held", r.peak_peer_bytes_held},
                    {"peer_runs", r.peer_runs}};
    if (!c.golden_file.empty()) it["memory"]["golden_file_bytes"] = r.golden_file_bytes;
    Json& layers = it["layers"] = Json::array();
    for (const LayerResult& l : r.layers) {
      Json j;
      j["name"] = l.name;
      j["node"] = l.node;
      j["op_type"] = l.op_type;
      j["inputs"] = l.inputs;
      j["dtype"] = std::string(dtype_name(l.dtype));
      j["shape"] = shape_json(l.shape);
      j["compared"] = l.compared;
      j["passed"] = l.passed;
      if (l.compared) {
        j["max_absdiff"] = l.max_absdiff;
        j["mean_absdiff"] = l.mean_absdiff;
        j["max_reldiff"] = l.max_reldiff;
        j["mean_reldiff"] = l.mean_reldiff;
      }
      j["atol"] = tolerances.atol.get(l.name);
      j["rtol"] = tolerances.rtol.get(l.name);
      if (!l.note.empty()) j["note"] = l.note;
      layers.push_back(std::move(j));
    }
    list.push_back(std::move(it));
  }
  s["passed"] = passed;
  return s;
}

// ---- HTML ----------------------------------------------------------------------------------------

namespace {

std::string stat_cells(const Json& s) {
  if (!s.is_object()) return "<td colspan=\"8\">no statistics for this dtype</td>";
  std::string out;
  for (const char* k : {"mean", "std_dev", "median", "min", "max", "avg_magnitude", "p90", "p99"})
    out += "<td class=\"num\">" + (s.contains(k) ? svg::number(num(s[k])) : std::string("-")) + "</td>";
  return out;
}

svg::Histogram histogram_from(const Json& h, const std::string& label, std::optional<double> threshold) {
  svg::Histogram out;
  out.edges = h["edges"].get<std::vector<double>>();
  out.counts = h["counts"].get<std::vector<int64_t>>();
  out.zeros = h.value("zeros", int64_t{0});
  out.nonfinite = h.value("nonfinite", int64_t{0});
  out.log_x = h.value("log", false);
  out.x_label = label;
  out.threshold = threshold;
  return out;
}

void render_output(const Json& c, const Json& o, std::string& out) {
  out += "<h3>" + svg::escape(o["name"].get<std::string>()) + " " + html::verdict(o["passed"].get<bool>()) + "</h3>\n";
  out += "<p>" + svg::escape(o["dtype"].get<std::string>()) + " [" + svg::escape(o["shape"].dump()) + "], atol=" +
         svg::number(num(o["atol"])) + ", rtol=" + svg::number(num(o["rtol"])) + "</p>\n";
  out += "<table><tr><th></th><th>mean</th><th>std-dev</th><th>median</th><th>min</th><th>max</th><th>avg-magnitude</th>"
         "<th>p90</th><th>p99</th></tr>\n";
  const std::pair<std::string, const char*> rows[] = {{c["runner0"].get<std::string>(), "stats0"},
                                                      {c["runner1"].get<std::string>(), "stats1"},
                                                      {"absolute difference", "absdiff_stats"},
                                                      {"relative difference", "reldiff_stats"}};
  for (const auto& [label, key] : rows)
    if (o.contains(key)) out += "<tr><th>" + svg::escape(label) + "</th>" + stat_cells(o[key]) + "</tr>\n";
  out += "</table>\n";
  if (o.contains("error_note")) {
    out += "<p>" + svg::escape(o["error_note"].get<std::string>()) + "</p>\n";
    return;
  }
  out += "<div class=\"charts\">";
  out += "<figure>" + svg::histogram(histogram_from(o["abs_histogram"], "absolute error", num(o["atol"]))) +
         "<figcaption>Absolute error |" + svg::escape(c["runner0"].get<std::string>()) + " - " +
         svg::escape(c["runner1"].get<std::string>()) + "|</figcaption></figure>";
  out += "<figure>" + svg::histogram(histogram_from(o["rel_histogram"], "relative error", num(o["rtol"]))) +
         "<figcaption>Relative error</figcaption></figure>";
  out += "</div>\n";
  if (!o["heatmaps"].empty()) {
    out += "<div class=\"charts\">";
    for (const auto& m : o["heatmaps"]) {
      svg::Heatmap h;
      h.rows = m["rows"].get<int64_t>();
      h.cols = m["cols"].get<int64_t>();
      for (const auto& v : m["values"]) h.values.push_back(num(v));
      h.label = m["label"].get<std::string>();
      out += "<figure>" + svg::heatmap(h) + "<figcaption>Absolute error over the last two axes (max per " +
             std::to_string(m["cell"][0].get<int64_t>()) + "x" + std::to_string(m["cell"][1].get<int64_t>()) +
             " cell)</figcaption></figure>";
    }
    out += "</div>\n";
  }
}

void render_run(const Json& s, size_t, std::string& out) {
  out += "<h2>Comparison " + html::verdict(s["passed"].get<bool>()) + "</h2>\n";
  std::vector<std::vector<std::string>> runner_rows;
  for (const auto& r : s["runners"]) {
    double total = 0;
    int timed = 0;
    for (const auto& t : r["runtimes_s"])
      if (t.is_number()) total += t.get<double>(), ++timed;
    runner_rows.push_back({svg::escape(r["name"].get<std::string>()), std::to_string(r["iterations"].get<int64_t>()),
                           timed ? svg::number(total / timed * 1e3) : "-"});
  }
  out += html::table({"runner", "iterations", "mean inference (ms)"}, runner_rows);
  std::vector<std::vector<std::string>> summary;
  for (const auto& c : s["comparisons"])
    for (const auto& o : c["outputs"])
      summary.push_back({svg::escape(c["runner0"].get<std::string>() + " vs " + c["runner1"].get<std::string>()),
                         std::to_string(c["iteration"].get<int64_t>()), svg::escape(o["name"].get<std::string>()),
                         o.contains("error") ? svg::number(num(o["error"]["max_absdiff"])) : "-",
                         o.contains("error") ? svg::number(num(o["error"]["max_reldiff"])) : "-",
                         o.contains("error") ? svg::number(num(o["error"]["mean_absdiff"])) : "-",
                         html::verdict(o["passed"].get<bool>())});
  if (!summary.empty())
    out += html::table({"pair", "iteration", "output", "max abs error", "max rel error", "mean abs error", "verdict"}, summary);
  for (const auto& c : s["comparisons"]) {
    out += "<h2>" + svg::escape(c["runner0"].get<std::string>()) + " vs " + svg::escape(c["runner1"].get<std::string>()) +
           ", iteration " + std::to_string(c["iteration"].get<int64_t>()) + " " + html::verdict(c["passed"].get<bool>()) +
           "</h2>\n";
    for (const auto& o : c["outputs"]) render_output(c, o, out);
  }
  if (!s["outputs"].empty()) {
    out += "<h2>Outputs not compared</h2>\n<table><tr><th>runner</th><th>iteration</th><th>output</th><th>shape</th>"
           "<th>mean</th><th>std-dev</th><th>median</th><th>min</th><th>max</th><th>avg-magnitude</th><th>p90</th><th>p99</th></tr>\n";
    for (const auto& o : s["outputs"])
      out += "<tr><td>" + svg::escape(o["runner"].get<std::string>()) + "</td><td class=\"num\">" +
             std::to_string(o["iteration"].get<int64_t>()) + "</td><td>" + svg::escape(o["name"].get<std::string>()) +
             "</td><td>" + svg::escape(o["shape"].dump()) + "</td>" + stat_cells(o["stats"]) + "</tr>\n";
    out += "</table>\n";
  }
}

// Clicking a layer (a column of either chart) shows its statistics; the first divergence (else the
// largest error) is shown when the page opens. Text goes in through textContent, never as markup.
constexpr const char* kLayerScript = R"(<script>
(function(){
var id=document.currentScript.dataset.section;
var layers=JSON.parse(document.getElementById('layers-'+id).textContent);
var panel=document.getElementById('detail-'+id);
function f(v){return v===null||v===undefined?'-':(typeof v==='number'?Number(v).toPrecision(5):String(v));}
function show(i){
 var l=layers[i];panel.textContent='';
 var t=document.createElement('table');
 [['layer',i],['tensor',l.name],['node',l.node],['op',l.op_type],['dtype',l.dtype],['shape',l.shape.join('x')],
  ['verdict',l.compared?(l.passed?'passed':'FAILED'):'not compared'+(l.note?': '+l.note:'')],
  ['max abs error',f(l.max_absdiff)],['mean abs error',f(l.mean_absdiff)],['max rel error',f(l.max_reldiff)],
  ['mean rel error',f(l.mean_reldiff)],['atol',f(l.atol)],['rtol',f(l.rtol)]].forEach(function(r){
  var tr=t.insertRow();var a=tr.insertCell();a.textContent=r[0];var b=tr.insertCell();b.textContent=r[1];});
 panel.appendChild(t);panel.dataset.layer=i;
 document.querySelectorAll('rect.hit[data-chart^="'+id+'-"]').forEach(function(r){
  r.classList.toggle('selected',+r.dataset.layer===i);});
}
document.querySelectorAll('rect.hit[data-chart^="'+id+'-"]').forEach(function(r){
 r.addEventListener('click',function(){show(+r.dataset.layer);});});
show(+panel.dataset.initial);
})();
</script>
)";

// The node where the divergence starts: its inputs' errors (within tolerance, or shared model
// inputs and weights) against its output's (beyond tolerance).
void render_divergence_start(const Json& d, std::string& out) {
  if (!d.is_object()) {
    out += "<p class=\"divergence-start\">No failing layer has all of its inputs within tolerance (some inputs were not "
           "compared): the divergence may start before the first failing layer.</p>\n";
    return;
  }
  out += "<p class=\"divergence-start\">Divergence starts at node <code>" + svg::escape(d["node"].get<std::string>()) +
         "</code> (" + svg::escape(d["op_type"].get<std::string>()) + ", layer " + std::to_string(d["layer"].get<int64_t>()) +
         "): its inputs are within tolerance, its output is not.</p>\n";
  auto row = [](const std::string& role, const Json& t, const std::string& verdict) {
    return std::vector<std::string>{role, "<code>" + svg::escape(t["name"].get<std::string>()) + "</code>",
                                    svg::number(num(t["max_absdiff"])), svg::number(num(t["max_reldiff"])),
                                    svg::number(num(t["atol"])), svg::number(num(t["rtol"])), verdict};
  };
  std::vector<std::vector<std::string>> rows;
  for (const auto& in : d["inputs"]) {
    if (in["shared"].get<bool>())
      rows.push_back({"input", "<code>" + svg::escape(in["name"].get<std::string>()) + "</code>", "-", "-", "-", "-",
                      "model input or weight (the same on both sides)"});
    else
      rows.push_back(row("input", in, "within tolerance"));
  }
  rows.push_back(row("output", d["output"], "exceeds tolerance"));
  out += html::table({"", "tensor", "max abs error", "max rel error", "atol", "rtol", ""}, rows, "divergence-start");
}

void render_layerwise(const Json& s, size_t index, std::string& out) {
  const std::string peer = s["peer"].get<std::string>();
  out += "<h2>Layer-wise comparison: " + svg::escape(s["reference"].get<std::string>()) +
         (peer.empty() ? "" : " vs " + svg::escape(peer)) + " " + html::verdict(s["passed"].get<bool>()) + "</h2>\n";
  size_t entry = 0;
  for (const auto& it : s["iterations"]) {
    // Unique per comparison: a feed compared with a peer and with golden runs has several.
    const std::string id = "s" + std::to_string(index) + "i" + std::to_string(entry++);
    const Json& layers = it["layers"];
    std::vector<std::string> labels;
    svg::Series max_abs{"max abs error", {}, "#1f77b4"}, mean_abs{"mean abs error", {}, "#9ecae9"};
    svg::Series max_rel{"max rel error", {}, "#ff7f0e"}, mean_rel{"mean rel error", {}, "#ffbb78"};
    std::vector<double> atol, rtol;
    size_t worst = 0;
    double worst_value = -1;
    for (size_t i = 0; i < layers.size(); ++i) {
      const Json& l = layers[i];
      labels.push_back(l["name"].get<std::string>() + " (" + l["op_type"].get<std::string>() + ")");
      const double nan = std::numeric_limits<double>::quiet_NaN();
      max_abs.values.push_back(l.contains("max_absdiff") ? num(l["max_absdiff"]) : nan);
      mean_abs.values.push_back(l.contains("mean_absdiff") ? num(l["mean_absdiff"]) : nan);
      max_rel.values.push_back(l.contains("max_reldiff") ? num(l["max_reldiff"]) : nan);
      mean_rel.values.push_back(l.contains("mean_reldiff") ? num(l["mean_reldiff"]) : nan);
      atol.push_back(num(l["atol"]));
      rtol.push_back(num(l["rtol"]));
      if (max_abs.values.back() > worst_value) worst_value = max_abs.values.back(), worst = i;
    }
    std::optional<size_t> first;
    if (it["first_failure"].is_number()) first = it["first_failure"].get<size_t>();
    std::optional<size_t> start;
    if (it.contains("divergence_start") && it["divergence_start"].is_object())
      start = it["divergence_start"]["layer"].get<size_t>();
    const int64_t compared = std::count_if(layers.begin(), layers.end(), [](const Json& l) { return l["compared"].get<bool>(); });
    const std::string it_peer = it.value("peer", peer);
    std::string against;
    if (it.contains("golden_file") && it["golden_file"].is_string())
      against = " against the stored run of " + svg::escape(it_peer) + " in <code>" +
                svg::escape(it["golden_file"].get<std::string>()) + "</code>";
    else if (!it_peer.empty() && it_peer != peer)
      against = " against " + svg::escape(it_peer);
    out += "<h3>Iteration " + std::to_string(it["iteration"].get<int64_t>()) + against + " " +
           html::verdict(it["passed"].get<bool>()) + "</h3>\n<p>" + std::to_string(layers.size()) + " tensors in execution order, " + std::to_string(compared) +
           " compared. " +
           (first ? "First divergence beyond tolerance at layer " + std::to_string(*first) + ": <code>" +
                        svg::escape(layers[*first]["name"].get<std::string>()) + "</code> (" +
                        svg::escape(layers[*first]["op_type"].get<std::string>()) + ")."
                  : std::string("No layer diverges beyond tolerance.")) +
           " Click a layer to see its statistics.</p>\n";
    if (it_peer.empty()) {
      out += "<p>No peer runner: reference statistics only.</p>\n";
    } else {
      out += "<figure>" + svg::layer_chart({labels, {max_abs, mean_abs}, atol, first, start, "absolute error", id + "-abs"}) +
             "<figcaption>Absolute error per layer against atol</figcaption></figure>\n";
      out += "<figure>" + svg::layer_chart({labels, {max_rel, mean_rel}, rtol, first, start, "relative error", id + "-rel"}) +
             "<figcaption>Relative error per layer against rtol</figcaption></figure>\n";
      if (first) render_divergence_start(it["divergence_start"], out);
    }
    out += "<div class=\"detail\" id=\"detail-" + id + "\" data-initial=\"" + std::to_string(first.value_or(worst)) + "\"></div>\n";
    out += html::json_script("layers-" + id, layers);
    std::string script = kLayerScript;
    script.replace(script.find("<script>"), 8, "<script data-section=\"" + id + "\">");
    out += script;
    const Json& m = it["memory"];
    auto mib = [](const Json& v) { return svg::number(num(v) / (1 << 20)); };
    out += html::table({"peak resident (MiB)", "all intermediate tensors (MiB)", "largest tensor (MiB)",
                        "peer outputs held at once (MiB)", "peer runs (windows)"},
                       {{mib(m["peak_rss_bytes"]), mib(m["total_tensor_bytes"]), mib(m["largest_tensor_bytes"]),
                         mib(m["peak_peer_bytes_held"]), std::to_string(m["peer_runs"].get<int64_t>())}});
  }
}

const bool kRunReportRegistered = [] {
  register_section_renderer("run", render_run);
  register_section_renderer("layerwise", render_layerwise);
  return true;
}();

}  // namespace
}  // namespace parity::tools::report
