#include "runtime/dnnl/dnnl_support.h"

#if PARITY_HAVE_DNNL

#include <omp.h>

#include <cmath>
#include <cstring>
#include <type_traits>

namespace parity::runtime::dnnl_support {

dnnl::cpu_isa effective_isa() { return dnnl::get_effective_cpu_isa(); }

bool avx512_core_available() { return isa_includes(effective_isa(), dnnl::cpu_isa::avx512_core); }

bool native_bf16() {
  static const bool native = isa_has_native_bf16(effective_isa());
  return native;
}

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

ThreadScope::ThreadScope(int threads) : previous_(omp_get_max_threads()) {
  if (threads != previous_) omp_set_num_threads(threads);
}

ThreadScope::~ThreadScope() {
  if (omp_get_max_threads() != previous_) omp_set_num_threads(previous_);
}

dnnl::memory::dims to_dims(const Shape& shape) { return dnnl::memory::dims(shape.begin(), shape.end()); }

dnnl::memory::desc plain_desc(const Shape& shape, dnnl::memory::data_type type) {
  using tag = dnnl::memory::format_tag;
  static const tag kPlain[] = {tag::a, tag::a, tag::ab, tag::abc, tag::abcd, tag::abcde, tag::abcdef};
  PARITY_ASSERT(shape.size() <= 6, "oneDNN descriptors support rank <= 6, got ", shape.size());
  if (shape.empty()) return dnnl::memory::desc({1}, type, tag::a);
  return dnnl::memory::desc(to_dims(shape), type, kPlain[shape.size()]);
}

dnnl::memory wrap(const dnnl::memory::desc& desc, const Tensor& tensor) {
  return dnnl::memory(desc, cpu_engine(), const_cast<void*>(static_cast<const void*>(tensor.raw_data())));
}

void execute(const dnnl::primitive& prim, const std::unordered_map<int, dnnl::memory>& args, int threads) {
  ThreadScope scope(threads);
  // One stream per thread, reused: creating one per call cost an allocation on every node.
  thread_local dnnl::stream stream(cpu_engine());
  prim.execute(stream, args);
  stream.wait();
}

namespace {

/// A scalar constant input of the tail (Clip's min/max); nullopt when absent or not constant.
std::optional<float> constant_scalar(const KernelInit& tail, size_t i) {
  if (!tail.has_input(i)) return std::nullopt;
  std::optional<Tensor> t = tail.constant_input(i);
  if (!t || t->numel() != 1) return std::nullopt;
  return static_cast<float>(t->cast(DType::kFloat32).data<float>()[0]);
}

}  // namespace

bool append_activation(PostOps& post, const KernelInit& tail) {
  using alg = dnnl::algorithm;
  const std::string& op = tail.op_type();
  const std::string& domain = tail.spec().domain;
  auto eltwise = [&](alg a, float alpha = 0.f, float beta = 0.f) {
    post.ops.append_eltwise(1.f, a, alpha, beta);
    post.description += (post.description.empty() ? "" : "+") + op;
    return true;
  };
  // Every activation must take exactly the fused value (plus constant parameters).
  if (domain == "ai.parity") {  // chains the planner recognized (runtime/activation_rewrite.h)
    // Kernels that build several eltwise post-ops must avoid oneDNN 2.6's sharing of parameters
    // between post-ops of one algorithm (see FusedTails::add): det's Conv -> affine -> HardSwish
    // -> affine went wrong through the second affine step, not through HardSwish.
    if (op == "HardSwish") return eltwise(alg::eltwise_hardswish);
    if (op == "Gelu") return eltwise(alg::eltwise_gelu_erf);
    if (op == "Swish") return eltwise(alg::eltwise_swish, 1.f);  // x * sigmoid(1 * x)
    return false;
  }
  if (domain == "com.microsoft") {
    if (op == "Gelu" && tail.num_inputs() == 1) return eltwise(alg::eltwise_gelu_erf);
    return false;
  }
  if (!domain.empty()) return false;
  if (op == "Relu") return eltwise(alg::eltwise_relu);
  if (op == "LeakyRelu") return eltwise(alg::eltwise_relu, tail.attr_float("alpha", 0.01f));
  if (op == "Sigmoid") return eltwise(alg::eltwise_logistic);
  if (op == "Tanh") return eltwise(alg::eltwise_tanh);
  if (op == "Elu") return eltwise(alg::eltwise_elu, tail.attr_float("alpha", 1.f));
  if (op == "Exp") return eltwise(alg::eltwise_exp);
  if (op == "Abs") return eltwise(alg::eltwise_abs);
  if (op == "Sqrt") return eltwise(alg::eltwise_sqrt);
  if (op == "Softplus") return eltwise(alg::eltwise_soft_relu);
  if (op == "Mish") return eltwise(alg::eltwise_mish);
  if (op == "HardSwish") return eltwise(alg::eltwise_hardswish);
  if (op == "Gelu") {
    const std::string approximate = tail.attr_string("approximate", "none");
    if (approximate == "none") return eltwise(alg::eltwise_gelu_erf);
    if (approximate == "tanh") return eltwise(alg::eltwise_gelu_tanh);
    return false;
  }
  if (op == "HardSigmoid") {
    // max(0, min(1, alpha*x + beta)): a linear step, then a clip.
    post.ops.append_eltwise(1.f, alg::eltwise_linear, tail.attr_float("alpha", 0.2f), tail.attr_float("beta", 0.5f));
    post.ops.append_eltwise(1.f, alg::eltwise_clip_v2, 0.f, 1.f);
    post.description += (post.description.empty() ? "" : "+") + op;
    return true;
  }
  if (op == "Clip") {
    if (tail.opset() < 11) {
      return eltwise(alg::eltwise_clip_v2, tail.attr_float("min", -INFINITY), tail.attr_float("max", INFINITY));
    }
    float lo = -INFINITY, hi = INFINITY;
    if (tail.has_input(1)) {
      auto v = constant_scalar(tail, 1);
      if (!v) return false;
      lo = *v;
    }
    if (tail.has_input(2)) {
      auto v = constant_scalar(tail, 2);
      if (!v) return false;
      hi = *v;
    }
    if (lo > hi) return false;  // ONNX defines this case differently from a clip; leave it to the reference
    return eltwise(alg::eltwise_clip_v2, lo, hi);
  }
  return false;
}

std::optional<dnnl::memory::desc> desc_from_untrusted_bytes(const std::string& bytes) {
  dnnl::memory::desc desc;
  dnnl_memory_desc_t& d = desc.data;
  if (bytes.size() != sizeof d) return std::nullopt;
  std::memcpy(&d, bytes.data(), sizeof d);
  constexpr int64_t kMaxElements = int64_t{1} << 40;
  // The enum fields are read as their integers: a value outside the enum is not even loadable.
  auto raw = [](const auto& field) {
    std::underlying_type_t<std::remove_cvref_t<decltype(field)>> value;
    std::memcpy(&value, &field, sizeof value);
    return static_cast<int64_t>(value);
  };
  if (d.ndims < 1 || d.ndims > DNNL_MAX_NDIMS || raw(d.format_kind) != dnnl_blocked || d.offset0 != 0 ||
      d.extra.flags != dnnl_memory_extra_flag_none)
    return std::nullopt;
  switch (raw(d.data_type)) {
    case dnnl_f32: case dnnl_bf16: case dnnl_f16: case dnnl_s8: case dnnl_u8: case dnnl_s32: break;
    default: return std::nullopt;
  }
  const dnnl_blocking_desc_t& b = d.format_desc.blocking;
  if (b.inner_nblks < 0 || b.inner_nblks > DNNL_MAX_NDIMS) return std::nullopt;
  int64_t block[DNNL_MAX_NDIMS];
  for (int i = 0; i < d.ndims; ++i) block[i] = 1;
  for (int k = 0; k < b.inner_nblks; ++k) {
    if (b.inner_idxs[k] < 0 || b.inner_idxs[k] >= d.ndims || b.inner_blks[k] < 1 || b.inner_blks[k] > 1024)
      return std::nullopt;
    block[b.inner_idxs[k]] *= b.inner_blks[k];
  }
  int64_t elements = 1;
  for (int i = 0; i < d.ndims; ++i) {
    if (d.dims[i] < 1 || d.padded_dims[i] < d.dims[i] || d.padded_dims[i] > kMaxElements || d.padded_offsets[i] != 0 ||
        block[i] > d.padded_dims[i] || d.padded_dims[i] % block[i] != 0)
      return std::nullopt;
    if (elements > kMaxElements / d.padded_dims[i]) return std::nullopt;
    elements *= d.padded_dims[i];
  }
  // Each outer index times its stride stays within the padded size.
  for (int i = 0; i < d.ndims; ++i) {
    const int64_t outer = d.padded_dims[i] / block[i];
    if (b.strides[i] < 0 || (outer > 1 && b.strides[i] > elements / (outer - 1))) return std::nullopt;
  }
  return desc;
}

dnnl::memory::desc restored_weights_desc(const PackedState& state, const KernelInit& init) {
  const std::optional<dnnl::memory::desc> desc = desc_from_untrusted_bytes(state.layout);
  if (!desc) init.fail("the plan's packed weights have an unknown layout");
  if (desc->get_size() != state.data.size_bytes() || state.data.dtype() != DType::kUInt8)
    init.fail("the plan's packed weights do not match their layout");
  return *desc;
}

}  // namespace parity::runtime::dnnl_support

#endif  // PARITY_HAVE_DNNL
