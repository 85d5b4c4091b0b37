// Command-line options of the ReplaceReshapes loader (`--res-des-rename-nodes`), and the loader
// they configure.
#pragma once

#include <parity/extension.h>

#include "backend/loader.h"

namespace reshape_destroyer {

struct ReplaceReshapesArgs {
  bool rename_nodes = false;

  /// Adds the "Reshape Destroyer loader" option group.
  static void add_to_parser(parity::options::ArgParser& parser);
  /// Reads the group's options (defaults when args is null, as from the C++ API).
  static ReplaceReshapesArgs parse(const parity::options::Args* args);
  /// The loader the options describe, reading the model from model_path.
  GraphLoader loader(const std::string& model_path) const;
};

}  // namespace reshape_destroyer
