// Keeps two processes from changing one navigator workspace at once: `optimize`, `package load`,
// `retest`, `profile` and `verify` rewrite its folders and status.yaml as they go, so a second
// writer would leave a workspace that neither run describes.
#pragma once

#include <filesystem>

namespace parity::tools::navigator {

/// An advisory lock (flock) on a workspace, held for the object's lifetime. The lock file sits
/// beside the workspace (`.<name>.lock` in its parent folder), so that `optimize
/// --override-workspace` can remove and recreate the folder while holding it, and a saved .nav
/// never contains it. Writers take it exclusively; `package save` takes it shared, so that it
/// never zips a workspace another process is rewriting. Taking it never waits: a workspace in use
/// is refused with one line naming it.
class WorkspaceLock {
 public:
  enum class Mode { kShared, kExclusive };

  /// Throws parity::Error (kInvalidArgument) when another process, or another lock object of this
  /// one, holds the workspace in a conflicting mode; kIo when the lock file cannot be made.
  WorkspaceLock(const std::filesystem::path& workspace, Mode mode);
  ~WorkspaceLock();
  WorkspaceLock(const WorkspaceLock&) = delete;
  WorkspaceLock& operator=(const WorkspaceLock&) = delete;

  /// The lock file of a workspace (which need not exist yet).
  static std::filesystem::path lock_path(const std::filesystem::path& workspace);

 private:
  int fd_ = -1;
};

}  // namespace parity::tools::navigator
