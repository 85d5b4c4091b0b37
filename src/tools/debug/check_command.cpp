#include "tools/debug/check_command.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <regex>

#include "core/status.h"

extern char** environ;

namespace parity::tools::debug {

std::vector<std::string> substitute(const std::vector<std::string>& argv, const std::map<std::string, std::string>& values) {
  std::vector<std::string> out;
  for (std::string arg : argv) {
    for (const auto& [key, value] : values) {
      const std::string token = "{" + key + "}";
      for (size_t at = arg.find(token); at != std::string::npos; at = arg.find(token, at + value.size()))
        arg.replace(at, token.size(), value);
    }
    out.push_back(std::move(arg));
  }
  return out;
}

namespace {

bool program_exists(const std::string& program) {
  namespace fs = std::filesystem;
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const fs::path dir = dirs.substr(start, end - start).empty() ? fs::path(".") : fs::path(dirs.substr(start, end - start));
    std::error_code ec;
    const fs::path candidate = dir / program;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

void validate_check_command(const CheckCommand& check) {
  PARITY_CHECK(!check.argv.empty(), kInvalidArgument, "--check: expected a command line");
  PARITY_CHECK(program_exists(check.argv[0]), kNotFound, "--check: command '", check.argv[0],
               "' not found (not an executable path and not on PATH)");
  for (const auto& pattern : check.fail_regex) {
    try {
      std::regex re(pattern);
    } catch (const std::regex_error& e) {
      throw Error(ErrorCode::kInvalidArgument, "--fail-regex: '" + pattern + "' is not a valid regular expression: " + e.what());
    }
  }
}

CheckOutcome run_check_command(const CheckCommand& check, const std::vector<std::string>& argv) {
  int pipe_fds[2];
  PARITY_CHECK(::pipe2(pipe_fds, O_CLOEXEC) == 0, kIo, "cannot create a pipe for the check command: ", std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> raw;
  for (const auto& a : argv) raw.push_back(const_cast<char*>(a.c_str()));
  raw.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, raw[0], &actions, nullptr, raw.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    throw Error(ErrorCode::kNotFound, "--check: cannot run '" + argv[0] + "': " + std::strerror(spawned));
  }
  CheckOutcome outcome;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n > 0) {
      outcome.output.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  outcome.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

  const int code = outcome.exit_status;
  auto listed = [code](const std::vector<int>& codes) { return std::find(codes.begin(), codes.end(), code) != codes.end(); };
  // Polygraphy's rules: an ignored status passes; a --fail-regex match decides alone when no
  // --fail-code is given (even on status 0), and together with the status when one is.
  std::optional<bool> matched;
  if (!check.fail_regex.empty())
    matched = std::any_of(check.fail_regex.begin(), check.fail_regex.end(),
                          [&](const std::string& re) { return std::regex_search(outcome.output, std::regex(re)); });
  if (listed(check.ignore_fail_codes))
    outcome.failed = false;
  else if (!check.fail_codes.empty())
    outcome.failed = listed(check.fail_codes) && matched.value_or(true);
  else
    outcome.failed = matched ? *matched : code != 0;
  return outcome;
}

}  // namespace parity::tools::debug
