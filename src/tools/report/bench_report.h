// The report section of `parity bench`: latency distributions per model, thread count and runner
// (every timed sample), medians and the ratios to the first runner with figures.
#pragma once

#include <vector>

#include "tools/bench/schedule.h"
#include "tools/report/report.h"

namespace parity::tools::report {

/// The "bench" section.
Json bench_section(const std::vector<bench::Row>& rows, const bench::Settings& settings);

}  // namespace parity::tools::report
