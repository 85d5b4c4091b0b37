// --use-subprocess, --no-subprocess, --runner-timeout and --runner-memory-limit: run each runner
// (or only the crash-prone ones, the default) in a child process (compare::Isolation), in a
// "Runner isolation" help group.
#pragma once

#include "compare/comparator.h"
#include "options/group.h"

namespace parity::compare {

/// What the isolation options say: the Isolation, and whether the runners known to crash on some
/// models keep their own process when --use-subprocess is not given.
struct IsolationSettings {
  Isolation isolation;
  bool isolate_crash_prone = true;
};

/// Option group. parse() throws kInvalidArgument for a non-positive timeout or an unreadable
/// size, and when a limit is given without --use-subprocess (it could not be enforced).
class IsolationArgs : public options::Group<IsolationSettings> {
 public:
  IsolationArgs();
};

}  // namespace parity::compare
