// Post-training int8 calibration (Polygraphy's Calibrator): runs the fp32 model over calibration
// feeds and records the largest magnitude each float tensor reaches (the min-max calibrator), for
// the activation scales of a plan's int8 layers (runtime/reduced_precision.h).
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "compare/data_loader.h"
#include "runtime/session.h"

namespace parity::tools {

/// Per-tensor int8 scale (|max| over every feed / 127), by tensor name (graph inputs and every
/// value a node makes).
struct CalibrationTable {
  std::map<std::string, float> scales;
  size_t batches = 0;
  std::string algorithm = "minmax";  // or "entropy"; recorded in the cache's first line
  /// The model the ranges belong to (calibration_fingerprint) and its file name, recorded in the
  /// cache's first line so that a cache is not applied to another model ("": not recorded).
  std::string model_fingerprint;
  std::string model_name;
};

/// 16 hex digits identifying a model's graph for its calibration cache: the graph's inputs and
/// outputs (names, element types), every node's op type, inputs and outputs, and the initializers'
/// names. Not the weights' values (hashing GiBs would cost seconds per build) nor the inputs'
/// dimensions (--input-shapes fixes them before a build).
std::string calibration_fingerprint(const onnx::ModelProto& model);

/// Runs `session` (an fp32 session over the ONNX model) on every feed of `feeds` and records each
/// float32 tensor's largest magnitude. Throws kInvalidArgument when `feeds` yields nothing.
CalibrationTable calibrate_min_max(const runtime::Session& session, compare::FeedSource& feeds);

/// The entropy calibrator (as TensorRT's entropy calibration): a second pass over the feeds
/// builds a 2048-bin histogram of each tensor's magnitudes, and the clipping threshold is the one
/// whose 127-level quantization of the histogram loses least information (smallest KL
/// divergence); outliers beyond it saturate. `feeds` is read twice (by index).
CalibrationTable calibrate_entropy(const runtime::Session& session, compare::FeedSource& feeds);

/// The calibration cache: a text file, one "name: scale" line per tensor (scale = amax / 127 as
/// 8 hex digits of its float32 bits, as TensorRT's caches write it) after a header line
/// ("parity-calibration-minmax-v2 model=<fingerprint> source=<file name>"; v1 caches have no model). Written
/// atomically: a reader (thread or process) sees a complete cache, the old one or the new one, and
/// of concurrent writers the last complete write wins; writers do not merge.
void write_calibration_cache(const std::filesystem::path& path, const CalibrationTable& table);
/// Reads a cache written by write_calibration_cache; one clear line for a malformed file.
CalibrationTable read_calibration_cache(const std::filesystem::path& path);
/// read_calibration_cache, refusing (one line naming both models) a cache whose recorded
/// fingerprint is not `model`'s; `model_name` names the model in that line.
CalibrationTable read_calibration_cache_for(const std::filesystem::path& path, const onnx::ModelProto& model,
                                            const std::string& model_name);

}  // namespace parity::tools
