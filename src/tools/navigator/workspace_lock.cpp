#include "tools/navigator/workspace_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/status.h"

namespace parity::tools::navigator {

namespace fs = std::filesystem;

fs::path WorkspaceLock::lock_path(const fs::path& workspace) {
  const fs::path absolute = fs::absolute(workspace).lexically_normal();
  // "ws/" normalizes to "ws/" with an empty file name: name the folder itself.
  const fs::path folder = absolute.has_filename() ? absolute : absolute.parent_path();
  return folder.parent_path() / ("." + folder.filename().string() + ".lock");
}

WorkspaceLock::WorkspaceLock(const fs::path& workspace, Mode mode) {
  const fs::path path = lock_path(workspace);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  PARITY_CHECK(fd_ >= 0, kIo, "cannot create the workspace lock ", path.string(), ": ", std::strerror(errno));
  const int operation = (mode == Mode::kExclusive ? LOCK_EX : LOCK_SH) | LOCK_NB;
  if (::flock(fd_, operation) == 0) return;
  const int error = errno;
  ::close(fd_);
  fd_ = -1;
  PARITY_CHECK(error != EWOULDBLOCK, kInvalidArgument, "the workspace ", workspace.string(),
               " is in use by another parity process (lock ", path.string(),
               "); wait for it to finish, or use another workspace");
  fail(ErrorCode::kIo, "cannot lock the workspace ", workspace.string(), " (", path.string(), "): ", std::strerror(error));
}

WorkspaceLock::~WorkspaceLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the flock
}

}  // namespace parity::tools::navigator
