#include "compare/isolated_run.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <thread>

#include "core/formats/file_io.h"
#include "core/formats/polygraphy_json.h"
#include "core/status.h"

namespace parity::compare {

namespace fs = std::filesystem;

namespace {

constexpr int kChildError = 3;  // the work threw; its message is in error.txt

// A private folder for one child's files, removed with everything in it.
class ExchangeFolder {
 public:
  ExchangeFolder() {
    std::string tmpl = (fs::temp_directory_path() / "parity-runner-XXXXXX").string();
    PARITY_CHECK(::mkdtemp(tmpl.data()), kIo, "cannot create a folder for a runner subprocess: ", std::strerror(errno));
    path_ = tmpl;
  }
  ~ExchangeFolder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const char* name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// Scratch files in the private folder need no atomic rename or fsync (nothing reads them after a
// crash, and an fsync of megabytes of tensors costs seconds on a busy disk).
void write_scratch(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  PARITY_CHECK(out.good(), kIo, "cannot write ", path, " (the runner subprocess's results)");
}

[[noreturn]] void child_main(const ExchangeFolder& folder, const Isolation& isolation,
                             const std::function<IsolatedRun()>& work, const std::string& runner_name) {
  if (isolation.memory_limit_bytes > 0) {
    const rlimit limit{isolation.memory_limit_bytes, isolation.memory_limit_bytes};
    ::setrlimit(RLIMIT_AS, &limit);
  }
  std::string error;
  try {
    IsolatedRun run = work();
    RunResults results;
    results.add(runner_name, std::move(run.iterations));
    write_scratch(folder.file("results.json"), run_results_to_json(results));
    write_scratch(folder.file("feeds.json"), inputs_to_json(run.feeds));
    std::fflush(nullptr);
    ::_exit(0);
  } catch (const Error& e) {
    error = e.what();
  } catch (const std::bad_alloc&) {
    error = "out of memory";
  } catch (const std::exception& e) {
    error = std::string("internal error: ") + e.what();
  }
  try {
    write_scratch(folder.file("error.txt"), error);
  } catch (...) {
  }
  std::fflush(nullptr);
  ::_exit(kChildError);
}

std::string limit_note(const Isolation& isolation) {
  if (isolation.memory_limit_bytes == 0) return "";
  return " (memory limit " + std::to_string(isolation.memory_limit_bytes) + " bytes, --runner-memory-limit)";
}

// Why a child ended the way it did, or "" when it succeeded.
std::string failure_of(int status, const ExchangeFolder& folder, const Isolation& isolation) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "the runner's process was killed by signal " + std::to_string(sig) + " (" + sigabbrev_np(sig) + ": " +
           strsignal(sig) + ")" + limit_note(isolation);
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 0) return "";
  if (code == kChildError) {
    std::string message = "the runner failed";
    try {
      message = formats::read_binary_file(folder.file("error.txt"));
    } catch (const Error&) {
    }
    if (message == "out of memory") message += limit_note(isolation);
    return message;
  }
  // A process that cannot allocate may also end itself (a sanitizer's allocator does): name the limit.
  return "the runner's process exited with status " + std::to_string(code) + limit_note(isolation);
}

}  // namespace

IsolatedRun run_in_child(const std::string& runner_name, const Isolation& isolation,
                         const std::function<IsolatedRun()>& work) {
  ExchangeFolder folder;
  std::fflush(nullptr);  // buffered output would otherwise be written twice
  const pid_t pid = ::fork();
  PARITY_CHECK(pid >= 0, kIo, "cannot start a subprocess for ", runner_name, ": ", std::strerror(errno));
  if (pid == 0) child_main(folder, isolation, work, runner_name);

  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) fail(ErrorCode::kIo, "waiting for the subprocess of ", runner_name, " failed: ", std::strerror(errno));
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (isolation.timeout_s > 0 && elapsed > isolation.timeout_s) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      IsolatedRun timed_out;
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%g", isolation.timeout_s);
      timed_out.failure = std::string("the runner did not finish within ") + seconds + " s (--runner-timeout); killed";
      return timed_out;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  IsolatedRun run;
  run.failure = failure_of(status, folder, isolation);
  if (!run.failure.empty()) return run;
  RunResults results = read_run_results(folder.file("results.json"));
  PARITY_CHECK(results.size() == 1, kInternal, "the subprocess of ", runner_name, " returned ", results.size(), " runs");
  run.iterations = std::move(results.runs[0].second);
  run.feeds = read_inputs_json(folder.file("feeds.json"));
  return run;
}

}  // namespace parity::compare
