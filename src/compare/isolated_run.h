// Runs a piece of work (one runner over its feeds) in a forked child process, so a crash, an
// abort, a hang or a memory blow-up in a third-party runtime becomes a reason string instead of
// taking the parent down. Results come back through Polygraphy JSON files in a private folder.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compare/comparator.h"
#include "core/run_results.h"
#include "core/tensor_map.h"

namespace parity::compare {

/// What a child produced: iterations and the feeds it pulled that the parent lacked, or why it failed.
struct IsolatedRun {
  std::vector<IterationResult> iterations;
  std::vector<TensorMap> feeds;
  std::string failure;  // empty on success
};

/// Forks; the child applies the memory limit, runs `work` and writes its results; the parent waits
/// (killing the child past the timeout) and reads them back. Errors thrown by `work` (parity::Error,
/// bad_alloc) also become failures, with their message. runner_name labels the files and messages.
IsolatedRun run_in_child(const std::string& runner_name, const Isolation& isolation,
                         const std::function<IsolatedRun()>& work);

}  // namespace parity::compare
