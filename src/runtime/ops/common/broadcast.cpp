#include "runtime/ops/common/broadcast.h"

#include <algorithm>

namespace parity::runtime::ops {

std::optional<Shape> try_broadcast_shapes(std::span<const Shape> shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const auto& s : shapes) {
    const size_t pad = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      const int64_t d = s[i];
      int64_t& o = out[pad + i];
      if (d == o) continue;
      if (o == 1) {
        o = d;  // also covers d == 0: a 1 stretches to an empty dimension
      } else if (d != 1) {
        return std::nullopt;
      }
    }
  }
  return out;
}

Shape broadcast_shapes(const KernelContext& ctx, std::span<const Shape> shapes) {
  auto out = try_broadcast_shapes(shapes);
  if (!out) {
    std::string list;
    for (const auto& s : shapes) list += (list.empty() ? "" : ", ") + shape_to_string(s);
    ctx.fail("input shapes ", list, " cannot be broadcast together");
  }
  return *out;
}

std::vector<int64_t> broadcast_strides(const Shape& in_shape, const Shape& out_shape) {
  PARITY_ASSERT(in_shape.size() <= out_shape.size(), "cannot broadcast ", shape_to_string(in_shape), " to ",
                shape_to_string(out_shape));
  std::vector<int64_t> strides(out_shape.size(), 0);
  const size_t pad = out_shape.size() - in_shape.size();
  int64_t stride = 1;
  for (size_t i = in_shape.size(); i-- > 0;) {
    PARITY_ASSERT(in_shape[i] == out_shape[pad + i] || in_shape[i] == 1, "cannot broadcast ",
                  shape_to_string(in_shape), " to ", shape_to_string(out_shape));
    strides[pad + i] = in_shape[i] == 1 ? 0 : stride;
    stride *= in_shape[i];
  }
  return strides;
}

bool broadcasts_to(const Shape& in_shape, const Shape& out_shape) {
  if (in_shape.size() > out_shape.size()) return false;
  const size_t pad = out_shape.size() - in_shape.size();
  for (size_t i = 0; i < in_shape.size(); ++i)
    if (in_shape[i] != 1 && in_shape[i] != out_shape[pad + i]) return false;
  return true;
}

}  // namespace parity::runtime::ops
