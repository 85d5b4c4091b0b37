// `parity surgeon weight-reconstruct`: rebuild a runnable model from a weightless one, with seeded
// random weights of the stripped tensors' shapes.
#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "core/logger.h"
#include "model/transforms/weights.h"

namespace parity::cli {
namespace {

class SurgeonWeightReconstructCommand : public Command {
 public:
  std::string name() const override { return "surgeon weight-reconstruct"; }
  std::string summary() const override { return "Fill a weightless model's tensors with random weights"; }

  void add_options(options::ArgParser& parser) override {
    model_edit::add_model_argument(parser);
    parser.group("Reconstruction");
    parser.add({.flags = {"--seed"}, .help = "Seed of the random weights", .metavar = "N", .default_value = "1"});
    model_edit::add_output_options(parser);
  }

  int run(const options::Args& args) override {
    model::Model model = model_edit::load_input(args);
    const auto out = model_edit::output_path(args, model);
    const auto report = model::transforms::reconstruct_weights(model, static_cast<uint64_t>(*args.get_int("seed")));
    if (report.reconstructed_tensors == 0) logger().warning("the model has no stripped tensors; it is written unchanged");
    logger().info("Reconstructed ", report.reconstructed_tensors, " tensors (", report.reconstructed_bytes, " bytes); ",
                  report.sparse_tensors, " pruned to 2:4 sparsity (marked SPARSE_2_4)");
    model_edit::save_output(model, out, args);
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(SurgeonWeightReconstructCommand);

}  // namespace
}  // namespace parity::cli
