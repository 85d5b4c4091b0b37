// Runs a piece of work (one runner over its feeds) in a forked child process, so a crash, an
// abort, a hang or a memory blow-up in a third-party runtime becomes a reason string instead of
// taking the parent down. Results come back as .npy files (one per tensor) and a small manifest in a
// private folder.
#pragma once

#include <filesystem>
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
/// The general form: forks; the child applies the memory limit and runs `work`, which may write
/// files into `folder` (private to this call, removed afterwards); then `read_back(folder)` runs in
/// the parent, also after a failure, so results written before a crash are kept. Returns why the
/// child failed ("" on success): a signal, a limit, or the message of what `work` threw.
std::string run_in_child_folder(const std::string& label, const Isolation& isolation,
                                const std::function<void(const std::filesystem::path& folder)>& work,
                                const std::function<void(const std::filesystem::path& folder)>& read_back);

IsolatedRun run_in_child(const std::string& runner_name, const Isolation& isolation,
                         const std::function<IsolatedRun()>& work);

}  // namespace parity::compare
