// --postprocess [name:]top-K[,axis=A]: Polygraphy's PostprocessFunc.top_k applied to outputs
// before they are compared (Comparator::postprocess with compare::top_k).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compare/comparator.h"
#include "compare/per_output.h"
#include "options/group.h"

namespace parity::compare {

/// What --postprocess asks for.
struct PostprocessSettings {
  /// Per output name ("" for every output): top-K indices replace the output's values.
  PerOutput<std::optional<TopK>> top_k{std::nullopt};
  /// The output names the items name, checked once the outputs are known.
  std::vector<std::string> named_outputs;
  /// Whether any item was given.
  bool enabled = false;
};

/// Option group: --postprocess (a function other than top-K or a bad K or axis is kInvalidArgument).
class PostprocessArgs : public options::Group<PostprocessSettings> {
 public:
  PostprocessArgs();
};

}  // namespace parity::compare
