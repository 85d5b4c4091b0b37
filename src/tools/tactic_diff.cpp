#include "tools/tactic_diff.h"

#include "core/formats/file_io.h"
#include "runtime/plan/plan_file.h"
#include "runtime/tactics.h"

namespace parity::tools {

BuildTactics read_build_tactics(const std::filesystem::path& path) {
  if (runtime::plan::is_plan_file(path)) {
    BuildTactics tactics;
    for (const auto& layer : runtime::plan::summarize_plan(path).layers) {
      const std::string key = !layer.name.empty() ? layer.name
                              : layer.outputs.empty() ? layer.op
                                                      : "output:" + layer.outputs.front();
      tactics[key] = layer.tactic;
    }
    return tactics;
  }
  return runtime::tactics_from_json(formats::read_binary_file(path.string()), "tactics file '" + path.string() + "'");
}

std::map<std::string, std::set<std::string>> suspicious_tactics(const std::vector<BuildTactics>& good,
                                                                const std::vector<BuildTactics>& bad) {
  std::map<std::string, std::set<std::string>> good_by_node;
  for (const auto& build : good)
    for (const auto& [node, tactic] : build) good_by_node[node].insert(tactic);
  std::map<std::string, std::set<std::string>> suspicious;
  for (const auto& build : bad)
    for (const auto& [node, tactic] : build) {
      auto it = good_by_node.find(node);
      if (it == good_by_node.end() || !it->second.count(tactic)) suspicious[node].insert(tactic);
    }
  return suspicious;
}

}  // namespace parity::tools
