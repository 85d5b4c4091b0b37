// --use-subprocess, --no-subprocess, --runner-timeout and --runner-memory-limit: run each runner
// (or only the crash-prone ones, the default) in a child process (compare::Isolation), in a
// "Runner isolation" help group.
#pragma once

#include "compare/comparator.h"
#include "options/args.h"

namespace parity::compare {

class IsolationArgs {
 public:
  void add_to(options::ArgParser& parser) const;
  /// Throws kInvalidArgument for a non-positive timeout or an unreadable size, and when a limit is
  /// given without --use-subprocess (it could not be enforced).
  Isolation parse(const options::Args& args) const;
};

}  // namespace parity::compare
