#include "runners/runner.h"

#include <atomic>
#include <chrono>
#include <ctime>

#include "core/logger.h"
#include "core/low_precision.h"

namespace parity::runners {

/// Holds a runner's in-use flag for one public call. The exchange's acquire and the release on
/// exit order one call's writes before the next call's reads, whichever thread makes it.
class Runner::InUse {
 public:
  InUse(Runner& runner, const char* call) : runner_(runner) {
    PARITY_CHECK(!runner_.in_use_.exchange(true, std::memory_order_acquire), kInvalidArgument, "runner ",
                 runner_.name_, ": ", call, "() was called while another thread is using the runner; a runner "
                 "serves one thread at a time (give each thread its own runner, or share a Session)");
  }
  ~InUse() { runner_.in_use_.store(false, std::memory_order_release); }
  InUse(const InUse&) = delete;
  InUse& operator=(const InUse&) = delete;

 private:
  Runner& runner_;
};

Runner::Runner(std::string name) : name_(std::move(name)) {}

Runner::~Runner() = default;

void Runner::activate() {
  InUse in_use(*this, "activate");
  PARITY_CHECK(!is_active(), kInvalidArgument, "runner ", name_, " is already active");
  activate_impl();
  active_.store(true, std::memory_order_release);
}

void Runner::deactivate() {
  InUse in_use(*this, "deactivate");
  PARITY_CHECK(is_active(), kInvalidArgument, "runner ", name_, " is not active");
  cached_metadata_.reset();
  active_.store(false, std::memory_order_release);
  deactivate_impl();
}

TensorMetadata Runner::input_metadata() {
  InUse in_use(*this, "input_metadata");
  return cached_input_metadata();
}

TensorMetadata Runner::cached_input_metadata() {
  PARITY_CHECK(is_active(), kInvalidArgument, "runner ", name_, " must be activated before querying input metadata");
  if (!cached_metadata_) cached_metadata_ = std::make_unique<TensorMetadata>(input_metadata_impl());
  return *cached_metadata_;
}

void Runner::check_feed(const TensorMap& feed) {
  const TensorMetadata meta = cached_input_metadata();
  for (const auto& m : meta) {
    const Tensor* t = feed.find(m.name);
    PARITY_CHECK(t, kInvalidArgument, name_, ": input '", m.name, "' is missing from the feed; the feed has: ",
                 join_names(feed.names()), "; the model expects: ", join_names(meta.names()));
    PARITY_CHECK(m.dtype == DType::kUndefined || t->dtype() == m.dtype, kInvalidArgument, name_, ": input '",
                 m.name, "' has dtype ", dtype_name(t->dtype()), " but the model expects ", dtype_name(m.dtype));
    PARITY_CHECK(m.shape.accepts(t->shape()), kInvalidArgument, name_, ": input '", m.name, "' has shape ",
                 shape_to_string(t->shape()), " but the model expects ", m.shape.to_string());
  }
  for (const auto& [name, tensor] : feed)
    PARITY_CHECK(meta.contains(name), kInvalidArgument, name_, ": the feed has '", name,
                 "', which is not an input of the model; inputs are: ", join_names(meta.names()));
}

namespace {

// Inputs read from numpy files as '<V1' (ml_dtypes' 1-byte types) take the type the model expects.
TensorMap resolve_void_inputs(const TensorMap& feed, const TensorMetadata& meta) {
  TensorMap resolved;
  for (const auto& [name, tensor] : feed) {
    const TensorMeta* m = meta.find(name);
    resolved.set(name, m ? resolve_numpy_void(tensor, m->dtype) : tensor);
  }
  return resolved;
}

bool has_void_input(const TensorMap& feed) {
  for (const auto& [name, tensor] : feed)
    if (tensor.dtype() == kNumpyVoid1) return true;
  return false;
}

}  // namespace

TensorMap Runner::infer(const TensorMap& feed_in, bool check_inputs) {
  InUse in_use(*this, "infer");
  PARITY_CHECK(is_active(), kInvalidArgument, "runner ", name_, " must be activated before inference");
  const TensorMap feed = has_void_input(feed_in) ? resolve_void_inputs(feed_in, cached_input_metadata()) : feed_in;
  if (check_inputs) check_feed(feed);
  const auto start = std::chrono::steady_clock::now();
  TensorMap out = infer_impl(feed);
  last_inference_time_.store(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                             std::memory_order_relaxed);
  return out;
}

std::string make_runner_name(const std::string& prefix) {
  static std::atomic<int> counter{0};
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%m/%d/%y-%H:%M:%S", &tm);
  return prefix + "-runner-N" + std::to_string(counter++) + "-" + stamp;
}

}  // namespace parity::runners
