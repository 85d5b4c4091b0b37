// Glue between parity's runtime and oneDNN, shared by the optimized kernels: the CPU engine,
// thread control, plain-layout memory descriptors, a per-kernel primitive cache keyed by shape,
// and the mapping of ONNX activation nodes to oneDNN post-ops (for fusion).
//
// Only compiled when oneDNN was found (PARITY_HAVE_DNNL); optimized kernels that use it guard
// their whole file with the same macro, so a build without oneDNN simply has no such kernels.
#pragma once

#if PARITY_HAVE_DNNL

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tensor.h"
#include "runtime/kernel.h"
#include "runtime/packed_state.h"

namespace parity::runtime::dnnl_support {

/// The process-wide CPU engine.
dnnl::engine& cpu_engine();

/// Whether the ISA `isa` has every feature of `required`. oneDNN's ISA values are bit sets, each
/// a superset of those it extends (avx2 0x7 < avx512_core 0x27 < avx512_core_vnni 0x67 <
/// avx512_core_bf16 0xe7 < avx512_core_amx 0x3e7; avx2 < avx2_vnni 0x407), so a containment test
/// also accepts the later ISAs that extend `required`, where a list of equal values would not.
constexpr bool isa_includes(dnnl::cpu_isa isa, dnnl::cpu_isa required) {
  const auto bits = static_cast<unsigned>(isa);
  const auto needed = static_cast<unsigned>(required);
  return needed != 0 && (bits & needed) == needed;
}

/// The ISA oneDNN's kernels use here: the CPU's, capped by ONEDNN_MAX_CPU_ISA.
dnnl::cpu_isa effective_isa();

/// Whether oneDNN runs AVX-512 code (avx512_core or above) here. Some of its choices exist only
/// there: oneDNN 2.6's Winograd convolution (elsewhere every convolution is direct whatever
/// SessionOptions::winograd says) and blocked layouts for plain [K, N] matmul weights.
bool avx512_core_available();

/// Whether oneDNN computes bf16 natively on `isa` (AVX512-BF16 or AMX): elsewhere its bf16 path is
/// an emulation or the reference implementation, slower than fp32 on rounded operands.
constexpr bool isa_has_native_bf16(dnnl::cpu_isa isa) { return isa_includes(isa, dnnl::cpu_isa::avx512_core_bf16); }

/// isa_has_native_bf16(effective_isa()).
bool native_bf16();

/// oneDNN parallelizes with OpenMP; this sets the calling thread's OpenMP team size to the
/// session's thread count for the lifetime of the guard, so `--threads 1` really is one thread.
class ThreadScope {
 public:
  explicit ThreadScope(int threads);
  ~ThreadScope();
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int previous_;
};

dnnl::memory::dims to_dims(const Shape& shape);
/// Dense row-major ("abcd...") descriptor of the given shape (rank 1..6).
dnnl::memory::desc plain_desc(const Shape& shape, dnnl::memory::data_type type = dnnl::memory::data_type::f32);
/// Wraps a tensor's buffer without copying. oneDNN takes a non-const pointer even for sources.
dnnl::memory wrap(const dnnl::memory::desc& desc, const Tensor& tensor);

/// A memory descriptor read from untrusted bytes (a plan's packed weights): nullopt unless it is a
/// blocked layout oneDNN can compute with (1..12 dims, a known data type, no offsets or extra
/// flags, blocks that divide the padded dims, strides within the padded size), so that
/// get_size() and the primitives see no division by zero, overflow or index past the arrays.
std::optional<dnnl::memory::desc> desc_from_untrusted_bytes(const std::string& bytes);

/// The layout of packed weights restored from a plan, checked against its bytes; a layout that is
/// unknown or does not match the data fails the kernel's init with one line.
dnnl::memory::desc restored_weights_desc(const PackedState& state, const KernelInit& init);

/// Runs `prim` on a stream of cpu_engine() with the session's thread count.
void execute(const dnnl::primitive& prim, const std::unordered_map<int, dnnl::memory>& args, int threads);

/// The eltwise post-ops built from fused activation tails, with their names for labels.
struct PostOps {
  dnnl::post_ops ops;
  std::string description;  // "Relu", "Add+Relu" for labels and tests
  bool empty() const { return ops.len() == 0; }
};

/// Appends the tail node as a oneDNN eltwise post-op when it is an activation oneDNN computes
/// the way ONNX defines it: Relu, LeakyRelu, Clip (constant bounds), Sigmoid, Tanh, Elu,
/// HardSigmoid, HardSwish, Softplus, Exp, Abs, Sqrt, Gelu (opset 20 or com.microsoft), Mish.
/// Returns false (and leaves `post` unchanged) for anything else.
bool append_activation(PostOps& post, const KernelInit& tail);

/// Small thread-safe cache of plan objects built for one input shape (primitives with their
/// descriptors, reordered weights); real models see one shape, so it rarely holds more than one.
template <typename Entry>
class ShapeCache {
 public:
  /// The entry for `key`, built by `make` (a callable returning Entry) on first use. A template,
  /// not std::function: kernels call this per run, and wrapping their capturing lambdas in a
  /// std::function allocated on every call.
  template <typename Make>
  std::shared_ptr<const Entry> get(const std::vector<int64_t>& key, const Make& make) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end()) return it->second;
    if (entries_.size() >= kMaxEntries) entries_.clear();  // shapes keep changing: don't grow forever
    auto entry = std::make_shared<const Entry>(make());
    entries_.emplace(key, entry);
    return entry;
  }

 private:
  static constexpr size_t kMaxEntries = 16;
  mutable std::mutex mutex_;
  mutable std::map<std::vector<int64_t>, std::shared_ptr<const Entry>> entries_;
};

}  // namespace parity::runtime::dnnl_support

#endif  // PARITY_HAVE_DNNL
