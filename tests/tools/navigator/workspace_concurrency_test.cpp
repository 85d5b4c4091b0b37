// One writer per navigator workspace (docs/concurrency.md): the workspace lock refuses a second
// writer, in this process or another, with one line naming the workspace, lets `package save`
// readers share it, lives beside the workspace (never inside a saved .nav) and is released with
// its holder.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "core/status.h"
#include "support/test_support.h"
#include "tools/navigator/package.h"
#include "tools/navigator/status.h"
#include "tools/navigator/workspace_lock.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;
namespace nav = tools::navigator;
using Mode = nav::WorkspaceLock::Mode;

// The message of the Error that `body` throws, or "" when it throws none.
template <typename Body>
std::string error_of(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

fs::path make_workspace(const TempDir& dir) {
  const fs::path workspace = dir.path() / "model.nav.workspace";
  fs::create_directories(workspace);
  nav::write_status(workspace, nav::WorkspaceStatus{});
  return workspace;
}

TEST(WorkspaceConcurrency, TheLockFileSitsBesideTheWorkspace) {
  TempDir dir;
  const fs::path workspace = make_workspace(dir);
  EXPECT_EQ(nav::WorkspaceLock::lock_path(workspace), dir.path() / ".model.nav.workspace.lock");
  EXPECT_EQ(nav::WorkspaceLock::lock_path(workspace / ""), dir.path() / ".model.nav.workspace.lock");
  EXPECT_EQ(nav::WorkspaceLock::lock_path(workspace / "."), dir.path() / ".model.nav.workspace.lock");
  { const nav::WorkspaceLock lock(workspace, Mode::kExclusive); }
  EXPECT_FALSE(fs::exists(workspace / ".model.nav.workspace.lock"));
  EXPECT_TRUE(fs::exists(nav::WorkspaceLock::lock_path(workspace)));
}

TEST(WorkspaceConcurrency, ASecondWriterIsRefusedWithOneLineNamingTheWorkspace) {
  TempDir dir;
  const fs::path workspace = make_workspace(dir);
  const nav::WorkspaceLock writer(workspace, Mode::kExclusive);
  const std::string message = error_of([&] { nav::WorkspaceLock second(workspace, Mode::kExclusive); });
  EXPECT_NE(message.find("the workspace " + workspace.string() + " is in use by another parity process"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_NE(error_of([&] { nav::WorkspaceLock reader(workspace, Mode::kShared); }), "");
}

TEST(WorkspaceConcurrency, ReadersShareTheLockAndKeepWritersOut) {
  TempDir dir;
  const fs::path workspace = make_workspace(dir);
  const nav::WorkspaceLock first(workspace, Mode::kShared);
  EXPECT_EQ(error_of([&] { nav::WorkspaceLock second(workspace, Mode::kShared); }), "");
  EXPECT_NE(error_of([&] { nav::WorkspaceLock writer(workspace, Mode::kExclusive); }), "");
}

TEST(WorkspaceConcurrency, TheLockIsReleasedWithItsHolder) {
  TempDir dir;
  const fs::path workspace = make_workspace(dir);
  { const nav::WorkspaceLock writer(workspace, Mode::kExclusive); }
  EXPECT_EQ(error_of([&] { nav::WorkspaceLock again(workspace, Mode::kExclusive); }), "");
}

TEST(WorkspaceConcurrency, PackageWritersAndSaveRespectTheLock) {
  TempDir dir;
  const fs::path workspace = make_workspace(dir);
  nav::PackageDescriptor package(workspace);
  {
    const nav::WorkspaceLock writer(workspace, Mode::kExclusive);
    EXPECT_NE(error_of([&] { package.save(dir.path() / "model.nav"); }).find("is in use"), std::string::npos);
    EXPECT_FALSE(fs::exists(dir.path() / "model.nav")) << "nothing written while another process writes";
  }
  {
    const nav::WorkspaceLock reader(workspace, Mode::kShared);
    EXPECT_NE(error_of([&] { package.set_verified("onnx", "ref"); }).find("is in use"), std::string::npos);
    EXPECT_NE(error_of([&] { package.profile(); }).find("is in use"), std::string::npos);
  }
  package.save(dir.path() / "model.nav");
  EXPECT_TRUE(fs::is_regular_file(dir.path() / "model.nav"));
}

// The lock holds between processes: a child holds it until told to let go.
TEST(WorkspaceConcurrency, AnotherProcessHoldingTheWorkspaceKeepsThisOneOut) {
  TempDir dir;
  const fs::path workspace = make_workspace(dir);
  int locked[2], release[2];
  ASSERT_EQ(::pipe(locked), 0);
  ASSERT_EQ(::pipe(release), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const nav::WorkspaceLock holder(workspace, Mode::kExclusive);
    char byte = 1;
    if (::write(locked[1], &byte, 1) != 1) ::_exit(2);
    if (::read(release[0], &byte, 1) != 1) ::_exit(3);
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(locked[0], &byte, 1), 1);
  EXPECT_NE(error_of([&] { nav::WorkspaceLock writer(workspace, Mode::kExclusive); }).find("is in use"),
            std::string::npos);
  ASSERT_EQ(::write(release[1], &byte, 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(error_of([&] { nav::WorkspaceLock writer(workspace, Mode::kExclusive); }), "");
  for (int fd : {locked[0], locked[1], release[0], release[1]}) ::close(fd);
}

}  // namespace
}  // namespace parity::testing
