// `--verify [N]` of the model-rewriting commands (what onnxsim users rely on): the rewritten model
// run against the original on N seeded inputs, with parity's runtime, output by output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/model.h"

namespace parity::tools {

struct VerifyResult {
  int64_t iterations = 0;
  size_t outputs_compared = 0;  // per iteration: the outputs both models have
  double max_absdiff = 0;       // over every compared output and iteration
  /// "output 'y', iteration 2: max abs err 0.5, max rel err 1" for the first output beyond
  /// tolerance; nullopt when every output agrees.
  std::optional<std::string> mismatch;
};

/// Runs both models on `iterations` generated feeds (seed 1 + i, shapes from `rewritten`'s inputs,
/// which may be more static than the original's) and compares the outputs they share elementwise
/// (|a - b| <= atol + rtol * |b|, NaN equal to NaN). Errors of either run propagate.
VerifyResult verify_same_outputs(const model::Model& original, const model::Model& rewritten, int64_t iterations,
                                 double atol = 1e-5, double rtol = 1e-5);

}  // namespace parity::tools
