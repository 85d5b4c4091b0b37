// Spec: https://onnx.ai/onnx/operators/onnx__MatMul.html, onnx__Gemm.html
// Optimized MatMul and Gemm (float32) on oneDNN's matmul primitive, beside the reference kernels
// in matmul.cpp.
//
// - Constant weights (the usual linear / transformer layer) are reordered once per input shape
//   into the layout oneDNN's matmul prefers (format_tag::any), with Gemm's alpha folded in.
// - MatMul whose B has no batch (or only 1s) folds A's batch dims into M: one large GEMM.
// - Fused tails: an Add of a bias broadcast along the last dim (torch's nn.Linear export is
//   MatMul + Add), Add/Sub/Mul/Div by a constant scalar (attention scaling) and activations
//   (dnnl_support::append_activation) run as oneDNN bias / post-ops while the output is written.
// - A product of a few rows against constant weights (M <= small_gemm::kMaxRows) skips oneDNN:
//   a direct vectorized loop over weights kept as [N, K], or large ones read in place as [K, N]
//   (matmul_fast.h), with the same epilogue, because a primitive's per-call cost is several times
//   such a product's arithmetic; from 64K weights its output columns split between threads.
// - bf16 layers of a reduced-precision plan (runtime/reduced_precision.h) with constant weights
//   run oneDNN's bf16 matmul where the CPU has AVX512-BF16: weights packed as bf16, the source
//   rows converted to bf16 per run, fp32 accumulation and output.
// - int8 layers with constant 2-D weights (Int8Product) run oneDNN's s8 matmul: the source
//   quantized per tensor with its calibrated scale, the weights per output column, int32
//   accumulation, per-column output scales that dequantize to fp32 before the bias' epilogue.
// - Anything else (other dtypes, zero-size dims, shapes oneDNN rejects) runs the reference
//   kernels of the node and of its fused tails (ReferenceChain), so results never depend on
//   what the fast path covers.
#if PARITY_HAVE_DNNL

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include <cstring>

#include "runtime/buffer_pool.h"
#include "runtime/dnnl/dnnl_support.h"
#include "runtime/dnnl/int8_inputs.h"
#include "runtime/kernel_preferences.h"
#include "runtime/packed_state.h"
#include "runtime/reduced_precision.h"
#include "runtime/reduced_storage.h"
#include "runtime/dnnl/row_chunks.h"
#include "runtime/ops/common/reference_chain.h"
#include "runtime/ops/math/matmul_fast.h"
#include "runtime/ops/math/matmul_shapes.h"
#include "runtime/ops/quantization/int8_gemm.h"

namespace parity::runtime::ops {
namespace {

namespace ds = dnnl_support;
using dnnl::memory;

constexpr int kMaxDnnlRank = 12;  // DNNL_MAX_NDIMS

bool maybe_float(DType dtype) { return dtype == DType::kFloat32 || dtype == DType::kUndefined; }

memory::dims dense_strides(const memory::dims& dims) {
  memory::dims strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<memory::dim>(dims[d], 1);
  return strides;
}

/// Row-major descriptor of any rank oneDNN accepts (plain_desc stops at 6).
memory::desc dense_desc(const memory::dims& dims) { return memory::desc(dims, memory::data_type::f32, dense_strides(dims)); }

/// Descriptor of `dims` inside a dense tensor of `full` dims (a chunk of rows keeps the full strides).
memory::desc strided_desc(const memory::dims& dims, const memory::dims& full) {
  return memory::desc(dims, memory::data_type::f32, dense_strides(full));
}

/// A scalar constant input of a tail node; nullopt when absent, not constant or not one element.
std::optional<float> constant_scalar(const KernelInit& tail, size_t i, size_t* rank = nullptr) {
  if (!tail.has_input(i)) return std::nullopt;
  std::optional<Tensor> t = tail.constant_input(i);
  if (!t || t->numel() != 1 || t->dtype() != DType::kFloat32) return std::nullopt;
  if (rank) *rank = t->shape().size();
  return t->data<float>()[0];
}

/// What runs after the product: an optional bias (a fused node input broadcast along the last
/// dim) and a chain of oneDNN post-ops (activations, scalar affine steps, a residual Add).
struct Epilogue {
  struct Step {
    bool residual = false;  // binary add of a fused input with the output's shape
    dnnl::algorithm alg = dnnl::algorithm::eltwise_linear;
    float alpha = 0.f, beta = 0.f;
    size_t input = 0;  // the residual's index among the fused node's inputs
  };
  int bias_input = -1;  // index of the fused node's input holding the bias
  std::vector<Step> steps;
  size_t min_out_rank = 0;          // fused constants of this rank would broadcast a smaller output
  std::optional<Shape> static_out;  // the product's shape when the planner knows it

  /// True when every step is one apply() computes (the direct small-product path).
  bool loops_ok() const {
    using alg = dnnl::algorithm;
    return std::all_of(steps.begin(), steps.end(), [](const Step& s) {
      return s.residual || s.alg == alg::eltwise_linear || s.alg == alg::eltwise_relu ||
             s.alg == alg::eltwise_clip_v2 || s.alg == alg::eltwise_logistic || s.alg == alg::eltwise_tanh ||
             s.alg == alg::eltwise_hardswish;
    });
  }

  /// Runs the steps in place over an output of `count` elements, as oneDNN's post-ops would;
  /// `residuals` as from residuals(). Steps outside loops_ok() (GELU, ...) run as oneDNN
  /// eltwise primitives over the whole output.
  void apply(float* y, int64_t count, const std::vector<std::pair<int, const Tensor*>>& residuals) const {
    using alg = dnnl::algorithm;
    size_t next_residual = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step& s = steps[i];
      if (s.residual) {
        const float* r = residuals[next_residual++].second->data<float>();
        for (int64_t e = 0; e < count; ++e) y[e] += r[e];
      } else if (s.alg == alg::eltwise_linear) {
        for (int64_t e = 0; e < count; ++e) y[e] = s.alpha * y[e] + s.beta;
      } else if (s.alg == alg::eltwise_relu) {
        for (int64_t e = 0; e < count; ++e) y[e] = y[e] > 0.f ? y[e] : (s.alpha == 0.f ? 0.f : s.alpha * y[e]);
      } else if (s.alg == alg::eltwise_clip_v2) {
        for (int64_t e = 0; e < count; ++e) y[e] = std::min(std::max(y[e], s.alpha), s.beta);
      } else if (s.alg == alg::eltwise_logistic) {
        for (int64_t e = 0; e < count; ++e) y[e] = 1.f / (1.f + std::exp(-y[e]));
      } else if (s.alg == alg::eltwise_tanh) {
        for (int64_t e = 0; e < count; ++e) y[e] = std::tanh(y[e]);
      } else if (s.alg == alg::eltwise_hardswish) {
        // ONNX's form, as the reference kernel computes it (MobileNetV3's classifier head).
        for (int64_t e = 0; e < count; ++e) y[e] *= std::max(0.f, std::min(1.f, y[e] / 6.f + 0.5f));
      } else {
        eltwise_in_place(y, count, s);
      }
    }
  }

  /// One eltwise step over `count` floats, on oneDNN's primitive (single-threaded, as the
  /// products' chunks are).
  static void eltwise_in_place(float* y, int64_t count, const Step& step) {
    ds::ThreadScope scope(1);
    const memory::desc desc({count}, memory::data_type::f32, memory::format_tag::a);
    const dnnl::eltwise_forward::primitive_desc pd(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, step.alg, desc, step.alpha, step.beta),
        ds::cpu_engine());
    const memory data(desc, ds::cpu_engine(), y);
    ds::execute(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, data}, {DNNL_ARG_DST, data}}, 1);
  }

  /// The post-op chain for a primitive writing `dst` (residual operands share its layout).
  dnnl::post_ops build(const memory::desc& dst) const {
    dnnl::post_ops ops;
    for (const Step& step : steps) {
      if (step.residual) ops.append_binary(dnnl::algorithm::binary_add, dst);
      else ops.append_eltwise(1.f, step.alg, step.alpha, step.beta);
    }
    return ops;
  }

  /// Accepts `tail` into the chain when oneDNN can apply it exactly. `bias_allowed`: the product
  /// has no bias yet, so an Add of a last-dim vector can become it.
  bool accept(const KernelInit& tail, size_t first_extra_input, bool bias_allowed) {
    const std::string& op = tail.op_type();
    const bool binary = tail.spec().domain.empty() && tail.num_inputs() == 2 && tail.has_input(1);
    if (binary && (op == "Add" || op == "Sub" || op == "Mul" || op == "Div")) {
      size_t rank = 0;
      if (std::optional<float> c = constant_scalar(tail, 1, &rank)) {
        float alpha = 1.f, beta = 0.f;
        if (op == "Add") beta = *c;
        if (op == "Sub") beta = -*c;
        if (op == "Mul") alpha = *c;
        if (op == "Div") {
          if (*c == 0.f || !std::isfinite(*c)) return false;
          alpha = 1.f / *c;
        }
        if (!add_eltwise(steps, {false, dnnl::algorithm::eltwise_linear, alpha, beta, 0})) return false;
        min_out_rank = std::max(min_out_rank, rank);
        return true;
      }
      if (op != "Add" || !maybe_float(tail.input_dtype(1))) return false;
      std::optional<Shape> shape;
      if (std::optional<Tensor> t = tail.constant_input(1)) shape = t->shape();
      else shape = tail.input_static_shape(1);
      if (!shape || shape->empty()) return false;
      if (bias_allowed && bias_input < 0 && steps.empty() &&
          std::all_of(shape->begin(), shape->end() - 1, [](int64_t d) { return d == 1; })) {
        bias_input = static_cast<int>(first_extra_input);
        min_out_rank = std::max(min_out_rank, shape->size());
        return true;
      }
      // A residual: the other addend has exactly the product's shape.
      if (!static_out || *shape != *static_out) return false;
      Step step;
      step.residual = true;
      step.input = first_extra_input;
      steps.push_back(step);
      return true;
    }
    ds::PostOps activation;
    if (!ds::append_activation(activation, tail)) return false;
    std::vector<Step> extended = steps;
    for (int i = 0; i < activation.ops.len(); ++i) {
      Step step;
      float scale = 1.f;
      activation.ops.get_params_eltwise(i, scale, step.alg, step.alpha, step.beta);
      if (!add_eltwise(extended, step)) return false;
    }
    steps = std::move(extended);
    return true;
  }

  /// Appends an eltwise step to `chain`, or returns false when oneDNN would compute it wrongly:
  /// oneDNN 2.6 gives every eltwise post-op the alpha/beta of the first one with the same
  /// algorithm (MatMul -> Mul(s) -> Add(b) -> Relu -> Mul(s2) -> Add(b2) ran the last two with s
  /// and b). Consecutive affine steps merge into one; another step that shares an algorithm
  /// with different parameters is not fused.
  static bool add_eltwise(std::vector<Step>& chain, const Step& step) {
    using alg = dnnl::algorithm;
    if (step.alg == alg::eltwise_linear && !chain.empty() && !chain.back().residual &&
        chain.back().alg == alg::eltwise_linear) {
      Step& last = chain.back();  // a2 * (a1 * x + b1) + b2
      last.beta = step.alpha * last.beta + step.beta;
      last.alpha = step.alpha * last.alpha;
      return true;
    }
    for (const Step& s : chain)
      if (!s.residual && s.alg == step.alg && (s.alpha != step.alpha || s.beta != step.beta)) return false;
    chain.push_back(step);
    return true;
  }

  /// The residual operands of this run, by post-op index; false when one does not have the
  /// output's dtype and shape (the caller then runs the reference chain).
  bool residuals(const KernelContext& ctx, const Shape& out_shape,
                 std::vector<std::pair<int, const Tensor*>>& out) const {
    for (size_t i = 0; i < steps.size(); ++i) {
      if (!steps[i].residual) continue;
      const Tensor& r = ctx.input(steps[i].input);
      if (r.dtype() != DType::kFloat32 || r.shape() != out_shape) return false;
      out.emplace_back(static_cast<int>(i), &r);
    }
    return true;
  }
};

/// numpy.matmul's output shape; nullopt when the shapes do not multiply.
std::optional<Shape> matmul_shape(const Shape& sa, const Shape& sb) {
  const std::optional<MatMulShapes> s = matmul_shapes(sa, sb);
  if (!s) return std::nullopt;
  return s->out;
}

/// Descriptors of one row chunk of a matmul (src and dst hold `rows` rows of the full operands).
struct MatMulGeometry {
  memory::desc src, weights, dst;
  std::optional<memory::desc> bias;
};

/// A matmul primitive built for one chunk geometry; `ok` is false when oneDNN has no
/// implementation for it (the kernel then runs the reference chain).
struct MatMulPrimitive {
  bool ok = false;
  dnnl::matmul prim;
  MatMulGeometry geometry;
  /// bf16 layers: the primitive reads a bf16 copy of the fp32 source rows (`bf16_src`), made by
  /// `to_bf16` from the source view `geometry.src`.
  std::optional<memory::desc> bf16_src;
  dnnl::reorder to_bf16;
  memory packed_weights;  // constant weights in the primitive's layout (empty: the input as is)
  memory::desc scratchpad;
};

/// Constant weights reordered into each layout a primitive asked for, shared by the primitives
/// of all shapes and chunk sizes that want the same layout.
class WeightPacks {
 public:
  /// The first layout packed (at plan time when the input shape is static), for plan files;
  /// nullopt when nothing was packed or the first layout is the weights' own (nothing to save:
  /// the weights are a constant of the plan already).
  std::optional<std::pair<memory::desc, memory>> first() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (packs_.empty() || first_is_plain_) return std::nullopt;
    return packs_.front();
  }
  /// Adopts weights packed earlier (restored from a plan file's mapping).
  void adopt(const memory::desc& desc, const memory& packed) {
    std::lock_guard<std::mutex> lock(mutex_);
    packs_.emplace_back(desc, packed);
  }

  memory get(const memory::desc& plain, const memory::desc& wanted, const Tensor& weights) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [desc, packed] : packs_)
      if (desc == wanted) return packed;
    memory source(plain, ds::cpu_engine(), const_cast<void*>(weights.raw_data()));
    if (wanted == plain) {
      // The primitive reads the weights as they are (oneDNN's choice for a product of few rows,
      // e.g. a classifier at batch 1): a reorder would only copy them, doubling their memory.
      // The kernel keeps `weights` alive as long as these packs.
      if (packs_.empty()) first_is_plain_ = true;
      packs_.emplace_back(wanted, source);
      return source;
    }
    memory packed(wanted, ds::cpu_engine());
    dnnl::stream stream(ds::cpu_engine());
    dnnl::reorder(source, packed).execute(stream, source, packed);
    stream.wait();
    if (packs_.size() >= 4) {  // shapes keep changing: primitives hold their own handles
      packs_.clear();
      first_is_plain_ = false;
    }
    packs_.emplace_back(wanted, packed);
    return packed;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<memory::desc, memory>> packs_;
  bool first_is_plain_ = false;  // packs_.front() is the weights themselves
};

/// Whether `init` is a bf16 layer and oneDNN runs bf16 natively here (AVX512-BF16 or AMX).
bool native_bf16(const KernelInit& init) {
  return compute_precision_of(init) == DType::kBFloat16 && dnnl_support::native_bf16();
}

/// Plan files (runtime/packed_state.h): constant weights packed at plan time, saved with
/// oneDNN's descriptor of their layout and restored in place, like the convolutions'.
class PackedWeights : public PackedStateKernel {
 public:
  /// Whether this layer computes in bf16 on oneDNN (a bf16 layer on a CPU with AVX512-BF16).
  bool bf16_ = false;

  std::optional<PackedState> packed_state() const override {
    std::optional<std::pair<memory::desc, memory>> first = packs_.first();
    if (!first) return std::nullopt;
    const dnnl_memory_desc_t& desc = first->first.data;
    PackedState state;
    state.layout.assign(reinterpret_cast<const char*>(&desc), sizeof desc);
    const size_t size = first->first.get_size();
    state.data = Tensor::from_bytes(DType::kUInt8, {static_cast<int64_t>(size)}, first->second.get_data_handle(), size);
    return state;
  }

 protected:
  /// Restores saved weights (they stay in the plan's mapping, held by restored_).
  void restore(const PackedState& state, const KernelInit& init) {
    const memory::desc desc = dnnl_support::restored_weights_desc(state, init);
    restored_ = state.data;
    packs_.adopt(desc, memory(desc, ds::cpu_engine(), restored_.raw_data()));
  }
  /// Restores the saved weights, or packs them now for the primitive the static shapes will use.
  void restore_or_prepack(const KernelInit& init, const memory::desc& src, const memory::desc& weights_plain,
                          const memory::desc& dst, const Tensor& weights) {
    const auto* source = dynamic_cast<const PackedStateSource*>(&init);
    if (source && source->saved_packed_state()) return restore(*source->saved_packed_state(), init);
    try {
      ds::ThreadScope scope(1);
      const memory::data_type type = bf16_ ? memory::data_type::bf16 : memory::data_type::f32;
      const memory::desc request(weights_plain.dims(), type, memory::format_tag::any);
      const memory::desc source = bf16_ ? memory::desc(src.dims(), type, dense_strides(src.dims())) : src;
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(source, request, dst), ds::user_scratchpad_attr(),
                                            ds::cpu_engine());
      packs_.get(weights_plain, pd.weights_desc(), weights);
    } catch (const dnnl::error&) {
      // No implementation for this geometry: the run takes the reference path anyway.
    }
  }

  mutable WeightPacks packs_;
  Tensor restored_;
};

/// Creates a single-threaded primitive (chunks run in parallel on parity's threads).
/// `bf16`: a bf16 layer with constant weights (runtime/reduced_precision.h): bf16 source and
/// weights, fp32 accumulation and destination.
MatMulPrimitive make_matmul(const MatMulGeometry& g, const Epilogue& epilogue, const Tensor* constant_weights,
                            WeightPacks& packs, bool bf16 = false) {
  MatMulPrimitive p;
  ds::ThreadScope scope(1);
  bf16 = bf16 && constant_weights != nullptr;
  try {
    const memory::data_type operand_type = bf16 ? memory::data_type::bf16 : memory::data_type::f32;
    const memory::desc weights_request =
        constant_weights ? memory::desc(g.weights.dims(), operand_type, memory::format_tag::any) : g.weights;
    memory::desc src = g.src;
    if (bf16) {
      src = memory::desc(g.src.dims(), memory::data_type::bf16, dense_strides(g.src.dims()));
      p.bf16_src = src;
      p.to_bf16 = dnnl::reorder(dnnl::reorder::primitive_desc(ds::cpu_engine(), g.src, ds::cpu_engine(), src));
    }
    dnnl::primitive_attr attr = ds::user_scratchpad_attr();
    if (!epilogue.steps.empty()) attr.set_post_ops(epilogue.build(g.dst));
    const dnnl::matmul::desc desc = g.bias ? dnnl::matmul::desc(src, weights_request, *g.bias, g.dst)
                                           : dnnl::matmul::desc(src, weights_request, g.dst);
    const dnnl::matmul::primitive_desc pd(desc, attr, ds::cpu_engine());
    p.prim = dnnl::matmul(pd);
    p.geometry = g;
    p.geometry.weights = pd.weights_desc();
    p.scratchpad = pd.scratchpad_desc();
    if (constant_weights) p.packed_weights = packs.get(g.weights, pd.weights_desc(), *constant_weights);
    p.ok = true;
  } catch (const dnnl::error&) {
    p.ok = false;
  }
  return p;
}

memory wrap_at(const memory::desc& desc, const Tensor& tensor, int64_t offset) {
  return memory(desc, ds::cpu_engine(), const_cast<float*>(tensor.data<float>()) + offset);
}

/// Element offsets of a chunk's first row in src, dst and bias.
struct ChunkOffsets {
  int64_t src = 0, dst = 0, bias = 0;
};

void run_matmul(const MatMulPrimitive& p, const Tensor& a, const Tensor& b, const Tensor* bias,
                const std::vector<std::pair<int, const Tensor*>>& residuals, Tensor& out, const ChunkOffsets& at) {
  memory src = wrap_at(p.geometry.src, a, at.src);
  if (p.bf16_src) {
    memory converted = ds::thread_buffer(*p.bf16_src, ds::BufferSlot::kSource);
    dnnl::stream stream(ds::cpu_engine());
    p.to_bf16.execute(stream, src, converted);
    stream.wait();
    src = converted;
  }
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, src},
      {DNNL_ARG_WEIGHTS, p.packed_weights ? p.packed_weights : ds::wrap(p.geometry.weights, b)},
      {DNNL_ARG_DST, wrap_at(p.geometry.dst, out, at.dst)}};
  if (p.geometry.bias) args.emplace(DNNL_ARG_BIAS, wrap_at(*p.geometry.bias, *bias, at.bias));
  for (const auto& [index, residual] : residuals)
    args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1, wrap_at(p.geometry.dst, *residual, at.dst));
  if (p.scratchpad.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, ds::thread_scratchpad(p.scratchpad));
  ds::execute(p.prim, args, 1);
}

/// Splits `rows` output rows over the session's threads and runs `make`'s primitive per chunk;
/// returns false (nothing written) when oneDNN cannot build a primitive for some chunk size.
template <typename PrimitiveFor, typename Run>
bool run_chunked(KernelContext& ctx, int64_t rows, int64_t work, const PrimitiveFor& primitive_for, const Run& run) {
  // Below ~1M multiply-adds a chunk's thread hand-off costs more than it saves.
  constexpr int64_t kMinParallelWork = int64_t{1} << 20;
  const int64_t chunks = ds::row_chunk_count(ctx, rows, 4, work, kMinParallelWork);
  return ds::run_chunks_with_primitives(
      ctx, rows, chunks,
      [&](int64_t chunk_rows) {
        std::shared_ptr<const MatMulPrimitive> p = primitive_for(chunk_rows);
        return p->ok ? p : nullptr;
      },
      run);
}

/// The bias operand of a fused Add when it broadcasts along the last dim of `out_shape` only.
const Tensor* usable_bias(const KernelContext& ctx, int bias_input, const Shape& out_shape) {
  const Tensor& bias = ctx.input(static_cast<size_t>(bias_input));
  if (bias.dtype() != DType::kFloat32 || bias.rank() == 0 || static_cast<size_t>(bias.rank()) > out_shape.size())
    return nullptr;
  for (int64_t d = 0; d + 1 < bias.rank(); ++d)
    if (bias.dim(d) != 1) return nullptr;
  const int64_t last = bias.shape().back();
  return last == out_shape.back() || last == 1 ? &bias : nullptr;
}

/// The direct path for a product of a few rows against constant weights (small_gemm::DirectWeights):
/// the product, the bias (broadcast from `bias_dims` = {rows or 1, N or 1}) and the epilogue.
Tensor run_small_product(KernelContext& ctx, const float* x, int64_t ldx, int64_t rows,
                         const small_gemm::DirectWeights& weights, const Tensor* bias, const memory::dims& bias_dims,
                         const Epilogue& epilogue, const std::vector<std::pair<int, const Tensor*>>& residuals,
                         Shape out_shape) {
  const int64_t n = weights.n();
  Tensor out = Tensor::uninitialized(DType::kFloat32, std::move(out_shape));
  float* y = out.data<float>();
  weights.multiply_all(ctx, x, ldx, rows, y);
  if (bias) {
    const float* b = bias->data<float>();
    const bool per_row = bias_dims[0] != 1, per_column = bias_dims[1] != 1;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < n; ++j) y[r * n + j] += b[(per_row ? r * bias_dims[1] : 0) + (per_column ? j : 0)];
  }
  epilogue.apply(y, rows * n, residuals);
  return out;
}

/// An int8 layer's product (runtime/reduced_precision.h) with constant 2-D weights: rows x K
/// source rows (dense) times the weights, an optional bias along N, the epilogue. The weights
/// arrive fake-quantized (the layer's init) and are taken back to their int8 values and
/// per-column scales. Where oneDNN's int8 sums are exact (VNNI) its s8 matmul runs, the
/// dequantization and epilogue as oneDNN post-ops; elsewhere parity's s8 x s8 kernel
/// (ops/quantization/int8_gemm.h, exact int32 sums on AVX2), its weights packed at start,
/// dequantizing with the bias, then the epilogue's steps over the output (Epilogue::apply).
class Int8Product {
 public:
  /// Whether a layer on a CPU of tier `isa` has an exact int8 product that pays.
  static bool available(KernelIsa isa) { return dnnl_support::int8_sums_exactly() || int8_gemm::pays_on(isa); }

  /// `b`: the constant weights as K x N, or as N x K when `b_is_nk` (Gemm's transB); requires
  /// available(isa).
  void start(const Tensor& b, bool b_is_nk, KernelIsa isa) {
    QuantizedWeights q = quantize_weights_int8(b, b_is_nk ? 0 : 1);
    weight_scales_ = std::move(q.scales);
    // A column of zero weights (pruned) has scale 0 and values 0: any positive scale computes the
    // same zeros, and keeps its output scale usable for the bias.
    for (float& s : weight_scales_)
      if (!(s > 0)) s = 1.0f;
    nk_ = b_is_nk;
    k_ = b_is_nk ? b.dim(1) : b.dim(0);
    n_ = b_is_nk ? b.dim(0) : b.dim(1);
    isa_ = isa;
    parity_kernel_ = !dnnl_support::int8_sums_exactly();
    if (parity_kernel_) packed_ = int8_gemm::PackedS8Weights(q.values.data<int8_t>(), k_, n_, nk_);
    else values_ = std::move(q.values);
    started_ = true;
  }
  /// "parity s8s8 <variant>" on parity's kernel, "" on oneDNN's (Int8EngineKernel).
  std::string engine() const {
    return parity_kernel_ ? std::string("parity s8s8 ") + int8_gemm::variant_name(isa_) : std::string();
  }
  /// The source's calibrated scale (input 0 only); false keeps the layer on fake-quantized fp32.
  bool take(const std::map<size_t, float>& scales) {
    active_ = started_ && scales.size() == 1 && scales.count(0) && scales.at(0) > 0 && std::isfinite(scales.at(0));
    if (!active_) return false;
    x_scale_ = scales.at(0);
    output_scales_.resize(weight_scales_.size());
    for (size_t c = 0; c < weight_scales_.size(); ++c) output_scales_[c] = x_scale_ * weight_scales_[c];
    return true;
  }
  bool active() const { return active_; }
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }

  /// A fake-quantized copy of the source, for the reference chain when the int8 path cannot run.
  Tensor fake_quantized(const Tensor& a) const {
    Tensor copy = a.clone();
    fake_quantize_int8(copy.data<float>(), copy.numel(), x_scale_);
    return copy;
  }

  /// out[rows, N] = dequantized(int8(a) x int8(B)) (+ bias[N]) then the epilogue; false when
  /// the kernel cannot run it (nothing written).
  bool run(KernelContext& ctx, const Tensor& a, int64_t rows, const float* bias, const Epilogue& epilogue,
           const std::vector<std::pair<int, const Tensor*>>& residuals, Tensor& out) const {
    if (parity_kernel_) return run_parity(ctx, a, rows, bias, epilogue, residuals, out);
    Tensor aq = pooled_uninitialized_tensor(DType::kInt8, {rows, k_});
    quantize_int8(a.data<float>(), aq.data<int8_t>(), rows * k_, x_scale_);
    Tensor scaled_bias;
    if (bias) {
      // oneDNN 2.x adds the bias to the int32 sum before the output scales: the bias in those units.
      scaled_bias = Tensor(DType::kFloat32, {1, n_});
      for (int64_t j = 0; j < n_; ++j)
        scaled_bias.data<float>()[j] = output_scales_[j] > 0 ? bias[j] / output_scales_[j] : 0.0f;
    }
    auto primitive_for = [&](int64_t chunk_rows) {
      // The epilogue grows while the planner fuses tails: its length is part of the key.
      const std::vector<int64_t> key{chunk_rows, bias != nullptr, static_cast<int64_t>(epilogue.steps.size())};
      return cache_.get(key, [&] { return make(chunk_rows, bias != nullptr, epilogue); });
    };
    return run_chunked(ctx, rows, rows * n_ * k_, primitive_for, [&](const MatMulPrimitive& p, int64_t begin) {
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, memory(p.geometry.src, ds::cpu_engine(), aq.data<int8_t>() + begin * k_)},
          {DNNL_ARG_WEIGHTS, p.packed_weights},
          {DNNL_ARG_DST, wrap_at(p.geometry.dst, out, begin * n_)}};
      if (bias) args.emplace(DNNL_ARG_BIAS, ds::wrap(*p.geometry.bias, scaled_bias));
      for (const auto& [index, residual] : residuals)
        args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1,
                     wrap_at(p.geometry.dst, *residual, begin * n_));
      if (p.scratchpad.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, ds::thread_scratchpad(p.scratchpad));
      ds::execute(p.prim, args, 1);
    });
  }

 private:
  /// parity's kernel: the source quantized to int16 pairs, column blocks split between threads,
  /// then the epilogue's steps over the dequantized output.
  bool run_parity(KernelContext& ctx, const Tensor& a, int64_t rows, const float* bias, const Epilogue& epilogue,
                  const std::vector<std::pair<int, const Tensor*>>& residuals, Tensor& out) const {
    const int64_t padded_k = packed_.padded_k();
    Tensor aq = pooled_uninitialized_tensor(DType::kInt16, {rows, padded_k});
    int8_gemm::quantize_rows(a.data<float>(), rows, k_, padded_k, x_scale_, aq.data<int16_t>(), isa_);
    int8_gemm::Output o;
    o.y = out.data<float>();
    o.scales = output_scales_.data();
    o.bias = bias;
    o.ld = n_;
    const int64_t blocks = packed_.column_blocks();
    auto run_blocks = [&](int64_t begin, int64_t end) {
      int8_gemm::multiply(aq.data<int16_t>(), rows, packed_, begin, end, o, isa_);
    };
    // Below ~1M multiply-adds a thread hand-off costs more than it saves.
    if (ctx.num_threads() > 1 && blocks > 1 && rows * n_ * k_ >= (int64_t{1} << 20)) ctx.parallel_for(blocks, run_blocks);
    else run_blocks(0, blocks);
    epilogue.apply(out.data<float>(), rows * n_, residuals);
    return true;
  }

  MatMulPrimitive make(int64_t rows, bool has_bias, const Epilogue& epilogue) const {
    MatMulPrimitive p;
    ds::ThreadScope scope(1);
    try {
      using dt = memory::data_type;
      p.geometry.src = memory::desc({rows, k_}, dt::s8, memory::dims{k_, 1});
      p.geometry.dst = dense_desc({rows, n_});
      const memory::desc plain({k_, n_}, dt::s8, nk_ ? memory::dims{1, k_} : memory::dims{n_, 1});
      if (has_bias) p.geometry.bias = dense_desc({1, n_});
      dnnl::primitive_attr attr = ds::user_scratchpad_attr();
      attr.set_output_scales(1 << 1, output_scales_);  // along N
      if (!epilogue.steps.empty()) attr.set_post_ops(epilogue.build(p.geometry.dst));
      const memory::desc request({k_, n_}, dt::s8, memory::format_tag::any);
      const dnnl::matmul::desc desc = has_bias ? dnnl::matmul::desc(p.geometry.src, request, *p.geometry.bias, p.geometry.dst)
                                               : dnnl::matmul::desc(p.geometry.src, request, p.geometry.dst);
      const dnnl::matmul::primitive_desc pd(desc, attr, ds::cpu_engine());
      p.prim = dnnl::matmul(pd);
      p.geometry.weights = pd.weights_desc();
      p.scratchpad = pd.scratchpad_desc();
      p.packed_weights = packs_.get(plain, pd.weights_desc(), values_);
      p.ok = true;
    } catch (const dnnl::error&) {
      p.ok = false;
    }
    return p;
  }

  bool started_ = false, active_ = false, nk_ = false, parity_kernel_ = false;
  KernelIsa isa_ = KernelIsa::kBaseline;
  Tensor values_;  // kInt8, B's own layout (oneDNN's path)
  int8_gemm::PackedS8Weights packed_;  // parity's kernel
  int64_t k_ = 0, n_ = 0;
  std::vector<float> weight_scales_, output_scales_;
  float x_scale_ = 0;
  mutable WeightPacks packs_;
  ds::ShapeCache<MatMulPrimitive> cache_;
};

/// Runs an int8 product for a bias that broadcasts along N only (`bias_dims` {1, N or 1}); false
/// when the int8 path does not cover the case.
bool run_int8(const Int8Product& int8, KernelContext& ctx, const Tensor& a, int64_t rows, const Tensor* bias,
              const memory::dims& bias_dims, const Epilogue& epilogue,
              const std::vector<std::pair<int, const Tensor*>>& residuals, const Shape& out_shape) {
  std::vector<float> bias_row;
  if (bias) {
    if (bias_dims[0] != 1) return false;
    bias_row.resize(int8.n());
    for (int64_t j = 0; j < int8.n(); ++j) bias_row[j] = bias->data<float>()[bias_dims[1] == 1 ? 0 : j];
  }
  Tensor out = Tensor::uninitialized(DType::kFloat32, out_shape);
  if (!int8.run(ctx, a, rows, bias ? bias_row.data() : nullptr, epilogue, residuals, out)) return false;
  ctx.set_output(0, Value(std::move(out)));
  return true;
}

class DnnlMatMulKernel final : public Kernel, public FusableKernel, public PackedWeights, public NativeInt8Kernel,
                               public Int8EngineKernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    if (!maybe_float(init.input_dtype(0)) || !maybe_float(init.input_dtype(1))) return nullptr;
    return std::unique_ptr<Kernel>(new DnnlMatMulKernel(init));
  }

  bool fuse_tail(const KernelInit& tail, size_t first_extra_input) override {
    if (!epilogue_.accept(tail, first_extra_input, true)) return false;
    chain_.add_tail(tail, first_extra_input);
    return true;
  }

  // Declined: the fp32 path on the fake-quantized weights (packed on first use).
  bool take_int8_scales(const std::map<size_t, float>& scales) override { return int8_.take(scales); }
  bool runs_int8() const override { return int8_.active(); }
  std::string int8_engine() const override { return int8_.engine(); }

  void compute(KernelContext& ctx) const override {
    if (int8_.active()) return compute_int8(ctx);
    compute_float(ctx);
  }

 private:
  /// int8: A as rows x K against the constant [K, N] weights; the cases the int8 path does not
  /// cover run the reference chain on the fake-quantized source.
  void compute_int8(KernelContext& ctx) const {
    const Tensor& a = ctx.input(0);
    auto fallback = [&] {
      std::map<size_t, Value> replaced;
      if (a.dtype() == DType::kFloat32) replaced[0] = Value(int8_.fake_quantized(a));
      chain_.compute(ctx, replaced);
    };
    if (a.dtype() != DType::kFloat32 || a.rank() < 2 || a.shape().back() != int8_.k() || a.numel() == 0)
      return fallback();
    Shape out_shape = a.shape();
    out_shape.back() = int8_.n();
    if (out_shape.size() < epilogue_.min_out_rank) return fallback();
    const Tensor* bias = nullptr;
    memory::dims bias_dims{1, 1};
    if (epilogue_.bias_input >= 0) {
      if (!(bias = usable_bias(ctx, epilogue_.bias_input, out_shape))) return fallback();
      bias_dims[1] = bias->shape().back();
    }
    std::vector<std::pair<int, const Tensor*>> residuals;
    if (!epilogue_.residuals(ctx, out_shape, residuals)) return fallback();
    if (!run_int8(int8_, ctx, a, a.numel() / int8_.k(), bias, bias_dims, epilogue_, residuals, out_shape))
      return fallback();
  }

  void compute_float(KernelContext& ctx) const {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (a.dtype() != DType::kFloat32 || b.dtype() != DType::kFloat32 || a.rank() == 0 || b.rank() == 0)
      return chain_.compute(ctx);
    // A mismatch is the reference kernel's to report.
    const std::optional<MatMulShapes> shapes = matmul_shapes(a.shape(), b.shape());
    if (!shapes) return chain_.compute(ctx);
    const int64_t m = shapes->m, k = shapes->k, n = shapes->n;
    const bool b_vector = shapes->b_vector;
    const Shape& batch_a = shapes->batch_a;
    const Shape& batch_b = shapes->batch_b;
    const Shape& batch = shapes->batch;
    const size_t batch_rank = batch.size();
    Shape out_shape = shapes->out;
    if (m == 0 || n == 0 || k == 0 || shape_numel(batch) == 0 || out_shape.size() < epilogue_.min_out_rank)
      return chain_.compute(ctx);
    const Tensor* bias = nullptr;
    if (epilogue_.bias_input >= 0) {
      if (b_vector || !(bias = usable_bias(ctx, epilogue_.bias_input, out_shape))) return chain_.compute(ctx);
    }
    std::vector<std::pair<int, const Tensor*>> residuals;
    if (!epilogue_.residuals(ctx, out_shape, residuals)) return chain_.compute(ctx);
    // Weights shared by every batch: one (batch * M, K) x (K, N) product, split by rows.
    const bool fold = shape_numel(batch_b) == 1 && shape_numel(batch_a) == shape_numel(batch);
    if (!fold && batch_rank + 2 > kMaxDnnlRank) return chain_.compute(ctx);
    const int64_t rows = fold ? shape_numel(batch_a) * m : m;
    if (small_b_ && fold && !b_vector && rows <= small_gemm::kMaxRows && epilogue_.loops_ok()) {
      const memory::dims bias_dims{1, bias ? bias->shape().back() : 1};
      ctx.set_output(0, Value(run_small_product(ctx, a.data<float>(), k, rows, *small_b_, bias, bias_dims, epilogue_,
                                                residuals, std::move(out_shape))));
      return;
    }

    std::vector<int64_t> key{fold ? 1 : 0};
    key.insert(key.end(), a.shape().begin(), a.shape().end());
    key.push_back(-1);
    key.insert(key.end(), b.shape().begin(), b.shape().end());
    if (bias) key.push_back(bias->shape().back());
    key.push_back(0);  // chunk rows go here
    auto primitive_for = [&](int64_t chunk_rows) {
      key.back() = chunk_rows;
      return cache_.get(key, [&] {
        MatMulGeometry g;
        memory::dims src, dst, weights, full_src, full_dst;
        if (fold) {
          src = {chunk_rows, k};
          dst = {chunk_rows, n};
          weights = {k, n};
          full_src = src;
          full_dst = dst;
        } else {
          src.assign(batch_a.begin(), batch_a.end());
          dst.assign(batch.begin(), batch.end());
          weights.assign(batch_b.begin(), batch_b.end());
          full_src = src;
          full_dst = dst;
          src.insert(src.end(), {chunk_rows, k});
          full_src.insert(full_src.end(), {m, k});
          dst.insert(dst.end(), {chunk_rows, n});
          full_dst.insert(full_dst.end(), {m, n});
          weights.insert(weights.end(), {k, n});
        }
        g.src = strided_desc(src, full_src);
        g.dst = strided_desc(dst, full_dst);
        g.weights = dense_desc(weights);
        if (bias) {
          memory::dims bias_dims(dst.size(), 1);
          bias_dims.back() = bias->shape().back();
          g.bias = dense_desc(bias_dims);
        }
        return make_matmul(g, epilogue_, constant_b_ ? &*constant_b_ : nullptr, packs_, bf16_);
      });
    };
    Tensor out = Tensor::uninitialized(DType::kFloat32, out_shape);
    const bool ran = run_chunked(ctx, rows, shape_numel(batch) * m * n * k, primitive_for,
                                 [&](const MatMulPrimitive& p, int64_t begin) {
                                   run_matmul(p, a, b, bias, residuals, out, {begin * k, begin * n, 0});
                                 });
    if (!ran) return chain_.compute(ctx);
    ctx.set_output(0, Value(std::move(out)));
  }

  explicit DnnlMatMulKernel(const KernelInit& init) : chain_(init.create_reference_kernel(), init.num_inputs()) {
    std::optional<Tensor> b = init.constant_input(1);
    const std::optional<Shape> sa = init.input_static_shape(0);
    const std::optional<Shape> sb = b ? std::optional<Shape>(b->shape()) : init.input_static_shape(1);
    if (sa && sb) epilogue_.static_out = matmul_shape(*sa, *sb);
    if (b && b->dtype() == DType::kFloat32) constant_b_ = std::move(b);
    bf16_ = constant_b_ && native_bf16(init);
    // A bf16 layer's large weights stay on oneDNN's bf16 path: a few-row product is bound by
    // reading the weights, and bf16 reads half the bytes of the fp32 direct loop.
    if (constant_b_ && constant_b_->rank() >= 2 && constant_b_->numel() == constant_b_->dim(-2) * constant_b_->dim(-1) &&
        (!bf16_ || constant_b_->numel() <= small_gemm::kMaxWeights))
      small_b_.emplace(*constant_b_, false, kernel_isa(init));
    if (constant_b_ && constant_b_->rank() == 2 && compute_precision_of(init) == DType::kInt8 &&
        Int8Product::available(kernel_isa(init))) {
      int8_.start(*constant_b_, false, kernel_isa(init));
      return;  // the int8 weights pack on first use; fp32 ones only if the int8 path is declined
    }
    prepack(init, sa);
  }

  /// A 2-D constant B and a static A: the weights packed for the single-chunk product (one
  /// thread), unless the direct small-product path will run instead.
  void prepack(const KernelInit& init, const std::optional<Shape>& sa) {
    if (!constant_b_ || constant_b_->rank() != 2 || !sa || sa->size() < 2) return;
    const int64_t k = sa->back(), n = constant_b_->dim(1);
    if (k != constant_b_->dim(0) || k == 0 || n == 0) return;
    const int64_t rows = shape_numel(*sa) / k;
    if (rows == 0 || (small_b_ && rows <= small_gemm::kMaxRows)) return;
    restore_or_prepack(init, dense_desc({rows, k}), dense_desc({k, n}), dense_desc({rows, n}), *constant_b_);
  }

  ReferenceChain chain_;
  std::optional<Tensor> constant_b_;
  std::optional<small_gemm::DirectWeights> small_b_;  // constant B for the direct small-product path
  Epilogue epilogue_;
  ds::ShapeCache<MatMulPrimitive> cache_;
  Int8Product int8_;
};

/// Gemm: Y = alpha * op(A) * op(B) + beta * C. Alpha is folded into constant weights, beta into a
/// constant C; the cases where neither folding nor oneDNN's bias can express them are declined.
class DnnlGemmKernel final : public Kernel, public FusableKernel, public PackedWeights, public NativeInt8Kernel,
                               public Int8EngineKernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    for (size_t i = 0; i < 3; ++i)
      if (init.has_input(i) && !maybe_float(init.input_dtype(i))) return nullptr;
    const float alpha = init.attr_float("alpha", 1.f), beta = init.attr_float("beta", 1.f);
    std::optional<Tensor> b = init.constant_input(1);
    const bool constant_b = b && b->dtype() == DType::kFloat32;
    if (alpha != 1.f && !constant_b) return nullptr;
    if (init.has_input(2)) {
      std::optional<Tensor> c = init.constant_input(2);
      const bool constant_c = c && c->dtype() == DType::kFloat32;
      if (beta == 0.f) return nullptr;  // beta * C still spreads C's NaN/Inf: leave that to the reference
      if (beta != 1.f && !constant_c) return nullptr;
    }
    return std::unique_ptr<Kernel>(new DnnlGemmKernel(init, alpha, beta));
  }

  bool fuse_tail(const KernelInit& tail, size_t first_extra_input) override {
    if (!epilogue_.accept(tail, first_extra_input, !has_c_)) return false;
    chain_.add_tail(tail, first_extra_input);
    return true;
  }

  bool take_int8_scales(const std::map<size_t, float>& scales) override { return int8_.take(scales); }
  bool runs_int8() const override { return int8_.active(); }
  std::string int8_engine() const override { return int8_.engine(); }

  void compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (int8_.active()) {
      if (a.dtype() != DType::kFloat32 || a.rank() != 2 || a.dim(1) != int8_.k() || a.dim(0) == 0 || !run_int8_gemm(ctx)) {
        std::map<size_t, Value> replaced;
        if (a.dtype() == DType::kFloat32) replaced[0] = Value(int8_.fake_quantized(a));
        chain_.compute(ctx, replaced);
      }
      return;
    }
    if (a.dtype() != DType::kFloat32 || b.dtype() != DType::kFloat32 || a.rank() != 2 || b.rank() != 2)
      return chain_.compute(ctx);
    const int64_t m = trans_a_ ? a.dim(1) : a.dim(0);
    const int64_t k = trans_a_ ? a.dim(0) : a.dim(1);
    const int64_t kb = trans_b_ ? b.dim(1) : b.dim(0);
    const int64_t n = trans_b_ ? b.dim(0) : b.dim(1);
    if (k != kb || m == 0 || n == 0 || k == 0) return chain_.compute(ctx);
    const Shape out_shape{m, n};
    if (out_shape.size() < epilogue_.min_out_rank) return chain_.compute(ctx);
    // The bias: Gemm's C (scaled by beta when constant) or a fused Add's last-dim vector.
    const Tensor* bias = nullptr;
    memory::dims bias_dims;
    if (has_c_) {
      bias = constant_c_ ? &*constant_c_ : &ctx.input(2);
      if (bias->dtype() != DType::kFloat32 || bias->rank() > 2) return chain_.compute(ctx);
      bias_dims = {1, 1};
      for (int64_t d = 0; d < bias->rank(); ++d) bias_dims[2 - bias->rank() + d] = bias->shape()[d];
      if ((bias_dims[0] != 1 && bias_dims[0] != m) || (bias_dims[1] != 1 && bias_dims[1] != n))
        return chain_.compute(ctx);
    } else if (epilogue_.bias_input >= 0) {
      if (!(bias = usable_bias(ctx, epilogue_.bias_input, out_shape))) return chain_.compute(ctx);
      bias_dims = {1, bias->shape().back()};
    }
    std::vector<std::pair<int, const Tensor*>> residuals;
    if (!epilogue_.residuals(ctx, out_shape, residuals)) return chain_.compute(ctx);
    if (small_b_ && m <= small_gemm::kMaxRows && (!trans_a_ || m == 1) && epilogue_.loops_ok()) {
      ctx.set_output(0, Value(run_small_product(ctx, a.data<float>(), k, m, *small_b_, bias, bias_dims, epilogue_,
                                                residuals, out_shape)));
      return;
    }
    const bool bias_per_row = bias && bias_dims[0] == m && m != 1;
    std::vector<int64_t> key{m, k, n};
    key.insert(key.end(), bias_dims.begin(), bias_dims.end());
    key.push_back(0);  // chunk rows go here
    auto primitive_for = [&](int64_t chunk_rows) {
      key.back() = chunk_rows;
      return cache_.get(key, [&] {
        MatMulGeometry g;
        g.src = memory::desc({chunk_rows, k}, memory::data_type::f32, trans_a_ ? memory::dims{1, m} : memory::dims{k, 1});
        g.weights = memory::desc({k, n}, memory::data_type::f32, trans_b_ ? memory::dims{1, k} : memory::dims{n, 1});
        g.dst = dense_desc({chunk_rows, n});
        if (bias) g.bias = dense_desc({bias_per_row ? chunk_rows : 1, bias_dims[1]});
        return make_matmul(g, epilogue_, constant_b_ ? &*constant_b_ : nullptr, packs_, bf16_);
      });
    };
    Tensor out = Tensor::uninitialized(DType::kFloat32, out_shape);
    const bool ran = run_chunked(ctx, m, m * n * k, primitive_for, [&](const MatMulPrimitive& p, int64_t begin) {
      run_matmul(p, a, b, bias, residuals, out,
                 {trans_a_ ? begin : begin * k, begin * n, bias_per_row ? begin * bias_dims[1] : 0});
    });
    if (!ran) return chain_.compute(ctx);
    ctx.set_output(0, Value(std::move(out)));
  }

 private:
  DnnlGemmKernel(const KernelInit& init, float alpha, float beta)
      : chain_(init.create_reference_kernel(), init.num_inputs()),
        trans_a_(init.attr_int("transA", 0) != 0),
        trans_b_(init.attr_int("transB", 0) != 0),
        has_c_(init.has_input(2)) {
    const std::optional<Shape> sa = init.input_static_shape(0), sb = init.input_static_shape(1);
    if (sa && sb && sa->size() == 2 && sb->size() == 2)
      epilogue_.static_out = Shape{trans_a_ ? (*sa)[1] : (*sa)[0], trans_b_ ? (*sb)[0] : (*sb)[1]};
    std::optional<Tensor> b = init.constant_input(1);
    if (b && b->dtype() == DType::kFloat32) {
      constant_b_ = alpha == 1.f ? std::move(*b) : b->clone();  // a copy shares the initializer's storage
      if (alpha != 1.f)
        for (float& v : constant_b_->values<float>()) v *= alpha;
    }
    if (has_c_ && beta != 1.f) {
      // create() only accepts beta != 1 with a constant C.
      constant_c_ = init.constant_input(2)->clone();
      for (float& v : constant_c_->values<float>()) v *= beta;
    }
    // Products of a few rows take the direct path at any weight size: it streams large weights
    // once, in place, where packing them would double their memory and take longer than the
    // product (a 411 MB classifier layer: 6 s on a busy machine).
    // [N, K] weights (transB) stayed direct at any size before the [K, N] loop existed, bf16 or not;
    // other large bf16 weights stay on oneDNN's bf16 path, which reads half the bytes.
    bf16_ = constant_b_ && native_bf16(init);
    if (constant_b_ && (!bf16_ || trans_b_ || constant_b_->numel() <= small_gemm::kMaxWeights))
      small_b_.emplace(*constant_b_, trans_b_, kernel_isa(init));
    if (constant_b_ && !trans_a_ && compute_precision_of(init) == DType::kInt8 &&
        Int8Product::available(kernel_isa(init))) {
      int8_.start(*constant_b_, trans_b_, kernel_isa(init));
      return;  // the int8 weights pack on first use
    }
    prepack(init);
  }

  /// int8 (A not transposed, checked by compute): the bias is C (beta folded when constant) or a
  /// fused Add's row vector; a C that varies along M leaves the int8 path.
  bool run_int8_gemm(KernelContext& ctx) const {
    const Tensor& a = ctx.input(0);
    const Shape out_shape{a.dim(0), int8_.n()};
    if (out_shape.size() < epilogue_.min_out_rank) return false;
    const Tensor* bias = nullptr;
    memory::dims bias_dims{1, 1};
    if (has_c_) {
      bias = constant_c_ ? &*constant_c_ : &ctx.input(2);
      if (bias->dtype() != DType::kFloat32 || bias->rank() > 2) return false;
      for (int64_t d = 0; d < bias->rank(); ++d) bias_dims[2 - bias->rank() + d] = bias->shape()[d];
      if (bias_dims[0] != 1 || (bias_dims[1] != 1 && bias_dims[1] != int8_.n())) return false;
    } else if (epilogue_.bias_input >= 0) {
      if (!(bias = usable_bias(ctx, epilogue_.bias_input, out_shape))) return false;
      bias_dims[1] = bias->shape().back();
    }
    std::vector<std::pair<int, const Tensor*>> residuals;
    if (!epilogue_.residuals(ctx, out_shape, residuals)) return false;
    return run_int8(int8_, ctx, a, a.dim(0), bias, bias_dims, epilogue_, residuals, out_shape);
  }

  /// A constant B and a static A: the weights packed for the single-chunk product.
  void prepack(const KernelInit& init) {
    const std::optional<Shape> sa = init.input_static_shape(0);
    if (!constant_b_ || !sa || sa->size() != 2) return;
    const int64_t m = trans_a_ ? (*sa)[1] : (*sa)[0], k = trans_a_ ? (*sa)[0] : (*sa)[1];
    const int64_t n = trans_b_ ? constant_b_->dim(0) : constant_b_->dim(1);
    if (k != (trans_b_ ? constant_b_->dim(1) : constant_b_->dim(0)) || m == 0 || n == 0 || k == 0) return;
    if (small_b_ && m <= small_gemm::kMaxRows && (!trans_a_ || m == 1)) return;
    const memory::desc src({m, k}, memory::data_type::f32, trans_a_ ? memory::dims{1, m} : memory::dims{k, 1});
    const memory::desc weights({k, n}, memory::data_type::f32, trans_b_ ? memory::dims{1, k} : memory::dims{n, 1});
    restore_or_prepack(init, src, weights, dense_desc({m, n}), *constant_b_);
  }

  ReferenceChain chain_;
  bool trans_a_, trans_b_, has_c_;
  std::optional<Tensor> constant_b_;  // alpha * B when B is constant
  std::optional<Tensor> constant_c_;  // beta * C when beta != 1
  std::optional<small_gemm::DirectWeights> small_b_;  // alpha * B for the direct small-product path
  Epilogue epilogue_;
  ds::ShapeCache<MatMulPrimitive> cache_;
  Int8Product int8_;
};

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("", "MatMul", (1, 9, 13), DnnlMatMulKernel);
// Gemm before opset 7 has the 'broadcast' attribute semantics: left to the reference kernel.
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Gemm", (7, 9, 11, 13), DnnlGemmKernel);

}  // namespace parity::runtime::ops

#endif  // PARITY_HAVE_DNNL
