// Command-line options of the IdentityOnlyRunner (`--res-des-speed`), and the runner they build.
// Like Polygraphy's runner argument groups it depends on the loader's group.
#pragma once

#include <memory>

#include <parity/runners.h>

#include "args/loader.h"
#include "backend/runner.h"

namespace reshape_destroyer {

struct IdentityOnlyRunnerArgs {
  Speed speed = Speed::kFast;
  ReplaceReshapesArgs loader;

  /// Adds the "Reshape Destroyer runner" option group (after the loader's group).
  static void add_to_parser(parity::options::ArgParser& parser);
  static IdentityOnlyRunnerArgs parse(const parity::options::Args* args);
  /// The runner for a model file, with the model loaded through ReplaceReshapes.
  std::unique_ptr<parity::runners::Runner> create(const std::string& model_path) const;
};

}  // namespace reshape_destroyer
