// `parity inspect diff-tactics` (Polygraphy's): given the tactics of builds sorted into good and
// bad ones (tactics files or plans), the tactics that appear only in bad builds, per node.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace parity::tools {

/// node key -> tactic of one build.
using BuildTactics = std::map<std::string, std::string>;

/// The tactics of a tactics file (runtime/tactics.h) or of a plan file's layers.
BuildTactics read_build_tactics(const std::filesystem::path& path);

/// Per node, the tactics that some bad build used and no good build did.
std::map<std::string, std::set<std::string>> suspicious_tactics(const std::vector<BuildTactics>& good,
                                                                const std::vector<BuildTactics>& bad);

}  // namespace parity::tools
