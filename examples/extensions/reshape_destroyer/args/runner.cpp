#include "args/runner.h"

namespace reshape_destroyer {

parity::options::Group<IdentityOnlyRunnerArgs> IdentityOnlyRunnerArgs::group() {
  parity::options::Group<IdentityOnlyRunnerArgs> group;
  group.include(ReplaceReshapesArgs::group(), &IdentityOnlyRunnerArgs::loader)
      .section("Reshape Destroyer runner (--res-des)")
      .add({.flags = {"--res-des-speed"},
            .help = "Speed to run inference: slow and medium sleep 1 s and 0.5 s per inference (default fast)",
            .metavar = "SPEED",
            .choices = {"slow", "medium", "fast"}},
           parity::options::convert(&IdentityOnlyRunnerArgs::speed, speed_from_name));
  return group;
}

std::unique_ptr<parity::runners::Runner> IdentityOnlyRunnerArgs::create(const std::string& model_path) const {
  return std::make_unique<IdentityOnlyRunner>(loader.loader(model_path), speed);
}

}  // namespace reshape_destroyer
