// `parity surgeon prune`: Polygraphy's prune, 2:4 structured sparsity on the weights of MatMul,
// Gemm and Conv (the two smallest magnitudes of every group of four along the reduction axis
// become zero), without regard for accuracy: for trying sparse kernels on a model.
#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "core/logger.h"
#include "model/transforms/sparsity.h"

namespace parity::cli {
namespace {

class SurgeonPruneCommand : public Command {
 public:
  std::string name() const override { return "surgeon prune"; }
  std::string summary() const override {
    return "Prune the weights of MatMul/Gemm/Conv to 2:4 structured sparsity (accuracy not kept)";
  }

  void add_options(options::ArgParser& parser) override {
    model_edit::add_model_argument(parser);
    model_edit::add_output_options(parser);
  }

  int run(const options::Args& args) override {
    model::Model model = model_edit::load_input(args);
    const auto out = model_edit::output_path(args, model);
    const auto pruned = model::transforms::prune_model_2_4(model);
    logger().info("Found: ", pruned.size(), " weight tensor(s) eligible for pruning");
    for (const auto& name : pruned) logger().verbose("Pruned ", name);
    model_edit::save_output(model, out, args);
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(SurgeonPruneCommand);

}  // namespace
}  // namespace parity::cli
