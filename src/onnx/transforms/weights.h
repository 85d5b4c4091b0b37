// Weight stripping and reconstruction (`parity surgeon weight-strip` / `weight-reconstruct`):
// share a model's architecture without its weights, and rebuild a runnable model with random
// weights of the same shapes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "onnx/model.h"

namespace parity::transforms {

/// Marker (TensorProto doc_string) of a tensor whose values were stripped; the same marker
/// Polygraphy and TensorRT use for weightless models.
inline constexpr const char* kWeightlessMarker = "TRT_WEIGHTLESS";

struct StripOptions {
  /// Floating-point tensors of at least this many bytes lose their values. Integer and bool tensors
  /// (shapes, indices, axes) always stay: the graph's structure depends on them.
  size_t size_threshold = 1024;
};

struct StripReport {
  size_t stripped_tensors = 0;
  uint64_t stripped_bytes = 0;
};

/// Strips weights in place: values dropped (external references too), dtype and dims kept, the tensor
/// marked with kWeightlessMarker. Note that libonnx's checker refuses value-less tensors by design,
/// so a stripped model is for inspection and reconstruction only.
StripReport strip_weights(onnx_io::Model& model, const StripOptions& options = {});

struct ReconstructReport {
  size_t reconstructed_tensors = 0;
  uint64_t reconstructed_bytes = 0;
};

/// Fills every stripped tensor (marked, or a tensor without values that needs some) with seeded
/// random values: uniform in [-0.1, 0.1), except BatchNormalization scales and variances, which get
/// [0.5, 1.5) so the rebuilt model stays finite. Equal seeds give equal weights.
ReconstructReport reconstruct_weights(onnx_io::Model& model, uint64_t seed = 1);

}  // namespace parity::transforms
