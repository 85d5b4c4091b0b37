// `parity surgeon weight-strip`: write a model without its weights, for sharing its architecture.
#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "core/logger.h"
#include "model/transforms/weights.h"
#include "options/byte_size.h"

namespace parity::cli {
namespace {

class SurgeonWeightStripCommand : public Command {
 public:
  std::string name() const override { return "surgeon weight-strip"; }
  std::string summary() const override { return "Write a model without its weights (architecture only)"; }

  void add_options(options::ArgParser& parser) override {
    model_edit::add_model_argument(parser);
    parser.group("Weight Stripping");
    parser.add({.flags = {"--exclude-list"},
                .help = "Text file of initializer names (one a line) whose weights stay", .metavar = "FILE"});
    parser.add({.flags = {"--strip-size-threshold"},
                .help = "parity's extension: also strip every floating-point tensor of at least this many bytes, "
                        "whatever reads it (K, M, G suffixes)",
                .metavar = "BYTES"});
    model_edit::add_output_options(parser);
  }

  int run(const options::Args& args) override {
    model::Model model = model_edit::load_input(args);
    const auto out = model_edit::output_path(args, model);
    model::transforms::StripOptions options;
    if (auto threshold = args.get("strip_size_threshold")) {
      options.size_threshold = static_cast<size_t>(options::parse_num_bytes(*threshold, "--strip-size-threshold"));
      PARITY_CHECK(options.size_threshold > 0, kInvalidArgument, "--strip-size-threshold must be at least 1 byte");
    }
    if (auto list = args.get("exclude_list")) options.exclude = model::transforms::read_exclude_list(*list);
    // Polygraphy's patterns see Constant nodes only once they are initializers.
    logger().warning("The model is expected to be constant folded to successfully capture all weights eligible for stripping");
    const auto report = model::transforms::strip_weights(model, options);
    if (!report.unknown_excluded.empty())
      logger().warning("The following weights provided by the user to skip stripping were not found in the model: ",
                       join_names(report.unknown_excluded));
    logger().info("Stripped ", report.stripped_tensors, " tensors (", report.stripped_bytes, " bytes); ",
                  report.sparse_tensors, " marked SPARSE_2_4");
    // Polygraphy leaves stripped tensors with empty inline raw_data, which libonnx's checker refuses;
    // an external reference to an empty file passes it and reads back as exactly that form.
    const std::string side_file = out.filename().string() + ".weightless";
    if (model::transforms::reference_weightless_file(model, side_file))
      logger().info("Stripped tensors reference the empty file ", side_file, " (libonnx's checker needs a location)");
    model_edit::save_output(model, out, args);
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(SurgeonWeightStripCommand);

}  // namespace
}  // namespace parity::cli
