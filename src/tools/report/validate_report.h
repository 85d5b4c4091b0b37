// The "validate" report section: a `parity validate` summary (tools/validate/summary.h) as a page
// of the project's reports — verdict and sample counts, per output and runner pair the error
// figures with their distributions over the dataset, the worst samples with the command that
// reruns each, and accuracy and per-class agreement against labels.
#pragma once

#include "tools/report/report.h"

namespace parity::tools::report {

/// The section for a summary (its figures are copied, the checkpoint is left out).
Json validate_section(const nlohmann::ordered_json& summary);

}  // namespace parity::tools::report
