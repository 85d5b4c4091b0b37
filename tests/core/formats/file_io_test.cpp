// AtomicFile and input tracking: an uncommitted write never touches the target, a committed one
// replaces it whole, and tracked inputs cannot be written over; copy_file goes through both.
#include "core/formats/file_io.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <random>

#include "core/status.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

size_t entries(const fs::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(AtomicFileTest, UncommittedWriteLeavesTheOldFileAndNoTemporary) {
  TempDir dir;
  const fs::path target = dir / "out.bin";
  write_file(target, "old contents");
  {
    formats::AtomicFile file(target.string());
    EXPECT_EQ(fs::path(file.temp_path()).parent_path(), target.parent_path());
    file.write("new contents, never committed");
    EXPECT_EQ(read_file(target), "old contents");
  }
  EXPECT_EQ(read_file(target), "old contents");
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(AtomicFileTest, CommitReplacesTheFileWithUsualPermissions) {
  TempDir dir;
  const fs::path target = dir / "out.bin";
  write_file(target, "old");
  formats::write_binary_file(target.string(), "new");
  EXPECT_EQ(read_file(target), "new");
  EXPECT_EQ(entries(dir.path()), 1u);
  struct stat st {};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  // Not mkstemp's private 0600: others may read what parity writes, as with a plain open().
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
}

TEST(AtomicFileTest, CommitTwiceIsAnInternalError) {
  TempDir dir;
  formats::AtomicFile file((dir / "x").string());
  file.commit();
  try {
    file.commit();
    FAIL() << "second commit accepted";
  } catch (const Error& e) {
    EXPECT_TRUE(e.is_internal());
  }
}

TEST(AtomicFileTest, MissingFolderIsOneLine) {
  TempDir dir;
  try {
    formats::write_binary_file((dir / "no" / "such" / "x.json").string(), "{}");
    FAIL() << "wrote into a missing folder";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

TEST(InputTrackingTest, RefusesInputsOnlyWhileEnabledAndNotForced) {
  TempDir dir;
  const fs::path input = dir / "in.bin";
  write_file(input, "data");
  formats::read_binary_file(input.string());  // tracking off: nothing remembered
  formats::write_binary_file(input.string(), "rewritten");

  formats::set_input_tracking(true);
  formats::read_binary_file(input.string());
  EXPECT_THROW(formats::write_binary_file(input.string(), "x"), Error);
  EXPECT_EQ(read_file(input), "rewritten");
  formats::write_binary_file((dir / "other.bin").string(), "fine");
  formats::allow_overwriting_inputs();
  formats::write_binary_file(input.string(), "forced");
  EXPECT_EQ(read_file(input), "forced");
  formats::set_input_tracking(false);
}

TEST(CopyFileTest, CopiesEveryByteAtomicallyAndNeverOverAnInput) {
  TempDir dir;
  std::string bytes(2500000, '\0');  // more than one chunk
  std::mt19937 rng(5);
  for (auto& c : bytes) c = static_cast<char>(rng());
  const fs::path from = dir / "model.pt", to = dir / "copy.pt";
  write_file(from, bytes);
  write_file(to, "old contents");
  formats::copy_file(from.string(), to.string());
  EXPECT_EQ(read_file(to), bytes);
  EXPECT_EQ(entries(dir.path()), 2u);  // no temporary left

  // A missing source is one line, and the target keeps what it had.
  try {
    formats::copy_file((dir / "missing.pt").string(), to.string());
    ADD_FAILURE() << "copied a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("missing.pt"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_file(to), bytes);

  formats::set_input_tracking(true);
  formats::read_binary_file(to.string());
  EXPECT_THROW(formats::copy_file(from.string(), to.string()), Error);
  formats::set_input_tracking(false);
}

}  // namespace
}  // namespace parity::testing
