// Reports of a plan file for `parity inspect model X.plan`: the plan's "engine" view (TensorRT Engine in Polygraphy's
// inspect model): inputs, outputs, profiles, memory, and per layer its fused nodes, precision,
// kernel variant (tactic) and shapes.
#pragma once

#include <string>

#include "runtime/plan/plan_file.h"

namespace parity::tools {

/// The text report; `layers` adds one block per layer, `attrs` their attributes too.
std::string plan_report_text(const runtime::plan::PlanSummary& plan, bool layers, bool attrs);
/// The same as JSON.
std::string plan_report_json(const runtime::plan::PlanSummary& plan, bool layers, bool attrs);

}  // namespace parity::tools
