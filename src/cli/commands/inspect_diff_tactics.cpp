// `parity inspect diff-tactics`: which tactics appear only in bad builds (Polygraphy's
// inspect diff-tactics), from tactics files or plans sorted into good/ and bad/ folders, or
// listed with --good and --bad.
#include <algorithm>
#include <filesystem>

#include "cli/command.h"
#include "core/logger.h"
#include "tools/tactic_diff.h"

namespace parity::cli {
namespace {

namespace fs = std::filesystem;

class InspectDiffTacticsCommand final : public Command {
 public:
  std::string name() const override { return "inspect diff-tactics"; }
  std::string summary() const override {
    return "Name the tactics that appear only in bad builds (tactics files or plans in good/ and bad/)";
  }
  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {"--dir"},
                .help = "A folder with good/ and bad/ subfolders of tactics files or plans (what debug build writes)",
                .metavar = "DIR"});
    parser.add({.flags = {"--good"}, .help = "Tactics files, plans, or folders of them, from good builds",
                .metavar = "PATH", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--bad"}, .help = "Tactics files, plans, or folders of them, from bad builds",
                .metavar = "PATH", .arity = options::Arity::kOneOrMore});
  }

  int run(const options::Args& args) override {
    std::vector<std::string> good = args.list("good"), bad = args.list("bad");
    if (auto dir = args.get("dir")) {
      good.push_back((fs::path(*dir) / "good").string());
      bad.push_back((fs::path(*dir) / "bad").string());
    }
    PARITY_CHECK(!good.empty() && !bad.empty(), kInvalidArgument,
                 "give --dir DIR (with good/ and bad/) or both --good and --bad");
    const std::vector<tools::BuildTactics> good_builds = read_all(good), bad_builds = read_all(bad);
    PARITY_CHECK(!bad_builds.empty(), kInvalidArgument, "no bad builds found in ", join(bad));
    logger().info("Loaded ", good_builds.size(), " good and ", bad_builds.size(), " bad build(s)");
    const auto suspicious = tools::suspicious_tactics(good_builds, bad_builds);
    if (suspicious.empty()) {
      logger().info("Could not find potentially bad tactics: every tactic of a bad build also appears in a good one");
      return kExitPassed;
    }
    logger().info("Found potentially bad tactics:");
    for (const auto& [node, tactics] : suspicious) {
      std::string list;
      for (const auto& t : tactics) list += (list.empty() ? "" : ", ") + t;
      logger().info("  Layer: ", node, "\n    Algorithms: ", list);
    }
    return kExitPassed;
  }

 private:
  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  }

  /// Files as given; folders contribute their .json and .plan files, sorted.
  static std::vector<tools::BuildTactics> read_all(const std::vector<std::string>& paths) {
    std::vector<tools::BuildTactics> builds;
    for (const auto& p : paths) {
      PARITY_CHECK(fs::exists(p), kNotFound, "'", p, "' does not exist");
      if (!fs::is_directory(p)) {
        builds.push_back(tools::read_build_tactics(p));
        continue;
      }
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(p))
        if (e.is_regular_file() && (e.path().extension() == ".json" || e.path().extension() == ".plan"))
          files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) builds.push_back(tools::read_build_tactics(f));
    }
    return builds;
  }
};

PARITY_REGISTER_COMMAND(InspectDiffTacticsCommand);

}  // namespace
}  // namespace parity::cli
