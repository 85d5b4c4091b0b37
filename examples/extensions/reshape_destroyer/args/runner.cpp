#include "args/runner.h"

namespace reshape_destroyer {

void IdentityOnlyRunnerArgs::add_to_parser(parity::options::ArgParser& parser) {
  ReplaceReshapesArgs::add_to_parser(parser);
  parser.group("Reshape Destroyer runner (--res-des)");
  parser.add({.flags = {"--res-des-speed"},
              .help = "Speed to run inference: slow and medium sleep 1 s and 0.5 s per inference (default fast)",
              .metavar = "SPEED",
              .choices = {"slow", "medium", "fast"}});
}

IdentityOnlyRunnerArgs IdentityOnlyRunnerArgs::parse(const parity::options::Args* args) {
  IdentityOnlyRunnerArgs out;
  out.loader = ReplaceReshapesArgs::parse(args);
  if (args)
    if (auto speed = args->get("res_des_speed")) out.speed = speed_from_name(*speed);
  return out;
}

std::unique_ptr<parity::runners::Runner> IdentityOnlyRunnerArgs::create(const std::string& model_path) const {
  return std::make_unique<IdentityOnlyRunner>(loader.loader(model_path), speed);
}

}  // namespace reshape_destroyer
