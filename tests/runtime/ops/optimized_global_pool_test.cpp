// Spec: https://onnx.ai/onnx/operators/onnx__GlobalAveragePool.html, onnx__GlobalMaxPool.html
// GlobalAveragePool and GlobalMaxPool of NCHW inputs (pool_dnnl.cpp's planar loop: a plane per
// image and channel) against the reference kernels: planes shorter and longer than the loop's
// 16 lanes and 64-position blocks, ranks 3 to 5, batch 2, large magnitudes, NaN and infinities
// (the reference's maximum skips a NaN: std::max from -inf).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "runtime/ops/op_tester.h"
#include "support/test_support.h"

#if PARITY_HAVE_DNNL

namespace parity::testing {
namespace {

TEST(OptimizedGlobalPool, PlanarInputsMatchReference) {
  const std::vector<Shape> shapes = {{1, 3, 1, 1}, {2, 5, 7, 7},  {1, 1024, 7, 7}, {1, 4, 8, 8},    {2, 3, 9, 15},
                                     {1, 2, 65},   {1, 2, 200}, {1, 3, 2, 3, 5}, {1, 2, 40, 40}, {2, 17, 13, 13}};
  uint32_t seed = 1;
  for (const Shape& shape : shapes)
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
      SCOPED_TRACE(std::string(op) + " " + shape_to_string(shape));
      OpTester t = one_output_node(op, 1);
      t.input(random_uniform(shape, ++seed, -100.f, 100.f)).tolerance(1e-5, 1e-5).compare_tiers();
    }
}

TEST(OptimizedGlobalPool, NanAndInfinitiesFollowTheReference) {
  Tensor x = random_uniform({1, 4, 9, 9}, 7, -1.f, 1.f);
  float* v = x.data<float>();
  v[0 * 81 + 40] = std::numeric_limits<float>::quiet_NaN();  // channel 0: a NaN mid-plane
  v[1 * 81 + 0] = std::numeric_limits<float>::quiet_NaN();   // channel 1: a NaN first
  v[2 * 81 + 80] = std::numeric_limits<float>::infinity();   // channel 2: +inf last
  v[3 * 81 + 3] = -std::numeric_limits<float>::infinity();   // channel 3: -inf
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    SCOPED_TRACE(op);
    OpTester t = one_output_node(op, 1);
    t.input(x).tolerance(1e-6, 1e-6).compare_tiers();
  }
}

}  // namespace
}  // namespace parity::testing

#endif  // PARITY_HAVE_DNNL
