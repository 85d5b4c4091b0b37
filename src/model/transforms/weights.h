// Weight stripping and reconstruction (`parity surgeon weight-strip` / `weight-reconstruct`):
// share a model's architecture without its weights, and rebuild a runnable model with random
// weights of the same shapes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "model/external_data.h"
#include "model/model.h"

namespace parity::model::transforms {

/// Marker of stripped tensors (model::kWeightlessMarker): Polygraphy writes "TRT_WEIGHTLESS/"
/// ("TRT_WEIGHTLESS/SPARSE_2_4" for 2:4-sparse weights) and adds "TRT_WEIGHTLESS" to the model's doc_string.
inline constexpr const char* kWeightlessMarker = model::kWeightlessMarker;
inline constexpr const char* kWeightlessDocString = "TRT_WEIGHTLESS/";
/// What follows the '/' of a stripped tensor whose weights were 2:4 sparse.
inline constexpr const char* kSparseMarker = "SPARSE_2_4";

struct StripOptions {
  /// Polygraphy's selection: initializers read by Conv, ConvTranspose, Gemm, MatMul (any size),
  /// Gather and Slice's data input (1024 elements and more), by QuantizeLinear (input 0) or
  /// Transpose feeding those, and by operators that are not ONNX's (custom/plugin ops). uint8
  /// tensors always stay.
  bool polygraphy_selection = true;
  /// parity's extension (--strip-size-threshold): also strip every floating-point tensor of at
  /// least this many bytes, whatever reads it (Constant nodes and subgraphs included). 0 = off.
  size_t size_threshold = 0;
  /// Initializers never stripped (Polygraphy's --exclude-list).
  std::set<std::string> exclude;
};

struct StripReport {
  size_t stripped_tensors = 0;
  uint64_t stripped_bytes = 0;
  size_t sparse_tensors = 0;                // of those, marked SPARSE_2_4
  std::vector<std::string> unknown_excluded;  // --exclude-list names not in the model
};

/// Strips weights in place, in Polygraphy's form: values dropped (external references too), dtype
/// and dims kept, raw_data present but empty, doc_string "TRT_WEIGHTLESS/" (or
/// "TRT_WEIGHTLESS/SPARSE_2_4" when the weights were 2:4 sparse, see sparsity.h), and the model's
/// doc_string gains "TRT_WEIGHTLESS". libonnx's checker refuses such tensors (a tensor with dims needs
/// exactly one non-empty value field); reference_weightless_file() gives the form it accepts.
StripReport strip_weights(model::Model& model, const StripOptions& options = {});

/// Reads an --exclude-list file: one initializer name per line (trailing whitespace ignored).
std::set<std::string> read_exclude_list(const std::filesystem::path& path);

/// Turns every stripped tensor into an external reference to `location` (relative to the model's
/// folder), an empty file, with no offset or length. libonnx's checker accepts that (it only checks
/// that the file exists), and onnx.load, which Polygraphy uses, reads the empty file back as the empty
/// raw_data of Polygraphy's own form. Returns how many tensors now point there.
size_t reference_weightless_file(model::Model& model, const std::string& location);

/// Locations of the side files that stripped tensors reference (see reference_weightless_file).
std::vector<std::string> weightless_locations(const model::Model& model);

struct ReconstructReport {
  size_t reconstructed_tensors = 0;
  uint64_t reconstructed_bytes = 0;
  size_t sparse_tensors = 0;  // SPARSE_2_4-marked tensors pruned back to 2:4 sparsity
};

/// Fills every stripped tensor (marked weightless in any of the forms above, or a tensor without
/// values that needs some) with seeded
/// random values: uniform in [-0.1, 0.1), except BatchNormalization scales and variances, which get
/// [0.5, 1.5) so the rebuilt model stays finite. Tensors marked SPARSE_2_4 are then pruned to 2:4
/// sparsity, as Polygraphy's weight-reconstruct does. Equal seeds give equal weights.
ReconstructReport reconstruct_weights(model::Model& model, uint64_t seed = 1);

}  // namespace parity::model::transforms
