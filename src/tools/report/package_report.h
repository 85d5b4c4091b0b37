// The report section of a navigator package (`parity package status PKG --report F.html|F.json`):
// per format the export, per format x runtime every step's status and reason, the measured
// tolerances, and latency percentiles and throughput per batch size.
#pragma once

#include "tools/navigator/status.h"
#include "tools/report/report.h"

namespace parity::tools::report {

/// The "package" section.
Json package_section(const navigator::WorkspaceStatus& status);

}  // namespace parity::tools::report
