// `parity inspect sparsity MODEL`: which weights of MatMul/Gemm/Conv follow 2:4 structured sparsity
// (Polygraphy's `inspect sparsity`): the tensors `surgeon prune` would prune, each with whether it
// is sparse already and the axis its groups of four run along.
#include <onnx/onnx_pb.h>

#include <set>
#include <sstream>

#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "core/logger.h"
#include "model/transforms/sparsity.h"

namespace parity::cli {
namespace {

class InspectSparsityCommand : public Command {
 public:
  std::string name() const override { return "inspect sparsity"; }
  std::string summary() const override {
    return "Show which weights of MatMul/Gemm/Conv follow 2:4 structured sparsity";
  }

  void add_options(options::ArgParser& parser) override { model_edit::add_model_argument(parser); }

  int run(const options::Args& args) override {
    const model::Model model = model_edit::load_input(args);
    const auto candidates = model::transforms::sparsity_candidates(model.proto());
    const std::set<std::string> sparse = model::transforms::sparse_2_4_tensors(model);
    std::ostringstream table;
    for (const auto& c : candidates)
      table << "\n    " << c.name << " | axis " << c.axis << " | " << (sparse.count(c.name) ? "2:4 sparse" : "dense");
    logger().info("Sparsity | ", sparse.size(), " of ", candidates.size(),
                  " weight tensor(s) of MatMul/Gemm/Conv follow 2:4 structured sparsity", table.str());
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(InspectSparsityCommand);

}  // namespace
}  // namespace parity::cli
