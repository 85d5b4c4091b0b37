// Whole-file reads and writes with one clear error line for every way a path can be unusable.
// Every file parity writes goes through AtomicFile: a temporary file in the target's folder,
// fsync'ed and renamed into place, so a killed or failing run leaves the old file or none.
#pragma once

#include <string>
#include <string_view>

namespace parity::formats {

/// Reads a whole regular file. Missing files, directories, FIFOs/devices and unreadable files
/// each fail with one kNotFound/kIo error naming the path (a FIFO is never opened, so this
/// cannot block). The path is noted as an input of this command (see note_input).
std::string read_binary_file(const std::string& path);

/// Checks that path names a readable regular file (same errors as read_binary_file).
void check_readable_file(const std::string& path);

/// Checks that a file can be created at path: not a directory, parent folder exists, and not a
/// file this command read (see note_input).
void check_writable_location(const std::string& path);

/// Input tracking: while enabled (the CLI turns it on for one command), every file read through
/// this header or noted with note_input is remembered by device and inode, and writing over one
/// of them is refused with one kInvalidArgument line. Off by default, so library users that
/// rewrite their own files in one process are not affected.
void set_input_tracking(bool enabled);
/// Remembers path (if it exists) as an input of the current command.
void note_input(const std::string& path);
/// Forgets the file now at path as an input: scratch files a command writes and then reads back
/// (the debug tools' per-check model) may be rewritten.
void forget_input(const std::string& path);
/// Lets writes replace inputs for the rest of the command (a command's --force).
void allow_overwriting_inputs();
/// Fails with one line when path is a file the current command read.
void refuse_overwriting_input(const std::string& path);

/// A file being written: bytes go to a unique temporary file beside `path` (same folder, so the
/// final rename is atomic); commit() flushes it to disk, renames it over `path` and syncs the
/// folder. Destroyed without commit() (an error, an exception), the temporary file is removed and
/// `path` is untouched.
class AtomicFile {
 public:
  /// Creates the temporary file; fails with one kIo/kNotFound/kInvalidArgument line naming path.
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// The final path and the temporary one (writers that need a path, e.g. std::ofstream or
  /// libzip, write to temp_path() and leave the rest to commit()).
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_; }

  /// Appends bytes to the temporary file.
  void write(std::string_view bytes);
  /// fsync, rename into place, fsync the folder. Throws kIo naming path on any failure.
  void commit();

 private:
  std::string path_;
  std::string temp_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Writes contents to path atomically (AtomicFile). Throws kIo naming the path.
void write_binary_file(const std::string& path, std::string_view contents);

/// Copies the file at `from` to `to` atomically (AtomicFile), in chunks. `from` is not noted as an
/// input (callers that copy their own files may rewrite them). Throws kNotFound/kIo naming the path.
void copy_file(const std::string& from, const std::string& to);

}  // namespace parity::formats
