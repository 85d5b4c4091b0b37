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
#include <iterator>
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
  const fs::path& path() const { return path_; }

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

// Reads a scratch file back. Not through formats::read_binary_file: that notes the file as an input
// of the command, and once the folder is removed a new output may get the same inode.
std::string read_scratch(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  PARITY_CHECK(in, kIo, "cannot read ", path, " (the subprocess's results)");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

[[noreturn]] void child_main(const ExchangeFolder& folder, const Isolation& isolation,
                             const std::function<void(const fs::path&)>& work) {
  if (isolation.memory_limit_bytes > 0) {
    const rlimit limit{isolation.memory_limit_bytes, isolation.memory_limit_bytes};
    ::setrlimit(RLIMIT_AS, &limit);
  }
  std::string error;
  try {
    work(folder.path());
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
      message = read_scratch(folder.file("error.txt"));
    } catch (const Error&) {
    }
    if (message == "out of memory") message += limit_note(isolation);
    return message;
  }
  // A process that cannot allocate may also end itself (a sanitizer's allocator does): name the limit.
  return "the runner's process exited with status " + std::to_string(code) + limit_note(isolation);
}

}  // namespace

std::string run_in_child_folder(const std::string& label, const Isolation& isolation,
                                const std::function<void(const fs::path& folder)>& work,
                                const std::function<void(const fs::path& folder)>& read_back) {
  ExchangeFolder folder;
  std::fflush(nullptr);  // buffered output would otherwise be written twice
  const pid_t pid = ::fork();
  PARITY_CHECK(pid >= 0, kIo, "cannot start a subprocess for ", label, ": ", std::strerror(errno));
  if (pid == 0) child_main(folder, isolation, work);

  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  std::string failure;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      failure = failure_of(status, folder, isolation);
      break;
    }
    if (done < 0 && errno != EINTR) fail(ErrorCode::kIo, "waiting for the subprocess of ", label, " failed: ", std::strerror(errno));
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (isolation.timeout_s > 0 && elapsed > isolation.timeout_s) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%g", isolation.timeout_s);
      failure = std::string("the runner did not finish within ") + seconds + " s (--runner-timeout); killed";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (read_back) read_back(folder.path());
  return failure;
}

IsolatedRun run_in_child(const std::string& runner_name, const Isolation& isolation,
                         const std::function<IsolatedRun()>& work) {
  IsolatedRun run;
  run.failure = run_in_child_folder(
      runner_name, isolation,
      [&](const fs::path& folder) {
        IsolatedRun done = work();
        RunResults results;
        results.add(runner_name, std::move(done.iterations));
        write_scratch((folder / "results.json").string(), run_results_to_json(results));
        write_scratch((folder / "feeds.json").string(), inputs_to_json(done.feeds));
      },
      [&](const fs::path& folder) {
        if (!fs::exists(folder / "results.json") || fs::exists(folder / "error.txt")) return;
        RunResults results = read_run_results((folder / "results.json").string());
        PARITY_CHECK(results.size() == 1, kInternal, "the subprocess of ", runner_name, " returned ", results.size(), " runs");
        run.iterations = std::move(results.runs[0].second);
        run.feeds = read_inputs_json((folder / "feeds.json").string());
        // Read through the input-tracking readers: once the folder is gone, a later output of this
        // command may get the same inode and would be refused as an overwritten input.
        formats::forget_input((folder / "results.json").string());
        formats::forget_input((folder / "feeds.json").string());
      });
  if (!run.failure.empty()) {
    run.iterations.clear();
    run.feeds.clear();
  }
  return run;
}

}  // namespace parity::compare
