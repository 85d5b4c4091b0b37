#include "tools/debug/replay.h"

#include <nlohmann/json.hpp>

#include "core/formats/file_io.h"
#include "core/status.h"

namespace parity::tools::debug {

using Json = nlohmann::ordered_json;

void DebugReplay::load(const std::string& path) {
  const std::string text = formats::read_binary_file(path);
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::exception&) {
    throw Error(ErrorCode::kInvalidModel, "--load-debug-replay: " + path + " is not JSON");
  }
  PARITY_CHECK(json.is_object() && json.contains("parity_debug_replay") && json.contains("checks") &&
                   json["checks"].is_array(),
               kInvalidModel, "--load-debug-replay: ", path, " is not a parity debug replay file");
  PARITY_CHECK(json.value("model", std::string()) == fingerprint_, kInvalidArgument, "--load-debug-replay: ", path,
               " was written while reducing another model (or with other reduction settings)");
  for (const auto& check : json["checks"]) {
    PARITY_CHECK(check.is_object() && check.contains("nodes") && check["nodes"].is_string() && check.contains("failed") &&
                     check["failed"].is_boolean(),
                 kInvalidModel, "--load-debug-replay: ", path, ": malformed check entry ", check.dump());
    verdicts_[format_node_set(parse_node_set(check["nodes"].get<std::string>()))] = check["failed"].get<bool>();
  }
}

void DebugReplay::save(const std::string& path) const {
  Json json;
  json["parity_debug_replay"] = 1;
  json["model"] = fingerprint_;
  json["checks"] = Json::array();
  for (const auto& [nodes, failed] : verdicts_) json["checks"].push_back({{"nodes", nodes}, {"failed", failed}});
  formats::write_binary_file(path, json.dump(1) + "\n");
}

std::optional<bool> DebugReplay::find(const NodeSet& nodes) const {
  auto it = verdicts_.find(format_node_set(nodes));
  if (it == verdicts_.end()) return std::nullopt;
  return it->second;
}

}  // namespace parity::tools::debug
