// `parity bench`'s reports: the text table (with --profile, where ref spends its time), the
// Markdown table and the JSON report with every sample.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runners/registry.h"
#include "tools/bench/schedule.h"

namespace parity::tools::bench {

/// The 1-minute, 5-minute and 15-minute load averages ("0.52 0.61 0.70"), or "unknown".
std::string load_average();

/// "CPU model; ref's vector kernels TIER (capped: --isa X); oneDNN ISA VERSION": which machine and
/// code paths a table comes from.
std::string machine_line(const Settings& settings);

/// The latency table, notes on runners without figures, and the ref/ort and CPU summaries.
std::string text_table(const std::vector<Row>& rows, const Settings& settings);
/// With --profile: per row, ref's slowest operator types and nodes.
std::string profile_text(const std::vector<Row>& rows, const Settings& settings);
/// The table as Markdown, with the machine and runners from `report` (json_report's).
std::string markdown(const std::vector<Row>& rows, const Settings& settings, const nlohmann::ordered_json& report);
/// Every figure and sample, with the machine, settings and runner versions (`runner_options`:
/// the runtimes' options, for their versions; `load_before`: load_average() before the runs).
nlohmann::ordered_json json_report(const std::vector<Row>& rows, const Settings& settings,
                                   const runners::RunnerOptions& runner_options,
                                   const std::string& load_before);

}  // namespace parity::tools::bench
