// `parity inspect data`: shows what a Polygraphy/parity data file holds — RunResults, inputs
// JSON, .npy, .npz — with Polygraphy's per-tensor statistics, histograms and values
// (tools/inspect/data_files.h).
#include "cli/command.h"
#include "tools/inspect/data_files.h"

namespace parity::cli {

namespace {

class InspectDataCommand final : public Command {
 public:
  std::string name() const override { return "inspect data"; }
  std::string summary() const override {
    return "Show the tensors in Polygraphy/parity data files (RunResults, inputs JSON, .npy, .npz)";
  }
  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "files", .help = "Data files: RunResults or inputs JSON, .npy, .npz",
                .metavar = "FILE", .arity = options::Arity::kOneOrMore, .required = true});
    parser.add({.flags = {"-a", "--all"}, .help = "Show every iteration instead of just the first",
                .arity = options::Arity::kFlag});
    parser.add({.flags = {"-s", "--show-values"}, .help = "Show the tensors' values", .arity = options::Arity::kFlag});
    parser.add({.flags = {"--histogram"}, .help = "Show a histogram of each tensor's values",
                .arity = options::Arity::kFlag});
    parser.add({.flags = {"-n", "--num-items"},
                .help = "Values shown at the start and end of each dimension with --show-values; -1 shows all",
                .metavar = "N", .default_value = "3"});
    parser.add({.flags = {"--line-width"},
                .help = "Characters per line with --show-values; -1 breaks lines only between dimensions",
                .metavar = "N", .default_value = "75"});
    parser.add({.flags = {"--format"}, .help = "Output format", .choices = {"text", "json"},
                .default_value = "text"});
  }

  int run(const options::Args& args) override {
    tools::InspectDataOptions opt;
    opt.all = args.flag("all");
    opt.show_values = args.flag("show_values");
    opt.histogram = args.flag("histogram");
    opt.print.edge_items = args.get_int("num_items").value_or(3);
    opt.print.line_width = args.get_int("line_width").value_or(75);
    opt.json = args.get_or("format", "text") == "json";
    tools::inspect_data_files(args.list("files"), opt);
    return kExitPassed;
  }
};

}  // namespace

PARITY_REGISTER_COMMAND(InspectDataCommand);

}  // namespace parity::cli
