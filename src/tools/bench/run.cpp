#include "tools/bench/run.h"

#include <algorithm>
#include <cstdio>

#include "core/formats/file_io.h"
#include "core/logger.h"
#include "core/progress.h"
#include "tools/bench/ceiling.h"
#include "tools/bench/report.h"
#include "tools/bench/throughput.h"
#include "tools/report/bench_report.h"

namespace parity::tools::bench {

bool run_bench(Settings& settings, const BenchOutputs& outputs, const runners::RunnerOptions& runner_options) {
  const std::string machine_load = load_average();
  if (outputs.measure_ceiling)
    for (int threads : settings.threads) settings.sgemm_gflops[threads] = measure_sgemm_gflops(threads);
  std::vector<Row> rows;
  Progress progress("bench rows", static_cast<int64_t>(settings.models.size() * settings.threads.size()));
  for (const auto& model : settings.models)
    for (int threads : settings.threads) {
      rows.push_back(bench_row(model, threads, settings, runner_options));
      progress.advance();
    }
  std::vector<ThroughputRow> throughput;
  if (!settings.concurrent.empty())
    for (const auto& model : settings.models)
      for (auto& row : bench_throughput(model, settings, runner_options)) throughput.push_back(std::move(row));
  for (size_t i = 0; i < settings.data.input_shapes.size(); ++i)
    if (!settings.shape_used[i]) {
      const options::InputShape& o = settings.data.input_shapes[i];
      logger().warning("--input-shapes ", o.model.empty() ? "" : o.model + "=", o.input, " matched no model");
    }

  nlohmann::ordered_json report = json_report(rows, settings, runner_options, machine_load);
  if (!throughput.empty()) report["concurrent"] = throughput_json(throughput);
  std::fputs(text_table(rows, settings).c_str(), stdout);
  if (settings.profile) std::fputs(profile_text(rows, settings).c_str(), stdout);
  if (!throughput.empty()) std::fputs(throughput_text(throughput).c_str(), stdout);
  std::fflush(stdout);
  if (outputs.markdown) formats::write_binary_file(*outputs.markdown, markdown(rows, settings, report));
  if (outputs.json) formats::write_binary_file(*outputs.json, report.dump(2) + "\n");
  if (outputs.report) {
    tools::report::Report page("parity bench", outputs.command_line);
    page.add_section(tools::report::bench_section(rows, settings));
    page.write(*outputs.report);
  }

  bool every_row_measured = true;
  for (const auto& row : rows)
    if (std::none_of(row.cells.begin(), row.cells.end(), [](const RunnerCell& c) { return c.unavailable.empty(); })) {
      logger().error(row.label, " at ", row.threads, " thread(s): no runner could be timed");
      every_row_measured = false;
    }
  return every_row_measured;
}

}  // namespace parity::tools::bench
