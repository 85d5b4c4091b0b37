#include "core/formats/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <utility>

#include "core/status.h"

namespace parity::formats {

void check_readable_file(const std::string& path) {
  PARITY_CHECK(!path.empty(), kInvalidArgument, "empty file path");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) fail(ErrorCode::kNotFound, "no such file: ", path);
    fail(ErrorCode::kIo, "cannot access ", path, ": ", std::strerror(err));
  }
  PARITY_CHECK(!S_ISDIR(st.st_mode), kInvalidArgument, path, " is a directory, not a file");
  PARITY_CHECK(S_ISREG(st.st_mode), kInvalidArgument, path,
               " is not a regular file (FIFO, socket or device files cannot be read)");
}

std::string read_binary_file(const std::string& path) {
  check_readable_file(path);
  note_input(path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(ErrorCode::kIo, "cannot open ", path, ": ", std::strerror(errno));
  std::string data;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) data.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      fail(ErrorCode::kIo, "cannot read ", path, ": ", std::strerror(err));
    }
    data.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return data;
}

void check_writable_location(const std::string& path) {
  namespace fs = std::filesystem;
  PARITY_CHECK(!path.empty(), kInvalidArgument, "empty output file path");
  std::error_code ec;
  PARITY_CHECK(!fs::is_directory(path, ec), kInvalidArgument, "cannot write ", path,
               ": it is a directory");
  const fs::path parent = fs::path(path).parent_path();
  PARITY_CHECK(parent.empty() || fs::is_directory(parent, ec), kNotFound, "cannot write ", path,
               ": folder ", parent.string(), " does not exist");
  refuse_overwriting_input(path);
}

namespace {

struct InputRegistry {
  std::mutex mutex;
  bool enabled = false;
  bool overwrite_allowed = false;
  std::map<std::pair<dev_t, ino_t>, std::string> files;  // (device, inode) -> path as first read
};

InputRegistry& inputs() {
  static InputRegistry registry;
  return registry;
}

// The permission bits a plain open(O_CREAT, 0666) would give: mkstemp creates files 0600.
mode_t default_file_mode() {
  static const mode_t mode = [] {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return static_cast<mode_t>(0666 & ~mask);
  }();
  return mode;
}

std::string folder_of(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

// A crash between rename and the folder's own metadata reaching disk could lose the new name;
// syncing the folder makes the rename durable. Failure here is not fatal (some filesystems
// refuse fsync on directories), the file itself is already complete.
void sync_folder(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void set_input_tracking(bool enabled) {
  std::lock_guard lock(inputs().mutex);
  inputs().enabled = enabled;
  inputs().overwrite_allowed = false;
  inputs().files.clear();
}

void note_input(const std::string& path) {
  std::lock_guard lock(inputs().mutex);
  if (!inputs().enabled) return;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) inputs().files.emplace(std::make_pair(st.st_dev, st.st_ino), path);
}

void forget_input(const std::string& path) {
  std::lock_guard lock(inputs().mutex);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) inputs().files.erase({st.st_dev, st.st_ino});
}

void allow_overwriting_inputs() {
  std::lock_guard lock(inputs().mutex);
  inputs().overwrite_allowed = true;
}

void refuse_overwriting_input(const std::string& path) {
  std::lock_guard lock(inputs().mutex);
  if (!inputs().enabled || inputs().overwrite_allowed) return;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  const auto it = inputs().files.find({st.st_dev, st.st_ino});
  if (it == inputs().files.end()) return;
  struct stat input {};
  // Another process may have renamed a new file over the input since it was read, and the input's
  // freed inode number gone to the file at `path`: the file that was read is gone, nothing to keep.
  if (it->second != path &&
      (::stat(it->second.c_str(), &input) != 0 || input.st_dev != st.st_dev || input.st_ino != st.st_ino))
    return;
  if (it->second == path) fail(ErrorCode::kInvalidArgument, "refusing to write ", path, ": it is an input of this command; choose another output path");
  fail(ErrorCode::kInvalidArgument, "refusing to write ", path, ": it is the same file as ", it->second,
       ", an input of this command; choose another output path");
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  check_writable_location(path_);
  const std::filesystem::path target(path_);
  temp_ = (target.parent_path() / ("." + target.filename().string() + ".parity-tmp-XXXXXX")).string();
  fd_ = ::mkstemp(temp_.data());
  if (fd_ < 0) fail(ErrorCode::kIo, "cannot write ", path_, ": ", std::strerror(errno));
  ::fcntl(fd_, F_SETFD, FD_CLOEXEC);
  ::fchmod(fd_, default_file_mode());
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_.c_str());
}

void AtomicFile::write(std::string_view bytes) {
  PARITY_CHECK(fd_ >= 0, kInternal, "AtomicFile::write after commit (", path_, ")");
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(ErrorCode::kIo, "cannot write ", path_, ": ", std::strerror(n < 0 ? errno : ENOSPC));
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

void AtomicFile::commit() {
  PARITY_CHECK(fd_ >= 0 && !committed_, kInternal, "AtomicFile::commit called twice (", path_, ")");
  // Writers that used temp_path() by name may have replaced the file (libzip renames its own
  // temporary over it), so the file is synced through a descriptor opened by name now.
  ::close(fd_);
  fd_ = -1;
  const int sync_fd = ::open(temp_.c_str(), O_RDONLY | O_CLOEXEC);
  if (sync_fd < 0) fail(ErrorCode::kIo, "cannot write ", path_, ": ", std::strerror(errno));
  const bool synced = ::fsync(sync_fd) == 0;
  const int sync_err = errno;
  ::close(sync_fd);
  if (!synced) fail(ErrorCode::kIo, "cannot write ", path_, ": ", std::strerror(sync_err));
  refuse_overwriting_input(path_);  // again: an input may have been read after construction
  if (::rename(temp_.c_str(), path_.c_str()) != 0)
    fail(ErrorCode::kIo, "cannot write ", path_, ": ", std::strerror(errno));
  committed_ = true;
  sync_folder(folder_of(path_));
}

void write_binary_file(const std::string& path, std::string_view contents) {
  AtomicFile file(path);
  file.write(contents);
  file.commit();
}

void copy_file(const std::string& from, const std::string& to) {
  check_readable_file(from);
  std::ifstream in(from, std::ios::binary);
  PARITY_CHECK(in, kIo, "cannot read ", from);
  AtomicFile file(to);
  std::string chunk(1 << 20, '\0');
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    file.write(std::string_view(chunk.data(), static_cast<size_t>(in.gcount())));
  }
  PARITY_CHECK(in.eof(), kIo, "cannot read ", from);
  file.commit();
}

}  // namespace parity::formats
