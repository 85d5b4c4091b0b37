// `parity surgeon weight-strip`: write a model without its weights, for sharing its architecture.
#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "core/logger.h"
#include "onnx/transforms/weights.h"

namespace parity::cli {
namespace {

class SurgeonWeightStripCommand : public Command {
 public:
  std::string name() const override { return "surgeon weight-strip"; }
  std::string summary() const override { return "Write a model without its weights (architecture only)"; }

  void add_options(ArgParser& parser) override {
    model_edit::add_model_argument(parser);
    parser.group("Stripping");
    parser.add({.flags = {"--strip-size-threshold"},
                .help = "Strip floating-point tensors of at least this many bytes (integer tensors always stay)",
                .metavar = "BYTES", .default_value = "1024"});
    model_edit::add_output_options(parser);
  }

  int run(const Args& args) override {
    onnx_io::Model model = model_edit::load_input(args);
    const auto out = model_edit::output_path(args, model);
    transforms::StripOptions options;
    const int64_t threshold = *args.get_int("strip_size_threshold");
    PARITY_CHECK(threshold >= 0, kInvalidArgument, "--strip-size-threshold must be >= 0, got ", threshold);
    options.size_threshold = static_cast<size_t>(threshold);
    const auto report = transforms::strip_weights(model, options);
    logger().info("Stripped ", report.stripped_tensors, " tensors (", report.stripped_bytes, " bytes)");
    // Polygraphy leaves stripped tensors with empty inline raw_data, which libonnx's checker refuses;
    // an external reference to an empty file passes it and reads back as exactly that form.
    const std::string side_file = out.filename().string() + ".weightless";
    if (transforms::reference_weightless_file(model, side_file))
      logger().info("Stripped tensors reference the empty file ", side_file, " (libonnx's checker needs a location)");
    model_edit::save_output(model, out, args);
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(SurgeonWeightStripCommand);

}  // namespace
}  // namespace parity::cli
