// Command-line options of the ReplaceReshapes loader (`--res-des-rename-nodes`), and the loader
// they configure.
#pragma once

#include <parity/extension.h>

#include "backend/loader.h"

namespace reshape_destroyer {

struct ReplaceReshapesArgs {
  bool rename_nodes = false;

  /// The "Reshape Destroyer loader" option group.
  static parity::options::Group<ReplaceReshapesArgs> group();
  /// The loader the options describe, reading the model from model_path.
  GraphLoader loader(const std::string& model_path) const;
};

}  // namespace reshape_destroyer
