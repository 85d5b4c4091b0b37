#include "args/loader.h"

namespace reshape_destroyer {

void ReplaceReshapesArgs::add_to_parser(parity::options::ArgParser& parser) {
  parser.group("Reshape Destroyer loader (--res-des)");
  // Prefixed with the runner's flag so it cannot collide with parity's options or other extensions'.
  parser.add({.flags = {"--res-des-rename-nodes"},
              .help = "Rename each no-op Reshape node replaced by Identity (appends _destroyed)",
              .arity = parity::options::Arity::kFlag});
}

ReplaceReshapesArgs ReplaceReshapesArgs::parse(const parity::options::Args* args) {
  ReplaceReshapesArgs out;
  if (args) out.rename_nodes = args->flag("res_des_rename_nodes");
  return out;
}

GraphLoader ReplaceReshapesArgs::loader(const std::string& model_path) const {
  return ReplaceReshapes(GraphFromPath(model_path), rename_nodes);
}

}  // namespace reshape_destroyer
