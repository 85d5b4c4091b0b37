#include "compare/isolated_run.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <optional>
#include <thread>

#include "core/formats/npy.h"
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

// Reads a scratch file back (in one read: these hold megabytes of tensors). Not through
// formats::read_binary_file: that notes the file as an input of the command, and once the folder
// is removed a new output may get the same inode.
std::string read_scratch(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  PARITY_CHECK(in, kIo, "cannot read ", path, " (the subprocess's results)");
  std::string bytes(static_cast<size_t>(in.tellg()), '\0');
  in.seekg(0);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  PARITY_CHECK(in.good() || bytes.empty(), kIo, "cannot read ", path, " (the subprocess's results)");
  return bytes;
}

// The child's results travel as one .npy file per tensor (numpy.save's bytes, from parity's own
// writer: no base64 or JSON around megabytes of data) plus a small binary manifest with what the
// files do not say: iteration and feed counts, tensor names in their order, runtimes and runner
// names. Names are length-prefixed, so any bytes survive.
class ManifestWriter {
 public:
  void count(uint64_t n) { put(&n, sizeof(n)); }
  void text(const std::string& value) {
    count(value.size());
    bytes_.append(value);
  }
  void runtime(const std::optional<double>& seconds) {
    const uint8_t known = seconds.has_value();
    put(&known, 1);
    const double value = seconds.value_or(0);
    put(&value, sizeof(value));
  }
  const std::string& bytes() const { return bytes_; }

 private:
  void put(const void* data, size_t size) { bytes_.append(static_cast<const char*>(data), size); }
  std::string bytes_;
};

class ManifestReader {
 public:
  explicit ManifestReader(std::string bytes) : bytes_(std::move(bytes)) {}
  uint64_t count() {
    uint64_t n = 0;
    get(&n, sizeof(n));
    return n;
  }
  std::string text() {
    const uint64_t size = count();
    PARITY_CHECK(size <= bytes_.size() - pos_, kInternal, "the runner subprocess's manifest is truncated");
    std::string value = bytes_.substr(pos_, size);
    pos_ += size;
    return value;
  }
  std::optional<double> runtime() {
    uint8_t known = 0;
    get(&known, 1);
    double value = 0;
    get(&value, sizeof(value));
    return known ? std::optional<double>(value) : std::nullopt;
  }

 private:
  void get(void* out, size_t size) {
    PARITY_CHECK(size <= bytes_.size() - pos_, kInternal, "the runner subprocess's manifest is truncated");
    std::memcpy(out, bytes_.data() + pos_, size);
    pos_ += size;
  }
  std::string bytes_;
  size_t pos_ = 0;
};

std::string tensor_file(const fs::path& folder, const char* kind, size_t map, size_t index) {
  return (folder / (std::string(kind) + "_" + std::to_string(map) + "_" + std::to_string(index) + ".npy")).string();
}

void write_tensors(const fs::path& folder, const char* kind, size_t map_index, const TensorMap& map,
                   ManifestWriter& manifest) {
  manifest.count(map.size());
  size_t index = 0;
  for (const auto& [name, tensor] : map) {
    manifest.text(name);
    std::string npy;
    try {
      npy = npy_to_bytes(tensor);
    } catch (const Error& e) {
      throw e.prefixed("tensor '" + name + "'").with_missing({.tensor = name});
    }
    write_scratch(tensor_file(folder, kind, map_index, index++), npy);
  }
}

TensorMap read_tensors(const fs::path& folder, const char* kind, size_t map_index, ManifestReader& manifest) {
  TensorMap map;
  const uint64_t count = manifest.count();
  for (uint64_t index = 0; index < count; ++index) {
    const std::string name = manifest.text();
    const std::string path = tensor_file(folder, kind, map_index, index);
    map.set(name, npy_from_string(read_scratch(path), path));
  }
  return map;
}

void write_exchange(const fs::path& folder, const IsolatedRun& run) {
  ManifestWriter manifest;
  manifest.count(run.iterations.size());
  for (size_t i = 0; i < run.iterations.size(); ++i) {
    manifest.text(run.iterations[i].runner_name);
    manifest.runtime(run.iterations[i].runtime);
    write_tensors(folder, "output", i, run.iterations[i].outputs, manifest);
  }
  manifest.count(run.feeds.size());
  for (size_t i = 0; i < run.feeds.size(); ++i) write_tensors(folder, "feed", i, run.feeds[i], manifest);
  // Last: its presence says every tensor file is complete.
  write_scratch((folder / "manifest.bin").string(), manifest.bytes());
}

void read_exchange(const fs::path& folder, IsolatedRun& run) {
  ManifestReader manifest(read_scratch((folder / "manifest.bin").string()));
  const uint64_t iterations = manifest.count();
  for (uint64_t i = 0; i < iterations; ++i) {
    IterationResult result;
    result.runner_name = manifest.text();
    result.runtime = manifest.runtime();
    result.outputs = read_tensors(folder, "output", i, manifest);
    run.iterations.push_back(std::move(result));
  }
  const uint64_t feeds = manifest.count();
  for (uint64_t i = 0; i < feeds; ++i) run.feeds.push_back(read_tensors(folder, "feed", i, manifest));
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
    std::string message;
    try {
      message = read_scratch(folder.file("error.txt"));
    } catch (const Error&) {
    }
    // A child short of memory may fail even to write its reason (an empty or missing file).
    if (message.empty()) message = "the runner failed and its process could not say why" + limit_note(isolation);
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
      runner_name, isolation, [&](const fs::path& folder) { write_exchange(folder, work()); },
      [&](const fs::path& folder) {
        if (!fs::exists(folder / "manifest.bin") || fs::exists(folder / "error.txt")) return;
        read_exchange(folder, run);
      });
  if (!run.failure.empty()) {
    run.iterations.clear();
    run.feeds.clear();
  }
  return run;
}

}  // namespace parity::compare
