#include "model/transforms/outputs.h"

#include <algorithm>
#include <unordered_set>

#include "model/transforms/extract.h"

namespace parity::model::transforms {

bool is_mark_all(const std::vector<std::string>& outputs) {
  return outputs.size() == 2 && outputs[0] == "mark" && outputs[1] == "all";
}

void mark_outputs(model::Graph& graph, const std::vector<std::string>& outputs, const std::vector<std::string>& exclude) {
  if (is_mark_all(outputs)) {
    std::vector<model::ValuePtr> all;
    std::unordered_set<const model::Value*> seen;
    for (const auto& node : graph.nodes)
      for (const auto& out : node->outputs)
        if (out && seen.insert(out.get()).second) all.push_back(out);
    graph.outputs = std::move(all);
  } else if (!outputs.empty()) {
    std::vector<model::ValuePtr> chosen;
    for (const auto& name : outputs) chosen.push_back(lookup_tensor(graph, name, "--outputs"));
    graph.outputs = std::move(chosen);
  }
  for (const auto& name : exclude) {
    const model::ValuePtr v = lookup_tensor(graph, name, "--exclude-outputs");
    std::erase(graph.outputs, v);
  }
}

}  // namespace parity::model::transforms
