// Spec: https://onnx.ai/onnx/operators/onnx__Unique.html
// Unique.
// Items are elements (no axis) or slices along the axis, compared lexicographically; NaN sorts
// after every number and equals other NaNs.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {

template <typename C>
int compare_values(const C& a, const C& b) {
  if constexpr (std::is_floating_point_v<C>) {
    const bool na = std::isnan(a);
    const bool nb = std::isnan(b);
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  }
  if (a < b) return -1;
  if (b < a) return 1;
  return 0;
}

class UniqueKernel final : public Kernel {
 public:
  explicit UniqueKernel(const KernelInit& init) : sorted_(init.attr_int("sorted", 1) != 0) {
    if (init.has_attr("axis")) axis_ = init.attr_int("axis");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Shape shape = axis_ ? x.shape() : Shape{x.numel()};
    const int64_t axis = axis_ ? ops::normalize_axis(*axis_, x.rank(), ctx) : 0;
    const int64_t items = shape[axis];
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];

    // Sort item ids (stable, so each run of equal items starts with its first occurrence).
    std::vector<int64_t> order(static_cast<size_t>(items));
    std::iota(order.begin(), order.end(), 0);
    using TypesWithStrings = ops::TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t,
                                           uint8_t, uint16_t, uint32_t, uint64_t, bool, std::string>;
    std::vector<bool> same_as_previous(static_cast<size_t>(items), false);  // in sorted order
    ops::dispatch_dtype<TypesWithStrings>(x.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = std::conditional_t<ops::is_half_v<T>, float, T>;
      const T* src = x.data<T>();
      auto compare_items = [&](int64_t a, int64_t b) {
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t e = 0; e < inner; ++e) {
            const int c = compare_values<C>(static_cast<C>(src[(o * items + a) * inner + e]),
                                            static_cast<C>(src[(o * items + b) * inner + e]));
            if (c != 0) return c;
          }
        return 0;
      };
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return compare_items(a, b) < 0; });
      for (int64_t i = 1; i < items; ++i) same_as_previous[i] = compare_items(order[i - 1], order[i]) == 0;
    });

    struct Group {
      int64_t first = 0;
      int64_t count = 0;
    };
    std::vector<Group> groups;
    std::vector<int64_t> group_of(static_cast<size_t>(items));
    for (int64_t i = 0; i < items; ++i) {
      if (i == 0 || !same_as_previous[i]) groups.push_back({order[i], 0});
      groups.back().count++;
      group_of[order[i]] = static_cast<int64_t>(groups.size()) - 1;
    }
    // Output position of each group: sorted order, or order of first occurrence.
    std::vector<int64_t> output_order(groups.size());
    std::iota(output_order.begin(), output_order.end(), 0);
    if (!sorted_)
      std::sort(output_order.begin(), output_order.end(),
                [&](int64_t a, int64_t b) { return groups[a].first < groups[b].first; });
    std::vector<int64_t> position_of_group(groups.size());
    for (size_t p = 0; p < output_order.size(); ++p) position_of_group[output_order[p]] = static_cast<int64_t>(p);

    const int64_t unique_count = static_cast<int64_t>(groups.size());
    Shape y_shape = shape;
    y_shape[axis] = unique_count;
    Tensor& y = ctx.allocate_output(0, x.dtype(), y_shape);
    tensor_ops::visit_storage_type(x.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      const S* src = tensor_ops::elements<S>(x);
      S* dst = tensor_ops::elements<S>(y);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t g : output_order) {
          const S* block = src + (o * items + groups[g].first) * inner;
          dst = std::copy(block, block + inner, dst);
        }
    });
    if (ctx.has_output(1)) {
      Tensor& t = ctx.allocate_output(1, DType::kInt64, {unique_count});
      for (int64_t p = 0; p < unique_count; ++p) t.data<int64_t>()[p] = groups[output_order[p]].first;
    }
    if (ctx.has_output(2)) {
      Tensor& t = ctx.allocate_output(2, DType::kInt64, {items});
      for (int64_t i = 0; i < items; ++i) t.data<int64_t>()[i] = position_of_group[group_of[i]];
    }
    if (ctx.has_output(3)) {
      Tensor& t = ctx.allocate_output(3, DType::kInt64, {unique_count});
      for (int64_t p = 0; p < unique_count; ++p) t.data<int64_t>()[p] = groups[output_order[p]].count;
    }
  }

 private:
  bool sorted_;
  std::optional<int64_t> axis_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Unique", 11, UniqueKernel);

}  // namespace parity::runtime
