// `parity debug precision` (Polygraphy's): which layers of a reduced-precision plan must run in
// fp32 for its outputs to pass against the fp32 model. Each step builds the plan with some layers
// pinned to fp32 (--layer-precisions NAME:fp32, obeyed) and checks its outputs on the same feeds.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/tensor_map.h"
#include "runtime/session.h"

#include "model/onnx_fwd.h"

namespace parity::tools {

struct PrecisionSearch {
  enum class Mode { kBisect, kLinear };
  enum class Direction { kForward, kReverse };
  Mode mode = Mode::kBisect;
  Direction direction = Direction::kForward;
  DType reduced = DType::kFloat16;  // kFloat16 or kBFloat16
  double atol = 1e-3, rtol = 1e-3;  // an output passes when |got - want| <= atol + rtol * |want| everywhere
  /// When set, decides whether a built plan passes instead of comparing its outputs with the fp32
  /// model's (`--check CMD`: tools/debug/plan_check.h).
  std::function<bool(const runtime::Session& plan)> judge;
};

/// One plan built and checked during the search.
struct PrecisionBuild {
  std::vector<std::string> fp32_layers;  // the layers it kept in fp32, in execution order
  bool passed = false;
  double seconds = 0;  // build and check
};

struct PrecisionSearchResult {
  bool passes_reduced = false;  // the plan passes with no layer pinned
  bool passes_fp32 = false;     // ... and with every layer pinned (else nothing can be found)
  std::vector<std::string> fp32_layers;  // the layers found, in execution order
  int builds = 0;                        // plans built and checked
  std::vector<std::string> layers;       // the reducible layers, in execution order
  std::vector<PrecisionBuild> history;   // every build, in order (reports)
};

/// Whether every float32 output of `got` is within atol + rtol * |want| of `want` (NaN and inf
/// must match exactly), and the shapes agree.
bool outputs_pass(const TensorMap& got, const TensorMap& want, double atol, double rtol);

/// The floating-point compute layers of the model (those a reduced-precision plan reduces), in
/// execution order.
std::vector<std::string> reducible_layers(const onnx::ModelProto& model, const std::string& base_dir);

/// Searches the layers that must run in fp32: repeatedly finds, among the layers not yet pinned,
/// the shortest prefix (forward) or suffix (reverse) whose pinning makes the outputs pass (by
/// bisection or one layer at a time), pins its last layer, until the plan passes. `log` sees one
/// line per build.
PrecisionSearchResult search_fp32_layers(const onnx::ModelProto& model, const std::string& base_dir,
                                         const std::vector<TensorMap>& feeds, const PrecisionSearch& search,
                                         const std::function<void(const std::string&)>& log = {});

}  // namespace parity::tools
