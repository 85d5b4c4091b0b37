// Which nodes of a model a runner supports (`parity inspect capability`, Polygraphy's
// `inspect capability`): asked node by node, then partition by partition, by running each piece
// on the runner with the values the full model produced for its inputs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor_map.h"
#include "tools/debug/reduce.h"
#include "tools/debug/subgraph_cut.h"

namespace parity::tools::debug {

/// Runs a cut on the runner being inspected; OK when it runs, else why not.
using SupportCheck = std::function<Status(const Cut& cut, const std::vector<TensorMap>& feeds)>;

struct NodeSupport {
  bool supported = false;
  std::string reason;  // first error line when unsupported
};

/// A maximal run of consecutive (topologically sorted) nodes with the same support.
struct Partition {
  bool supported = false;
  NodeSet nodes;
};

struct Capability {
  std::vector<NodeSupport> nodes;  // by node index
  std::vector<Partition> partitions;
  size_t supported_count() const;
};

/// Asks `runs` about every node alone, groups consecutive nodes by support, then checks every
/// supported group as a whole; a group that fails as a whole is split in halves until its pieces
/// run (nodes that only run alone end up in partitions of their own).
Capability find_capability(const GraphCutter& cutter, const std::vector<TensorMap>& values, const SupportCheck& runs);

}  // namespace parity::tools::debug
