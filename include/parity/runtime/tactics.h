// Tactic choice at build time (parity convert --time-tactics, --load-tactics, timing caches):
// a node's tactics are the kernel registrations that accept it (the optimized variant, the
// reference kernel). Timing builds each candidate, runs it on seeded inputs of the node's
// static shapes and keeps the fastest, as TensorRT's builder does; a replay file forces the
// recorded tactic per node; a timing cache keeps measured times across builds.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "runtime/kernel.h"

namespace parity::runtime {

/// Measured kernel times by (node signature, tactic): reused across builds, saved as JSON. Every
/// member locks the cache, so builds on several threads may share one. Its file (convert
/// --save-timing-cache) is written atomically: concurrent writers (threads or processes) never
/// leave a torn file, and the last complete write wins; writers do not merge (docs/concurrency.md).
class TimingCache {
 public:
  TimingCache() = default;  ///< An empty cache.
  TimingCache(const TimingCache& other);  ///< Copies the other cache's times (under its lock); counters start again.
  TimingCache& operator=(const TimingCache& other);  ///< Replaces the times with a copy of the other cache's.
  std::optional<double> find(const std::string& key) const;  ///< Seconds recorded for `key` (counts a hit or a miss); nullopt when not measured.
  void put(const std::string& key, double seconds);  ///< Records the time measured for `key`, replacing any earlier one.
  size_t size() const;  ///< Number of recorded times.
  /// Lookups answered from the cache and times measured, since creation.
  size_t hits() const;
  size_t misses() const;  ///< Lookups that found no time, since creation.
  std::string to_json() const;  ///< The times as JSON, for a timing-cache file.
  /// Parses to_json's output; kInvalidArgument naming `what` when malformed.
  static TimingCache from_json(const std::string& text, const std::string& what);

 private:
  mutable std::mutex mutex_;
  std::map<std::string, double> seconds_;
  mutable size_t hits_ = 0, misses_ = 0;
};

/// How a build chooses each node's tactic.
struct TacticOptions {
  /// Time every candidate of a node whose input shapes are static; keep the fastest.
  bool time = false;
  /// Replay: node key (tactic_node_key) -> tactic; the node must accept that tactic.
  std::map<std::string, std::string> replay;
  /// Times from earlier builds, and where this build's are added (may be null).
  std::shared_ptr<TimingCache> cache;
  /// Forbidden tactic families ("optimized", "reference") or tactic names; a node keeps at least
  /// its reference kernel.
  std::vector<std::string> forbidden;
  /// Nonzero: each node takes a candidate that accepts it, drawn from this seed and the node's
  /// key (parity debug build: builds that differ in their tactics).
  uint64_t random_seed = 0;

  bool active() const { return time || !replay.empty() || !forbidden.empty() || random_seed != 0; }  ///< True when any option changes the default tactic choice.
};

/// The name a tactics file knows a node by: its name, else "output:" + its first output.
std::string tactic_node_key(const NodeSpec& spec);

/// The shape input i is timed at (an optimization profile's opt shapes); nullopt when unknown.
using InputShapes = std::function<std::optional<Shape>(size_t)>;

/// The cache key of a node as `init` describes it (op, opset, attributes, input dtypes, shapes
/// and constness, precision) and a tactic. `shapes` (when set) replaces the static input shapes.
std::string timing_key(const KernelInit& init, const std::string& tactic, const InputShapes& shapes = {});

/// Seconds one run of `kernel` takes (the best of a few, after a warm-up) on seeded inputs of the
/// node's static shapes (or `shapes`, when set); nullopt when an input's shape or type is unknown,
/// or the kernel fails on such inputs.
std::optional<double> time_kernel(const Kernel& kernel, const KernelInit& init, const InputShapes& shapes = {});

/// Tactics files (Polygraphy's tactic replay, as JSON): {"format": "parity-tactics", "tactics":
/// {node key: tactic}}.
std::string tactics_to_json(const std::map<std::string, std::string>& tactics);
/// Parses a tactics file; kInvalidArgument naming `what` when malformed.
std::map<std::string, std::string> tactics_from_json(const std::string& text, const std::string& what);

}  // namespace parity::runtime
