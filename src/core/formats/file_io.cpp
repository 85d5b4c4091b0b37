#include "core/formats/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

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
}

void write_binary_file(const std::string& path, std::string_view contents) {
  check_writable_location(path);
  const std::string tmp = path + ".parity-tmp-" + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail(ErrorCode::kIo, "cannot write ", path, ": ", std::strerror(errno));
  const bool ok = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) {
    const int err = errno;
    std::remove(tmp.c_str());
    fail(ErrorCode::kIo, "cannot write ", path, ": ", std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    fail(ErrorCode::kIo, "cannot write ", path, ": ", std::strerror(err));
  }
}

}  // namespace parity::formats
