// The replay file of `parity debug reduce` (--save-debug-replay / --load-debug-replay): every
// check's verdict by candidate, so an interrupted reduction resumes where it stopped and a
// finished one can be re-run without its checks.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "tools/debug/reduce.h"

namespace parity::tools::debug {

class DebugReplay {
 public:
  /// `fingerprint` identifies the graph being reduced (see graph_fingerprint); a replay written
  /// for another graph is refused on load.
  explicit DebugReplay(std::string fingerprint) : fingerprint_(std::move(fingerprint)) {}

  /// Reads a replay file. A missing or malformed file, or one written for another model, throws
  /// one line naming the path.
  void load(const std::string& path);
  /// Writes the verdicts so far (atomically: an interrupted write leaves the previous file).
  void save(const std::string& path) const;

  std::optional<bool> find(const NodeSet& nodes) const;
  void record(const NodeSet& nodes, bool failed) { verdicts_[format_node_set(nodes)] = failed; }
  size_t size() const { return verdicts_.size(); }

 private:
  std::string fingerprint_;
  std::map<std::string, bool> verdicts_;  // node set text -> failed
};

}  // namespace parity::tools::debug
