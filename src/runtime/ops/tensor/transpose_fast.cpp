// Spec: https://onnx.ai/onnx/operators/onnx__Transpose.html
// Optimized Transpose (any fixed-size dtype), beside the reference kernel in transpose.cpp.
//
// The reference walks every output element with an odometer over the full rank. Here the shape
// is first reduced: size-1 dims are dropped and runs of dims that stay adjacent and in order are
// merged. ShuffleNet's channel shuffle, [1, 2, C/2, H, W] with perm (0, 2, 1, 3, 4), becomes
// [2, C/2, H*W] with perm (1, 0, 2): the innermost dim stays innermost, so the output is a series
// of contiguous H*W blocks, each one memcpy. Otherwise the innermost output dim is a strided
// gather. Large outputs are split over threads by outer index. Strings and invalid perms run the
// reference kernel (which reports the error).
#include <algorithm>
#include <cstring>

#include "runtime/ops/common/elementwise_fast.h"
#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {

/// A transpose with size-1 dims dropped and in-order runs merged: out dim d is in dim perm[d].
struct ReducedTranspose {
  Shape in_shape;             // reduced input shape
  std::vector<int64_t> perm;  // reduced perm
};

ReducedTranspose reduce(const Shape& shape, const std::vector<int64_t>& perm) {
  // Keep the dims of size > 1, renumbered in input order.
  std::vector<int64_t> new_index(shape.size(), -1);
  Shape kept;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1) {
      new_index[d] = static_cast<int64_t>(kept.size());
      kept.push_back(shape[d]);
    }
  std::vector<int64_t> p;
  for (int64_t src : perm)
    if (new_index[src] >= 0) p.push_back(new_index[src]);
  // Merge output-adjacent dims that are input-adjacent in the same order.
  std::vector<std::vector<int64_t>> groups;  // runs of input dims, in output order
  for (int64_t src : p) {
    if (!groups.empty() && groups.back().back() + 1 == src) groups.back().push_back(src);
    else groups.push_back({src});
  }
  // Number the groups in input order.
  std::vector<size_t> order(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) order[g] = g;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return groups[a][0] < groups[b][0]; });
  ReducedTranspose r;
  r.perm.assign(groups.size(), 0);
  for (size_t rank = 0; rank < order.size(); ++rank) {
    const auto& group = groups[order[rank]];
    int64_t size = 1;
    for (int64_t src : group) size *= kept[src];
    r.in_shape.push_back(size);
    r.perm[order[rank]] = static_cast<int64_t>(rank);
  }
  return r;
}

template <typename S>
void transpose(const S* src, S* dst, const ReducedTranspose& t, KernelContext& ctx) {
  const int64_t rank = static_cast<int64_t>(t.perm.size());
  int64_t numel = 1;
  for (int64_t d : t.in_shape) numel *= d;
  if (numel == 0) return;
  if (rank <= 1) {
    std::memcpy(dst, src, sizeof(S) * numel);
    return;
  }
  const std::vector<int64_t> in_strides = shape_strides(t.in_shape);
  Shape out_shape(rank);
  std::vector<int64_t> src_stride(rank);
  for (int64_t d = 0; d < rank; ++d) {
    out_shape[d] = t.in_shape[t.perm[d]];
    src_stride[d] = in_strides[t.perm[d]];
  }
  const int64_t inner = out_shape[rank - 1], inner_stride = src_stride[rank - 1];
  const int64_t outer = numel / inner;
  const bool contiguous_rows = inner_stride == 1;
  auto run_rows = [&](int64_t begin, int64_t end) {
    // Source offset of output row `begin` from its multi-index over the outer dims.
    std::vector<int64_t> index(rank - 1, 0);
    int64_t rest = begin, offset = 0;
    for (int64_t d = rank - 2; d >= 0; --d) {
      index[d] = rest % out_shape[d];
      rest /= out_shape[d];
      offset += index[d] * src_stride[d];
    }
    for (int64_t row = begin; row < end; ++row) {
      S* out = dst + row * inner;
      if (contiguous_rows) {
        std::memcpy(out, src + offset, sizeof(S) * inner);
      } else {
        const S* in = src + offset;
        for (int64_t i = 0; i < inner; ++i) out[i] = in[i * inner_stride];
      }
      for (int64_t d = rank - 2; d >= 0; --d) {  // next row: odometer step
        offset += src_stride[d];
        if (++index[d] < out_shape[d]) break;
        offset -= src_stride[d] * out_shape[d];
        index[d] = 0;
      }
    }
  };
  const int64_t min_rows = std::max<int64_t>(1, ops::fast::kMinParallelElements / inner);
  const int64_t chunks = std::min<int64_t>(ctx.num_threads(), outer / min_rows);
  if (chunks <= 1) {
    run_rows(0, outer);
    return;
  }
  ctx.parallel_for(chunks, [&](int64_t first, int64_t last) {
    for (int64_t c = first; c < last; ++c) run_rows(outer * c / chunks, outer * (c + 1) / chunks);
  });
}

class FastTranspose final : public Kernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    auto kernel = std::unique_ptr<FastTranspose>(new FastTranspose(init.create_reference_kernel()));
    if (init.has_attr("perm")) kernel->perm_ = init.attr_ints("perm");
    return kernel;
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const int64_t rank = data.rank();
    std::vector<int64_t> perm = perm_.value_or(std::vector<int64_t>{});
    if (!perm_)
      for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
    const size_t elem = dtype_size(data.dtype());
    if (!valid_perm(perm, rank) || data.dtype() == DType::kString ||
        (elem != 1 && elem != 2 && elem != 4 && elem != 8)) {
      reference_->compute(ctx);
      return;
    }
    Shape out_shape(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) out_shape[d] = data.shape()[perm[d]];
    Tensor& out = ctx.allocate_output_uninitialized(0, data.dtype(), out_shape);
    const ReducedTranspose reduced = reduce(data.shape(), perm);
    switch (elem) {
      case 1: transpose(static_cast<const uint8_t*>(data.raw_data()), static_cast<uint8_t*>(out.raw_data()), reduced, ctx); break;
      case 2: transpose(static_cast<const uint16_t*>(data.raw_data()), static_cast<uint16_t*>(out.raw_data()), reduced, ctx); break;
      case 4: transpose(static_cast<const uint32_t*>(data.raw_data()), static_cast<uint32_t*>(out.raw_data()), reduced, ctx); break;
      default: transpose(static_cast<const uint64_t*>(data.raw_data()), static_cast<uint64_t*>(out.raw_data()), reduced, ctx); break;
    }
  }

 private:
  explicit FastTranspose(std::unique_ptr<Kernel> reference) : reference_(std::move(reference)) {}

  static bool valid_perm(const std::vector<int64_t>& perm, int64_t rank) {
    if (static_cast<int64_t>(perm.size()) != rank) return false;
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int64_t p : perm) {
      if (p < 0 || p >= rank || seen[p]) return false;
      seen[p] = true;
    }
    return true;
  }

  std::unique_ptr<Kernel> reference_;
  std::optional<std::vector<int64_t>> perm_;
};

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("", "Transpose", 1, FastTranspose);

}  // namespace parity::runtime
