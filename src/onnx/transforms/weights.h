// Weight stripping and reconstruction (`parity surgeon weight-strip` / `weight-reconstruct`):
// share a model's architecture without its weights, and rebuild a runnable model with random
// weights of the same shapes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "onnx/external_data.h"
#include "onnx/model.h"

namespace parity::transforms {

/// Marker of stripped tensors (onnx_io::kWeightlessMarker): Polygraphy writes "TRT_WEIGHTLESS/"
/// ("TRT_WEIGHTLESS/SPARSE_2_4" for 2:4-sparse weights) and adds "TRT_WEIGHTLESS" to the model's doc_string.
inline constexpr const char* kWeightlessMarker = onnx_io::kWeightlessMarker;
inline constexpr const char* kWeightlessDocString = "TRT_WEIGHTLESS/";

struct StripOptions {
  /// Floating-point tensors of at least this many bytes lose their values. Integer and bool tensors
  /// (shapes, indices, axes) always stay: the graph's structure depends on them.
  size_t size_threshold = 1024;
};

struct StripReport {
  size_t stripped_tensors = 0;
  uint64_t stripped_bytes = 0;
};

/// Strips weights in place, in Polygraphy's form: values dropped (external references too), dtype
/// and dims kept, raw_data present but empty, doc_string "TRT_WEIGHTLESS/", and the model's doc_string
/// gains "TRT_WEIGHTLESS". libonnx's checker refuses such tensors (a tensor with dims needs exactly
/// one non-empty value field); reference_weightless_file() gives the form it accepts.
StripReport strip_weights(onnx_io::Model& model, const StripOptions& options = {});

/// Turns every stripped tensor into an external reference to `location` (relative to the model's
/// folder), an empty file, with no offset or length. libonnx's checker accepts that (it only checks
/// that the file exists), and onnx.load, which Polygraphy uses, reads the empty file back as the empty
/// raw_data of Polygraphy's own form. Returns how many tensors now point there.
size_t reference_weightless_file(onnx_io::Model& model, const std::string& location);

/// Locations of the side files that stripped tensors reference (see reference_weightless_file).
std::vector<std::string> weightless_locations(const onnx_io::Model& model);

struct ReconstructReport {
  size_t reconstructed_tensors = 0;
  uint64_t reconstructed_bytes = 0;
};

/// Fills every stripped tensor (marked weightless in any of the forms above, or a tensor without
/// values that needs some) with seeded
/// random values: uniform in [-0.1, 0.1), except BatchNormalization scales and variances, which get
/// [0.5, 1.5) so the rebuilt model stays finite. Equal seeds give equal weights.
ReconstructReport reconstruct_weights(onnx_io::Model& model, uint64_t seed = 1);

}  // namespace parity::transforms
