// Collective over MPI. Rank 0 gathers the ranks' states by polling (MPI_Iprobe), not in a blocking
// collective, so that when the launcher ends the job because a rank died (mpirun and srun send
// SIGTERM to the others), rank 0 still knows whose results never came and says so in one line.
// The C API only (MPI's C++ bindings are deprecated and need libmpi_cxx at build time).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "tools/validate/collective.h"

namespace parity::tools::validation {
namespace {

constexpr int kStateTag = 4401;
constexpr int kPidTag = 4402;

// What the SIGTERM handler reports; built before any signal can come (async-signal-safe use only).
struct FailureReport {
  int rank = 0, size = 1;
  std::vector<std::string> shares;
  std::vector<int> pids;           // on this host, else 0
  std::vector<char> delivered;     // rank 0: results received
  char message[8192] = {};
};
FailureReport* g_report = nullptr;

void append(char* out, size_t cap, const char* text) {
  const size_t len = std::strlen(out);
  std::strncat(out + len, text, cap - len - 1);
}

void append_int(char* out, size_t cap, long value) {
  char digits[24];
  int n = 0;
  if (value == 0) digits[n++] = '0';
  for (; value > 0; value /= 10) digits[n++] = static_cast<char>('0' + value % 10);
  char text[24];
  for (int i = 0; i < n; ++i) text[i] = digits[n - 1 - i];
  text[n] = 0;
  append(out, cap, text);
}

// The job is being ended by its launcher: name the ranks whose results are missing and stop.
void on_terminate(int) {
  FailureReport* r = g_report;
  if (!r) _exit(1);
  char* out = r->message;
  const size_t cap = sizeof(r->message);
  out[0] = 0;
  if (r->rank != 0) {
    // Stay alive a moment so rank 0 can tell this rank from the one that died.
    timespec pause{0, 300 * 1000 * 1000};
    nanosleep(&pause, nullptr);
    _exit(1);
  }
  bool all_delivered = true;
  for (int k = 0; k < r->size; ++k) all_delivered = all_delivered && r->delivered[static_cast<size_t>(k)];
  if (all_delivered) {
    append(out, cap, "[E] validate FAILED: the MPI job was ended while rank 0 merged the results; no summary written\n");
    ssize_t ignored = write(STDERR_FILENO, out, std::strlen(out));
    (void)ignored;
    _exit(1);
  }
  append(out, cap, "[E] validate FAILED: the MPI job was ended before every rank sent its results: ");
  bool first = true;
  for (int k = 0; k < r->size; ++k) {
    if (r->delivered[static_cast<size_t>(k)]) continue;
    if (!first) append(out, cap, "; ");
    first = false;
    append(out, cap, "rank ");
    append_int(out, cap, k);
    const int pid = r->pids[static_cast<size_t>(k)];
    if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) append(out, cap, " died");
    else if (pid > 0) append(out, cap, " was stopped");
    append(out, cap, ", its ");
    append(out, cap, r->shares[static_cast<size_t>(k)].c_str());
    append(out, cap, " not done");
  }
  append(out, cap, "; no summary written\n");
  ssize_t ignored = write(STDERR_FILENO, out, std::strlen(out));
  (void)ignored;
  _exit(1);
}

class MpiCollective final : public Collective {
 public:
  MpiCollective() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    report_.rank = rank_;
    report_.size = size_;
    report_.delivered.assign(static_cast<size_t>(size_), 0);
    report_.pids.assign(static_cast<size_t>(size_), 0);
    report_.shares.assign(static_cast<size_t>(size_), "samples");
    exchange_pids();
    g_report = &report_;
    struct sigaction action {};
    action.sa_handler = on_terminate;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, nullptr);
  }
  ~MpiCollective() override {
    g_report = nullptr;
    MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void describe_shares(const std::vector<std::string>& shares) override {
    if (shares.size() == static_cast<size_t>(size_)) report_.shares = shares;
  }

  std::vector<std::string> gather(const std::string& payload) override {
    if (rank_ != 0) {
      MPI_Send(payload.data(), static_cast<int>(payload.size()), MPI_CHAR, 0, kStateTag, MPI_COMM_WORLD);
      return {};
    }
    std::vector<std::string> payloads(static_cast<size_t>(size_));
    payloads[0] = payload;
    report_.delivered[0] = 1;
    for (int received = 1; received < size_;) {
      int ready = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, kStateTag, MPI_COMM_WORLD, &ready, &status);
      if (!ready) {
        timespec pause{0, 1000 * 1000};
        nanosleep(&pause, nullptr);
        continue;
      }
      int count = 0;
      MPI_Get_count(&status, MPI_CHAR, &count);
      std::string& into = payloads[static_cast<size_t>(status.MPI_SOURCE)];
      into.resize(static_cast<size_t>(count));
      MPI_Recv(into.data(), count, MPI_CHAR, status.MPI_SOURCE, kStateTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      report_.delivered[static_cast<size_t>(status.MPI_SOURCE)] = 1;
      ++received;
    }
    return payloads;
  }

 private:
  // Rank 0 learns the pids of the ranks on its own host, to tell a dead rank from a stopped one.
  void exchange_pids() {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    std::vector<char> hosts(static_cast<size_t>(size_) * sizeof(host));
    std::vector<int> pids(static_cast<size_t>(size_));
    int pid = static_cast<int>(getpid());
    MPI_Gather(host, sizeof(host), MPI_CHAR, hosts.data(), sizeof(host), MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Gather(&pid, 1, MPI_INT, pids.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank_ != 0) return;
    for (int k = 0; k < size_; ++k)
      if (std::strncmp(hosts.data() + static_cast<size_t>(k) * sizeof(host), host, sizeof(host)) == 0)
        report_.pids[static_cast<size_t>(k)] = pids[static_cast<size_t>(k)];
  }

  int rank_ = 0, size_ = 1;
  FailureReport report_;
};

}  // namespace
}  // namespace parity::tools::validation

extern "C" __attribute__((visibility("default"))) parity::tools::validation::Collective* parity_mpi_collective(
    std::string* error) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
      if (error) *error = "MPI_Init_thread failed";
      return nullptr;
    }
  }
  return new parity::tools::validation::MpiCollective();
}
