// Plugin folders and substitution lists for `parity plugin list|match|replace` (Polygraphy's plugin
// tool, without Python): each plugin is a folder PLUGIN_DIR/<name>/ holding `pattern.yaml`, the
// subgraph it replaces (model::transforms::SubgraphPattern); `match` writes the substitutions found
// to a config.yaml in Polygraphy's layout (one YAML document per plugin: name, op, instances with
// inputs, outputs and attributes) for the user to review, and `replace` applies that file.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "model/graph.h"
#include "model/transforms/subgraph_pattern.h"

namespace parity::tools {

inline constexpr const char* kPatternFileName = "pattern.yaml";

/// Parses a pattern file; the plugin's name defaults to its folder's. Bad YAML or structure is
/// kInvalidArgument naming the file.
model::transforms::SubgraphPattern load_pattern(const std::filesystem::path& file);

/// Every plugin folder of plugin_dir that has a pattern file, sorted by name, filtered by include
/// (when non-empty) and exclude. An include name without a folder is kNotFound.
std::vector<model::transforms::SubgraphPattern> load_plugins(const std::filesystem::path& plugin_dir,
                                                             const std::vector<std::string>& include,
                                                             const std::vector<std::string>& exclude);

/// The substitutions of one plugin.
struct PluginSubstitutions {
  std::string name;
  std::string op_type;
  std::string domain;
  std::vector<model::transforms::PatternMatch> instances;
};

/// Matches every plugin in the graph (plugins without a match are left out).
std::vector<PluginSubstitutions> match_plugins(const model::Graph& graph,
                                               const std::vector<model::transforms::SubgraphPattern>& plugins);

/// config.yaml text (Polygraphy's layout; `domain` only when not the default one).
std::string substitutions_to_yaml(const std::vector<PluginSubstitutions>& substitutions);
/// Reads a config.yaml; bad YAML or a missing key is kInvalidArgument naming the file.
std::vector<PluginSubstitutions> load_substitutions(const std::filesystem::path& file);

/// Replaces every instance; returns how many were replaced per plugin (in file order). Each new
/// node is named `<plugin>_<k>` (unique in the graph).
std::vector<std::pair<std::string, size_t>> apply_substitutions(model::Graph& graph,
                                                                 const std::vector<PluginSubstitutions>& substitutions);

}  // namespace parity::tools
