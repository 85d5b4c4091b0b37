#include "args/loader.h"

namespace reshape_destroyer {

parity::options::Group<ReplaceReshapesArgs> ReplaceReshapesArgs::group() {
  parity::options::Group<ReplaceReshapesArgs> group;
  group.section("Reshape Destroyer loader (--res-des)")
      // Prefixed with the runner's flag so it cannot collide with parity's options or other extensions'.
      .add({.flags = {"--res-des-rename-nodes"},
            .help = "Rename each no-op Reshape node replaced by Identity (appends _destroyed)",
            .arity = parity::options::Arity::kFlag},
           parity::options::field(&ReplaceReshapesArgs::rename_nodes));
  return group;
}

GraphLoader ReplaceReshapesArgs::loader(const std::string& model_path) const {
  return ReplaceReshapes(GraphFromPath(model_path), rename_nodes);
}

}  // namespace reshape_destroyer
