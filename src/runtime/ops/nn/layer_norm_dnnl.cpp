// Spec: https://onnx.ai/onnx/operators/onnx__LayerNormalization.html
// Optimized LayerNormalization (opset 17, float32) on oneDNN's layer_normalization primitive,
// beside the reference kernel in normalization.cpp. X is viewed as (outer, inner) with inner the
// product of the dims from 'axis' on; Scale and B must then hold exactly `inner` values (the
// normalized shape, possibly with leading 1s). Nodes that request the Mean / InvStdDev outputs or
// another stash_type are declined; other run-time cases (dtypes, broadcast Scale, empty tensors)
// run the reference kernel.
#if PARITY_HAVE_DNNL

#include <memory>
#include <vector>

#include "runtime/dnnl/dnnl_support.h"
#include "runtime/dnnl/row_chunks.h"
#include "runtime/ops/common/reference_chain.h"

namespace parity::runtime::ops {
namespace {

namespace ds = dnnl_support;
using dnnl::memory;

// Below this many elements a thread hand-off costs more than it saves.
constexpr int64_t kMinParallelElements = 64 * 1024;

struct LayerNormPrimitive {
  dnnl::layer_normalization_forward prim;
  memory::desc data, param, scratchpad;
};

/// True when `param` equals `block` up to leading 1s (no broadcasting inside the block).
bool matches_block(const Shape& param, const Shape& block) {
  if (param.size() > block.size()) {
    for (size_t d = 0; d < param.size() - block.size(); ++d)
      if (param[d] != 1) return false;
    return Shape(param.end() - block.size(), param.end()) == block;
  }
  for (size_t d = 0; d < block.size() - param.size(); ++d)
    if (block[d] != 1) return false;
  return Shape(block.end() - param.size(), block.end()) == param;
}

class DnnlLayerNormKernel final : public Kernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    if (init.has_output(1) || init.has_output(2) || init.attr_int("stash_type", 1) != 1) return nullptr;
    for (size_t i = 0; i < 3; ++i) {
      const DType dtype = init.input_dtype(i);
      if (init.has_input(i) && dtype != DType::kFloat32 && dtype != DType::kUndefined) return nullptr;
    }
    return std::unique_ptr<Kernel>(new DnnlLayerNormKernel(init));
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    if (x.dtype() != DType::kFloat32 || rank == 0 || x.numel() == 0 || axis_ < -rank || axis_ >= rank)
      return reference_.compute(ctx);
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    const Shape block(x.shape().begin() + axis, x.shape().end());
    const int64_t inner = shape_numel(block);
    const int64_t outer = x.numel() / inner;
    const Tensor& scale = ctx.input(1);
    const Tensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    if (scale.dtype() != DType::kFloat32 || !matches_block(scale.shape(), block)) return reference_.compute(ctx);
    if (bias && (bias->dtype() != DType::kFloat32 || !matches_block(bias->shape(), block)))
      return reference_.compute(ctx);
    const int64_t chunks = ds::row_chunk_count(ctx, outer, 1, x.numel(), kMinParallelElements);
    // One primitive per chunk size (at most two); chunks run single-threaded on parity's threads.
    auto primitive_for = [&](int64_t rows) {
      return cache_.get({rows, inner, bias ? 1 : 0}, [&] {
        ds::ThreadScope scope(1);
        LayerNormPrimitive p;
        p.data = memory::desc({rows, inner}, memory::data_type::f32, memory::format_tag::ab);
        p.param = memory::desc({inner}, memory::data_type::f32, memory::format_tag::a);
        auto flags = dnnl::normalization_flags::use_scale;
        if (bias) flags |= dnnl::normalization_flags::use_shift;
        const dnnl::layer_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, p.data, epsilon_,
                                                           flags);
        const dnnl::layer_normalization_forward::primitive_desc pd(desc, ds::user_scratchpad_attr(),
                                                                   ds::cpu_engine());
        p.prim = dnnl::layer_normalization_forward(pd);
        p.scratchpad = pd.scratchpad_desc();
        return p;
      });
    };
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, x.shape());
    float* src = const_cast<float*>(x.data<float>());
    float* dst = y.data<float>();
    ds::run_chunks_with_primitives(ctx, outer, chunks, primitive_for, [&](const LayerNormPrimitive& p, int64_t begin) {
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(p.data, ds::cpu_engine(), src + begin * inner)},
                                           {DNNL_ARG_DST, memory(p.data, ds::cpu_engine(), dst + begin * inner)},
                                           {DNNL_ARG_SCALE, ds::wrap(p.param, scale)}};
      if (bias) args.emplace(DNNL_ARG_SHIFT, ds::wrap(p.param, *bias));
      if (p.scratchpad.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, ds::thread_scratchpad(p.scratchpad));
      ds::execute(p.prim, args, 1);
    });
  }

 private:
  explicit DnnlLayerNormKernel(const KernelInit& init)
      : reference_(init.create_reference_kernel(), init.num_inputs()),
        axis_(init.attr_int("axis", -1)),
        epsilon_(init.attr_float("epsilon", 1e-5f)) {}

  ReferenceChain reference_;  // the reference kernel, for the cases above
  int64_t axis_;
  float epsilon_;
  ds::ShapeCache<LayerNormPrimitive> cache_;
};

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("", "LayerNormalization", 17, DnnlLayerNormKernel);

}  // namespace parity::runtime::ops

#endif  // PARITY_HAVE_DNNL
