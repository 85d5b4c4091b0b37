// Optimization profiles (TensorRT's): a plan built for dynamic input shapes serves one or more
// ranges of them. Each profile gives, per dynamic input, the smallest (min), the typical (opt) and
// the largest (max) shape; the build times tactics at opt and plans activation memory for max, and
// a run whose input shapes lie outside every profile is refused.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/metadata.h"
#include "core/tensor.h"

namespace parity::runtime {

/// The shapes one input may take within a profile: min <= opt <= max dimension by dimension.
struct ShapeRange {
  /// Smallest shape.
  Shape min, opt, max;
  /// \var ShapeRange::opt
  /// Typical shape: tactics are timed at it.
  /// \var ShapeRange::max
  /// Largest shape: activation memory is planned for it.
  bool contains(const Shape& shape) const;  ///< True when `shape` has the rank and lies within [min, max] dimension by dimension.
  std::string to_string() const;  ///< "[1,3,48,64]..[1,3,48,1024] (opt [1,3,48,320])"
};

/// Input shapes a plan is built for (TensorRT's optimization profile): min, opt and max per input.
struct OptimizationProfile {
  std::string name;                                  ///< "profile 0" unless named
  std::vector<std::pair<std::string, ShapeRange>> inputs;  ///< in the order given
  /// Peak bytes of live activations at the max shapes, as the build planned them (-1: unknown).
  int64_t activation_bytes = -1;

  const ShapeRange* find(const std::string& input) const;  ///< The range of `input`, or nullptr when the profile does not list it.
  /// "profile 0: x [1,3,48,64]..[1,3,48,1024] (opt [1,3,48,320])"
  std::string to_string() const;
};

/// Parses profile items INPUT:[MIN],[OPT],[MAX] (or INPUT:[SHAPE] for a fixed shape); an input
/// named again starts the next profile, so `x:A x:B` are two profiles. `what` names the option in
/// errors. Throws kInvalidArgument.
std::vector<OptimizationProfile> parse_profiles(const std::vector<std::string>& items, const std::string& what);

/// Polygraphy's --trt-min-shapes / --trt-opt-shapes / --trt-max-shapes: the k-th item of an input
/// in each list belongs to profile k. Throws kInvalidArgument when the lists do not pair up.
std::vector<OptimizationProfile> profiles_from_min_opt_max(const std::vector<std::string>& min_items,
                                                           const std::vector<std::string>& opt_items,
                                                           const std::vector<std::string>& max_items);

/// Checks the profiles against the model's inputs (names, ranks, dims the model fixes, min <= opt <=
/// max) and names unnamed profiles "profile K". Throws kInvalidArgument naming the profile and input.
void validate_profiles(std::vector<OptimizationProfile>& profiles, const TensorMetadata& inputs);

/// The profile a run with these input shapes uses: `requested` (>= 0) when they fit it, else the first
/// profile they fit. Throws kInvalidArgument with one line naming the input, its shape and the
/// profiles when none fits (or the requested one does not, or does not exist).
int select_profile(const std::vector<OptimizationProfile>& profiles,
                   const std::vector<std::pair<std::string, Shape>>& input_shapes, int requested);

}  // namespace parity::runtime
