#include "tools/bench/report.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <thread>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "core/metadata.h"
#include "core/version.h"
#include "runners/registry.h"
#include "runtime/cpu_isa.h"

namespace parity::tools::bench {

using Json = nlohmann::ordered_json;

namespace {

// 3 significant digits, never scientific: 0.0123, 1.23, 12.3, 1234.
std::string fixed3(double v) {
  const int digits = v >= 100 ? 0 : v >= 10 ? 1 : v >= 1 ? 2 : v >= 0.1 ? 3 : 4;
  return fmt::format("{:.{}f}", v, digits);
}

// The --profile-top slowest operator types of a row.
std::vector<OpTime> top_ops(const Row& row, const Settings& s) {
  const size_t n = std::min(row.ref_profile.size(), static_cast<size_t>(s.profile_top));
  return {row.ref_profile.begin(), row.ref_profile.begin() + static_cast<std::ptrdiff_t>(n)};
}

// Percent of `total` that `part` is (0 for an empty total).
double share_percent(double part, double total) { return total > 0 ? 100.0 * part / total : 0.0; }

std::string first_line(std::string text, size_t max_chars) {
  text = text.substr(0, text.find('\n'));
  if (text.size() > max_chars) text = text.substr(0, max_chars - 3) + "...";
  return text;
}

std::string read_first_match(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return first_line(line.substr(line.find_first_not_of(" \t", colon + 1)), 200);
    }
  return {};
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:%Y-%m-%d %H:%M} UTC", tm);
}

// A runner without figures shows "n/a (k)"; note k under the table says why (equal reasons share
// one note, e.g. the same import failure at every thread count).
std::string cell_text(const RunnerCell& c, const Row& row, std::vector<std::string>& notes) {
  if (!c.unavailable.empty()) {
    // The row names the model: its path inside the reason is only noise.
    std::string reason = first_line(c.unavailable, 400);
    const std::string file = std::filesystem::path(row.model).filename().string();
    for (size_t at = reason.find(row.model); at != std::string::npos; at = reason.find(row.model, at + file.size()))
      reason.replace(at, row.model.size(), file);
    const std::string note = str_cat(c.runner, " on ", row.label, ": ", reason);
    auto it = std::find(notes.begin(), notes.end(), note);
    if (it == notes.end()) it = notes.insert(notes.end(), note);
    return str_cat("n/a (", it - notes.begin() + 1, ")");
  }
  return fixed3(c.median() * 1e3) + " (" + fixed3(percentile(c.samples, 10) * 1e3) + "-" +
         fixed3(percentile(c.samples, 90) * 1e3) + ")";
}

bool has_runner(const Settings& s, const std::string& runner) {
  return std::count(s.runners.begin(), s.runners.end(), runner) > 0;
}

// "41.2 (38%)": ref's achieved GFLOP/s and its share of the row's thread count's sgemm ceiling.
std::string gflops_text(const Row& row, const Settings& s) {
  const auto achieved = achieved_gflops(row, "ref");
  if (!achieved) return "-";
  auto ceiling = s.sgemm_gflops.find(row.threads);
  if (ceiling == s.sgemm_gflops.end() || ceiling->second <= 0) return fixed3(*achieved);
  return fmt::format("{} ({:.0f}%)", fixed3(*achieved), 100.0 * *achieved / ceiling->second);
}

// "sgemm ceiling (ref MatMul 1024x1024x1024): 1 thread 52.1 GFLOP/s, 2 threads 101 GFLOP/s".
std::string ceiling_summary(const Settings& s) {
  std::string out;
  for (const auto& [threads, gflops] : s.sgemm_gflops)
    out += str_cat(out.empty() ? "" : ", ", threads, " thread", threads == 1 ? " " : "s ", fixed3(gflops), " GFLOP/s");
  return out.empty() ? out : "sgemm ceiling (ref MatMul 1024x1024x1024, best run): " + out;
}

// With --percentile: "  resnet50 at 1 thread(s): ref p90 80.1, p99 85.2 | ort p90 ..." per row.
std::string percentile_lines(const std::vector<Row>& rows, const Settings& s, const std::string& indent) {
  if (s.percentiles.empty()) return {};
  std::string out = indent + "Latency percentiles (ms):\n";
  for (const auto& row : rows) {
    std::string line;
    for (const auto& c : row.cells) {
      if (!c.unavailable.empty() || c.samples.empty()) continue;
      std::string figures;
      for (double q : s.percentiles)
        figures += fmt::format("{}p{:g} {}", figures.empty() ? "" : ", ", q, fixed3(percentile(c.samples, q) * 1e3));
      line += (line.empty() ? "" : " | ") + c.runner + " " + figures;
    }
    if (!line.empty()) out += str_cat(indent, "  ", row.label, " at ", row.threads, " thread(s): ", line, "\n");
  }
  return out;
}

bool has_ratio(const Settings& s) {
  return std::count(s.runners.begin(), s.runners.end(), "ref") && std::count(s.runners.begin(), s.runners.end(), "ort");
}

std::vector<std::vector<std::string>> table(const std::vector<Row>& rows, const Settings& s,
                                                   std::vector<std::string>& notes) {
  std::vector<std::vector<std::string>> t;
  std::vector<std::string> header = {"model", "input", "threads"};
  for (const auto& r : s.runners) header.push_back(r + " ms median (p10-p90)");
  if (has_ratio(s)) header.push_back("ref/ort");
  const bool gflops = has_runner(s, "ref") && std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.flops > 0; });
  if (gflops) header.push_back(s.sgemm_gflops.empty() ? "ref GFLOP/s" : "ref GFLOP/s (of sgemm)");
  t.push_back(header);
  for (const auto& row : rows) {
    std::vector<std::string> line = {row.label, row.inputs.empty() ? "-" : row.inputs, std::to_string(row.threads)};
    for (const auto& c : row.cells) line.push_back(cell_text(c, row, notes));
    if (has_ratio(s)) {
      const auto ratio = ref_over_ort(row);
      line.push_back(ratio ? fixed3(*ratio) + "x" : "-");
    }
    if (gflops) line.push_back(gflops_text(row, s));
    t.push_back(line);
  }
  return t;
}

// Median over the models of each runner's CPU time per wall time, per thread count: how many
// cores a runner kept busy. Below 1 at one thread means the machine did not give it a whole core.
std::string cpu_summary(const std::vector<Row>& rows, const Settings& s) {
  std::string out;
  for (int threads : s.threads) {
    std::string line;
    for (const auto& runner : s.runners) {
      std::vector<double> shares;
      for (const auto& row : rows)
        if (const RunnerCell* c = row.threads == threads ? row.cell(runner) : nullptr)
          shares.push_back(c->cpu_seconds / std::accumulate(c->samples.begin(), c->samples.end(), 0.0));
      if (shares.empty()) continue;
      std::sort(shares.begin(), shares.end());
      line += fmt::format("{}{} {:.2f}", line.empty() ? "" : ", ", runner, percentile(shares, 50));
    }
    if (!line.empty()) out += str_cat(out.empty() ? "" : "; ", threads, " thread", threads == 1 ? "" : "s", ": ", line);
  }
  return out.empty() ? out : "CPU time per wall time (median over models): " + out;
}

// Geometric mean of ref/ort over the models, per thread count.
std::string ratio_summary(const std::vector<Row>& rows, const Settings& s) {
  if (!has_ratio(s)) return {};
  std::string out;
  for (int threads : s.threads) {
    double log_sum = 0.0;
    int count = 0;
    for (const auto& row : rows)
      if (row.threads == threads)
        if (auto r = ref_over_ort(row)) log_sum += std::log(*r), ++count;
    if (count)
      out += str_cat(out.empty() ? "" : ", ", threads, " thread", threads == 1 ? "" : "s", ": ",
                     fixed3(std::exp(log_sum / count)), "x over ", count, " model", count == 1 ? "" : "s");
  }
  return out.empty() ? out : "ref/ort geometric mean: " + out;
}

/// The vector tier ref's kernels ran at: the CPU's, lowered to --isa.
std::string kernel_tier(const Settings& s) {
  const std::optional<runtime::KernelIsa> cap = runtime::parse_kernel_isa(s.isa);
  const runtime::KernelIsa cpu = runtime::cpu_kernel_isa();
  return runtime::kernel_isa_name(cap ? runtime::min_isa(cpu, *cap) : cpu);
}

std::string markdown_escape(std::string text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  double one = 0, five = 0, fifteen = 0;
  if (!(in >> one >> five >> fifteen)) return "unknown";
  return fmt::format("{:.2f} {:.2f} {:.2f}", one, five, fifteen);
}

std::string machine_line(const Settings& s) {
  const std::string cpu = runtime::cpu_model_name();
  const std::string dnnl = runtime::dnnl_isa_name();
  return str_cat(cpu.empty() ? "unknown CPU" : cpu, "; ref's vector kernels ", kernel_tier(s),
                 s.isa == "native" ? "" : " (capped: --isa " + s.isa + ")",
                 dnnl.empty() ? "" : "; oneDNN " + dnnl + " " + runtime::dnnl_library_version());
}

std::string text_table(const std::vector<Row>& rows, const Settings& s) {
  std::vector<std::string> notes;
  const auto t = table(rows, s, notes);
  std::vector<size_t> width(t[0].size(), 0);
  for (const auto& line : t)
    for (size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], line[c].size());
  std::string out = "\nMachine: " + machine_line(s) + "\nLatency (ms, median and p10-p90 over alternating timed runs):\n";
  for (size_t l = 0; l < t.size(); ++l) {
    out += " ";
    for (size_t c = 0; c < t[l].size(); ++c) out += fmt::format(" {:<{}} ", t[l][c], width[c]);
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
  for (size_t i = 0; i < notes.size(); ++i) out += str_cat("  (", i + 1, ") ", notes[i], "\n");
  const std::string summary = ratio_summary(rows, s), cpu = cpu_summary(rows, s), ceiling = ceiling_summary(s);
  return out + (summary.empty() ? "" : "  " + summary + "\n") + (cpu.empty() ? "" : "  " + cpu + "\n") +
         (ceiling.empty() ? "" : "  " + ceiling + "\n") + percentile_lines(rows, s, "  ");
}

std::string profile_text(const std::vector<Row>& rows, const Settings& s) {
  std::string out;
  for (const auto& row : rows) {
    if (row.ref_profile.empty()) continue;
    out += str_cat("\nref per operator type: ", row.label, " at ", row.threads, " thread(s), ",
                   fixed3(row.ref_profile_total * 1e3), " ms per run\n");
    for (const OpTime& t : top_ops(row, s))
      out += fmt::format("  {:<24} {:>4} node{} {:>10} ms {:>5.1f}%\n", t.op_type, t.nodes, t.nodes == 1 ? " " : "s",
                         fixed3(t.seconds * 1e3), share_percent(t.seconds, row.ref_profile_total));
    out += "  slowest nodes:\n";
    for (size_t i = 0; i < row.ref_nodes.size() && i < static_cast<size_t>(s.profile_top); ++i) {
      const NodeTime& t = row.ref_nodes[i];
      out += str_cat("    ", fixed3(t.seconds * 1e3), " ms  ", t.op_type, t.detail.empty() ? "" : " " + t.detail,
                     " -> ", t.output_shape.empty() ? "?" : t.output_shape, "  (", t.name, ")\n");
    }
  }
  return out;
}

std::string markdown(const std::vector<Row>& rows, const Settings& s, const Json& report) {
  const Json& machine = report["machine"];
  std::string out = str_cat("Measured ", machine["date"].get<std::string>(), " on ", machine["cpu"].get<std::string>(),
                            " (", machine["logical_cpus"].get<int>(), " logical CPUs, load average ",
                            machine["load_average_before"].get<std::string>(), " before, ",
                            machine["load_average_after"].get<std::string>(), " after; ", machine_line(s), "); ");
  std::vector<std::string> versions;
  for (const auto& [name, version] : report["runners"].items())
    versions.push_back(name + " " + version.get<std::string>());
  out += str_cat("runners: ", join_names(versions), ". Median latency in ms (p10-p90) over at least ", s.iterations,
                 " alternating timed runs and ", s.min_time, " s per row, after ", s.warm_up, " warm-up run", s.warm_up == 1 ? "" : "s", ".\n\n");
  std::vector<std::string> notes;
  const auto t = table(rows, s, notes);
  for (size_t l = 0; l < t.size(); ++l) {
    out += "|";
    for (const auto& cell : t[l]) out += " " + markdown_escape(cell) + " |";
    out += "\n";
    if (l == 0) {
      out += "|";
      for (size_t c = 0; c < t[l].size(); ++c) out += c < 3 ? "---|" : "--:|";
      out += "\n";
    }
  }
  if (!notes.empty()) out += "\n";
  for (size_t i = 0; i < notes.size(); ++i) out += str_cat("(", i + 1, ") ", markdown_escape(notes[i]), "  \n");
  const std::string summary = ratio_summary(rows, s);
  if (!summary.empty()) out += "\n" + summary + ".\n";
  const std::string cpu = cpu_summary(rows, s);
  if (!cpu.empty()) out += "\n" + cpu + ".\n";
  const std::string ceiling = ceiling_summary(s);
  if (!ceiling.empty()) out += "\n" + ceiling + ".\n";
  if (!s.percentiles.empty()) out += "\n" + percentile_lines(rows, s, "");
  for (const auto& row : rows) {
    if (row.ref_profile.empty()) continue;
    out += str_cat("\nref per operator type, ", row.label, " at ", row.threads, " thread(s) (",
                   fixed3(row.ref_profile_total * 1e3), " ms per run):\n\n| op | nodes | ms | share |\n|---|--:|--:|--:|\n");
    for (const OpTime& op : top_ops(row, s))
      out += fmt::format("| {} | {} | {} | {:.1f}% |\n", op.op_type, op.nodes, fixed3(op.seconds * 1e3),
                         share_percent(op.seconds, row.ref_profile_total));
  }
  return out;
}

Json json_report(const std::vector<Row>& rows, const Settings& s, const runners::RunnerOptions& runner_options,
                 const std::string& load_before) {
  Json report;
  report["machine"] = {{"date", utc_now()},
                       {"cpu", read_first_match("/proc/cpuinfo", "model name")},
                       {"logical_cpus", static_cast<int>(std::thread::hardware_concurrency())},
                       {"load_average_before", load_before},
                       {"load_average_after", load_average()},
                       {"parity_version", kParityVersion},
                       {"cpu_isa_extensions", runtime::cpu_isa_extensions()},
                       {"isa_cap", s.isa},
                       {"kernel_isa", kernel_tier(s)},
                       {"dnnl_isa", runtime::dnnl_isa_name()},
                       {"dnnl_version", runtime::dnnl_library_version()}};
  report["settings"] = {{"threads", s.threads},
                        {"iterations", s.iterations},
                        {"min_time_s", s.min_time},
                        {"warm_up", s.warm_up},
                        {"percentiles", s.percentiles},
                        {"seed", s.seed()}};
  Json versions = Json::object();
  for (const auto& name : s.runners) {
    const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find(name);
    const bool available = info->available(runner_options).is_ok();
    versions[name] = available && info->version ? info->version(runner_options) : std::string(available ? "" : "unavailable");
  }
  report["runners"] = versions;
  Json ceiling = Json::object();
  for (const auto& [threads, gflops] : s.sgemm_gflops) ceiling[std::to_string(threads)] = gflops;
  report["sgemm_gflops"] = ceiling;
  Json results = Json::array();
  for (const auto& row : rows) {
    Json r = {{"model", row.model}, {"label", row.label}, {"threads", row.threads}, {"inputs", row.inputs},
              {"rounds", row.rounds}, {"flops", row.flops}};
    Json cells = Json::object();
    for (const auto& c : row.cells) {
      if (!c.unavailable.empty()) {
        cells[c.runner] = {{"unavailable", c.unavailable}};
        continue;
      }
      Json samples = Json::array();
      for (double v : c.samples) samples.push_back(v * 1e3);
      Json percentiles = Json::object();
      for (double q : s.percentiles) percentiles[fmt::format("p{:g}_ms", q)] = percentile(c.samples, q) * 1e3;
      const auto gflops = achieved_gflops(row, c.runner);
      cells[c.runner] = {{"median_ms", c.median() * 1e3},
                         {"percentiles", percentiles},
                         {"gflops", gflops ? Json(*gflops) : Json(nullptr)},
                         {"p10_ms", percentile(c.samples, 10) * 1e3},
                         {"p90_ms", percentile(c.samples, 90) * 1e3},
                         {"min_ms", c.samples.front() * 1e3},
                         // CPU time over wall time of the timed runs: about the threads it kept busy.
                         {"cpu_per_wall", c.cpu_seconds / std::accumulate(c.samples.begin(), c.samples.end(), 0.0)},
                         {"iterations", c.samples.size()},
                         {"samples_ms", samples}};
    }
    r["runners"] = cells;
    const auto ratio = ref_over_ort(row);
    r["ref_over_ort"] = ratio ? Json(*ratio) : Json(nullptr);
    if (!row.ref_profile.empty()) {
      Json ops = Json::array();
      for (const auto& op : row.ref_profile)
        ops.push_back({{"op_type", op.op_type}, {"nodes", op.nodes}, {"ms", op.seconds * 1e3}});
      Json nodes = Json::array();
      for (const auto& t : row.ref_nodes)
        nodes.push_back({{"name", t.name}, {"op_type", t.op_type}, {"detail", t.detail},
                         {"output_shape", t.output_shape}, {"ms", t.seconds * 1e3}});
      r["ref_profile"] = {{"ms_per_run", row.ref_profile_total * 1e3}, {"ops", ops}, {"slowest_nodes", nodes}};
    }
    results.push_back(r);
  }
  report["results"] = results;
  return report;
}

}  // namespace parity::tools::bench
