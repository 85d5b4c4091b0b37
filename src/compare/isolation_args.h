// --use-subprocess, --no-subprocess, --runner-timeout and --runner-memory-limit: run each runner
// (or only the crash-prone ones, the default) in a child process (compare::Isolation), in a
// "Runner isolation" help group.
#pragma once

#include "compare/comparator.h"
#include "options/args.h"
#include "runners/registry.h"

namespace parity::compare {

class IsolationArgs {
 public:
  void add_to(options::ArgParser& parser) const;
  /// Throws kInvalidArgument for a non-positive timeout or an unreadable size, and when a limit is
  /// given without --use-subprocess (it could not be enforced).
  Isolation parse(const options::Args& args) const;
  /// Adds `runner` to the isolated runners when its registry entry asks for it
  /// (RunnerInfo::isolate_by_default) and --no-subprocess was not given.
  void isolate_by_default(const options::Args& args, const runners::Runner& runner, const runners::RunnerInfo& info,
                          Isolation& isolation) const;
};

}  // namespace parity::compare
