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

  /// The "Reshape Destroyer runner" option group, after the loader's group it includes. parity
  /// parses it into the runners' options; create() reads it back as this type.
  static parity::options::Group<IdentityOnlyRunnerArgs> group();
  /// The runner for a model file, with the model loaded through ReplaceReshapes.
  std::unique_ptr<parity::runners::Runner> create(const std::string& model_path) const;
};

}  // namespace reshape_destroyer
