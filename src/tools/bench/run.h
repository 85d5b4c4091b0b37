// `parity bench` as one call: the sgemm ceiling, every (model, thread count) row timed with fair
// alternation, the shared-Session throughput, then the reports (stdout table, Markdown, JSON,
// HTML).
#pragma once

#include <optional>
#include <string>

#include "runners/registry.h"
#include "tools/bench/schedule.h"

namespace parity::tools::bench {

/// What run_bench writes besides the table on stdout.
struct BenchOutputs {
  bool measure_ceiling = true;           // the sgemm ceiling the GFLOP/s column is compared with
  std::optional<std::string> markdown;   // the table as Markdown
  std::optional<std::string> json;       // every figure and sample
  std::optional<std::string> report;     // the HTML report
  std::string command_line;              // quoted by the HTML report
};

/// Times every row of `settings` and writes the reports. `args` carries the runtimes' own options
/// (each row gets its thread count in them). Returns false, having logged the rows, when a row
/// had no runner that could be timed.
bool run_bench(Settings& settings, const BenchOutputs& outputs, const runners::RunnerOptions& runner_options);

}  // namespace parity::tools::bench
