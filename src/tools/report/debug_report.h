// The report sections of the debugging tools: `debug reduce` (every check as a step: the
// candidate's node count, its verdict and time; the final subgraph's nodes) and `debug precision`
// (every plan built: how many layers it kept in fp32 and its verdict; the layers that must stay fp32).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tools/report/report.h"

namespace parity::tools::report {

/// One check of `debug reduce`.
struct ReduceStep {
  size_t nodes = 0;          // nodes the candidate keeps
  bool failed = false;       // the verdict: the candidate still shows the failure
  bool from_replay = false;  // the verdict came from --load-debug-replay (not run)
  double seconds = 0;        // time the check took
  std::string detail;        // why it failed (built-in check) or the exit status (--check)
};

struct ReduceSummary {
  std::string model;
  std::string mode;           // bisect / linear
  std::string check;          // the check: the command, or the runners compared
  size_t node_count = 0;      // nodes of the (folded) model
  std::vector<ReduceStep> steps;
  std::vector<std::string> final_nodes;       // labels of the reduced subgraph's nodes, in order
  std::vector<size_t> final_indices;          // their indices in the folded model
  std::optional<size_t> passing_nodes;        // the passing candidate closest in size (--min-good)
  std::string output;                         // where the reduced model was saved
};

/// The "debug_reduce" section.
Json reduce_section(const ReduceSummary& summary);

/// One plan built by `debug precision`.
struct PrecisionStep {
  std::vector<std::string> fp32_layers;  // the layers the plan kept in fp32
  bool passed = false;
  double seconds = 0;
};

struct PrecisionSummary {
  std::string model;
  std::string reduced_type;               // fp16 / bf16
  std::string mode, direction;
  double atol = 0, rtol = 0;
  std::vector<std::string> layers;        // the reducible layers, in execution order
  std::vector<PrecisionStep> steps;
  bool passes_reduced = false;            // passes with no layer in fp32
  bool passes_fp32 = false;               // passes with every layer in fp32
  std::vector<std::string> fp32_layers;   // the answer: the layers that must stay fp32
};

/// The "debug_precision" section.
Json precision_section(const PrecisionSummary& summary);

}  // namespace parity::tools::report
