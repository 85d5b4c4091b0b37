#include "runtime/ops/nn/conv_expand_depthwise.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "runtime/ops/nn/swish_fast.h"

namespace parity::runtime::nn {
namespace {

std::atomic<uint64_t> expand_calls{0};
std::atomic<int64_t> ring_bytes_for_testing{-1};  // -1: the L2 size

}  // namespace

int64_t expand_depthwise_ring_bytes() {
  static const int64_t l2_bytes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? static_cast<int64_t>(l2) : int64_t{1} << 20;
  }();
  const int64_t forced = ring_bytes_for_testing.load(std::memory_order_relaxed);
  return forced >= 0 ? forced : l2_bytes;
}

void set_expand_depthwise_ring_bytes_for_testing(std::optional<int64_t> bytes) {
  ring_bytes_for_testing.store(bytes ? std::max<int64_t>(0, *bytes) : -1, std::memory_order_relaxed);
}

int64_t expand_depthwise_scratch(const DepthwiseWeights& depthwise, const DepthwiseGeometry& g) {
  return depthwise.kh * g.in_w * depthwise.channels;
}

void expand_depthwise_rows(const float* x, const PointwiseWeights& expand, const RowFinish& expand_finish,
                           const DepthwiseWeights& depthwise, const DepthwiseGeometry& g, int64_t row_begin,
                           int64_t row_end, float* y, const RowFinish& depthwise_finish, float* scratch) {
  expand_calls.fetch_add(1, std::memory_order_relaxed);
  const int64_t channels = depthwise.channels, kh = depthwise.kh;
  const int64_t row_floats = g.in_w * channels;
  // Expanded row iy lives in slot iy % kh: computing row r overwrites row r - kh, which lies
  // above the window of every output row from here on (windows only move down).
  auto slot = [&](int64_t iy) { return scratch + (iy % kh) * row_floats; };
  int64_t next = std::max<int64_t>(0, row_begin * g.stride_h - g.pad_top);  // the next row to expand
  std::vector<const float*> rows(static_cast<size_t>(kh));
  for (int64_t oy = row_begin; oy < row_end; ++oy) {
    const int64_t top = oy * g.stride_h - g.pad_top;
    next = std::max(next, top);
    for (const int64_t end = std::min(g.in_h, top + kh); next < end; ++next) {
      float* row = slot(next);
      pointwise_rows(x + next * g.in_w * expand.in, g.in_w, expand, row, expand_finish.activation);
      if (expand_finish.swish_alpha) swish_in_place(row, row_floats, *expand_finish.swish_alpha, expand.isa);
    }
    for (int64_t ky = 0; ky < kh; ++ky) {
      const int64_t iy = top + ky;
      rows[ky] = iy >= 0 && iy < g.in_h ? slot(iy) : nullptr;
    }
    depthwise_row_from(rows.data(), depthwise, g, oy, y + oy * g.out_w * channels, depthwise_finish.activation,
                       depthwise_finish.swish_alpha);
  }
}

uint64_t expand_depthwise_calls() { return expand_calls.load(std::memory_order_relaxed); }

}  // namespace parity::runtime::nn
