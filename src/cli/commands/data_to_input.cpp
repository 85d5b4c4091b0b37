// `parity data to-input FILE... -o inputs.json`: merges inputs and outputs files (inputs JSON,
// .npz, RunResults) into one inputs file, iteration by iteration (Polygraphy's `data to-input`).
#include "cli/command.h"
#include "compare/feed_files.h"
#include "core/logger.h"
#include "tools/data/to_input.h"

namespace parity::cli {
namespace {

class DataToInputCommand : public Command {
 public:
  std::string name() const override { return "data to-input"; }
  std::string summary() const override { return "Merge input and output data files into one inputs file"; }

  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "files",
                .help = "Inputs files (JSON, .npz, folders of .npz) and RunResults files (--save-outputs); a later "
                        "file's tensor replaces an earlier one of the same name",
                .metavar = "FILE", .arity = options::Arity::kOneOrMore, .required = true});
    parser.add({.flags = {"-o", "--output"}, .help = "Inputs file to write (Polygraphy JSON, or .npz for one iteration)",
                .metavar = "OUT", .required = true});
  }

  int run(const options::Args& args) override {
    std::vector<std::vector<TensorMap>> files;
    for (const auto& path : args.list("files")) {
      files.push_back(tools::data::iterations_of(path));
      logger().info("Read ", files.back().size(), " iteration(s) from ", path);
    }
    const std::vector<TensorMap> merged = tools::data::merge_iterations(files);
    PARITY_CHECK(!merged.empty(), kInvalidArgument, "the files hold no iteration to write");
    const std::string out = args.get_or("output", "");
    compare::save_feeds(out, merged);
    logger().info("Wrote ", merged.size(), " iteration(s) of ", merged.front().size(), " tensor(s) to ", out);
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(DataToInputCommand);

}  // namespace
}  // namespace parity::cli
