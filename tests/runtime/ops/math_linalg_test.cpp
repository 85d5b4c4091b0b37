#include <gtest/gtest.h>

#include <cmath>

#include "runtime/ops/math/matmul_shapes.h"
#include "runtime/ops/op_tester.h"

namespace parity::testing {
namespace {

TEST(MatMul, ShapeRulesShareOneHelper) {
  using runtime::ops::matmul_shapes;
  const auto s = matmul_shapes(Shape{3, 1, 2, 4}, Shape{5, 4, 6});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->m, 2);
  EXPECT_EQ(s->k, 4);
  EXPECT_EQ(s->n, 6);
  EXPECT_EQ(s->batch, (Shape{3, 5}));
  EXPECT_EQ(s->batch_a, (Shape{3, 1}));
  EXPECT_EQ(s->batch_b, (Shape{1, 5}));
  EXPECT_EQ(s->out, (Shape{3, 5, 2, 6}));
  const auto vectors = matmul_shapes(Shape{4}, Shape{4});
  ASSERT_TRUE(vectors);
  EXPECT_TRUE(vectors->a_vector && vectors->b_vector);
  EXPECT_EQ(vectors->out, Shape{});
  EXPECT_FALSE(matmul_shapes(Shape{2, 3}, Shape{2, 2}));        // inner dims differ
  EXPECT_FALSE(matmul_shapes(Shape{2, 1, 3}, Shape{3, 3, 1}));  // batches 2 and 3
  EXPECT_FALSE(matmul_shapes(Shape{}, Shape{3}));
}

TEST(MatMul, ShapesAndPromotion) {
  OpTester("MatMul", 13)
      .input<float>({2, 3}, {1, 2, 3, 4, 5, 6})
      .input<float>({3, 2}, {1, 0, 0, 1, 1, 1})
      .output<float>({2, 2}, {4, 5, 10, 11})
      .run();
  // 1-D x 2-D and 2-D x 1-D drop the promoted dimension.
  OpTester("MatMul", 13).input<float>({2}, {1, 2}).input<float>({2, 2}, {1, 2, 3, 4}).output<float>({2}, {7, 10}).run();
  OpTester("MatMul", 13).input<float>({2, 2}, {1, 2, 3, 4}).input<float>({2}, {1, 1}).output<float>({2}, {3, 7}).run();
  OpTester("MatMul", 13).input<float>({2}, {1, 2}).input<float>({2}, {3, 4}).output<float>({}, {11}).run();
  // Batch broadcast: (2,1,2) x (3,2,1) -> (2,3,1,1)... here (2,1,1,2) x (3,2,1) -> (2,3,1,1).
  OpTester("MatMul", 13)
      .input<float>({2, 1, 1, 2}, {1, 1, 2, 2})
      .input<float>({3, 2, 1}, {1, 0, 0, 1, 1, 1})
      .output<float>({2, 3, 1, 1}, {1, 1, 2, 2, 2, 4})
      .run();
  OpTester("MatMul", 13).input<int32_t>({1, 2}, {2, 3}).input<int32_t>({2, 1}, {4, 5}).output<int32_t>({1, 1}, {23}).run();
  OpTester("MatMul", 13).input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<float>({2, 2}, {1, 2, 3, 4}).run_expect_error(
      ErrorCode::kRuntime);
  OpTester("MatMul", 13).input<float>({0, 3}, {}).input<float>({3, 2}, {1, 2, 3, 4, 5, 6}).output<float>({0, 2}, {}).run();
}

TEST(Gemm, TransposesAlphaBetaBias) {
  OpTester("Gemm", 13)
      .attr("transA", 1)
      .attr("transB", 1)
      .attr("alpha", 2.0f)
      .attr("beta", 0.5f)
      .input<float>({2, 1}, {1, 2})            // A^T is (1, 2)
      .input<float>({2, 2}, {1, 2, 3, 4})      // B^T is [[1, 3], [2, 4]]
      .input<float>({2}, {2, 4})
      .output<float>({1, 2}, {2 * 5 + 1, 2 * 11 + 2})
      .run();
  OpTester("Gemm", 13)
      .input<float>({1, 2}, {1, 2})
      .input<float>({2, 1}, {3, 4})
      .output<float>({1, 1}, {11})
      .run();
  OpTester("Gemm", 13)
      .input<float>({1, 2}, {1, 2})
      .input<float>({2, 1}, {3, 4})
      .input<float>({2}, {1, 2})
      .run_expect_error(ErrorCode::kRuntime);
}

TEST(Einsum, CommonEquations) {
  OpTester("Einsum", 12)
      .attr("equation", "ij,jk->ik")
      .input<float>({2, 2}, {1, 2, 3, 4})
      .input<float>({2, 2}, {1, 0, 0, 1})
      .output<float>({2, 2}, {1, 2, 3, 4})
      .run();
  OpTester("Einsum", 12).attr("equation", "ij->ji").input<float>({1, 2}, {1, 2}).output<float>({2, 1}, {1, 2}).run();
  OpTester("Einsum", 12).attr("equation", "ii").input<float>({2, 2}, {1, 2, 3, 4}).output<float>({}, {5}).run();
  OpTester("Einsum", 12).attr("equation", "ii->i").input<float>({2, 2}, {1, 2, 3, 4}).output<float>({2}, {1, 4}).run();
  OpTester("Einsum", 12).attr("equation", "i,i").input<float>({2}, {1, 2}).input<float>({2}, {3, 4}).output<float>({}, {11}).run();
  // Implicit output: labels seen once, sorted: "ba" -> output "ab", a transpose.
  OpTester("Einsum", 12).attr("equation", "ba").input<float>({2, 1}, {1, 2}).output<float>({1, 2}, {1, 2}).run();
  OpTester("Einsum", 12)
      .attr("equation", "...ij,...jk->...ik")
      .input<float>({2, 1, 1}, {2, 3})
      .input<float>({1, 1}, {5})
      .output<float>({2, 1, 1}, {10, 15})
      .run();
  OpTester("Einsum", 12)
      .attr("equation", "bii->bi")
      .input<int32_t>({1, 2, 2}, {1, 2, 3, 4})
      .output<int32_t>({1, 2}, {1, 4})
      .run();
  OpTester("Einsum", 12).attr("equation", "ij,jk").input<float>({1, 2}, {1, 2}).run_expect_error(ErrorCode::kInvalidModel);
}

TEST(CumSum, ExclusiveReverse) {
  auto cumsum = [](int exclusive, int reverse, std::vector<float> expected) {
    OpTester("CumSum", 14)
        .attr("exclusive", exclusive)
        .attr("reverse", reverse)
        .input<float>({4}, {1, 2, 3, 4})
        .input<int32_t>({}, {0})
        .output<float>({4}, expected)
        .run();
  };
  cumsum(0, 0, {1, 3, 6, 10});
  cumsum(1, 0, {0, 1, 3, 6});
  cumsum(0, 1, {10, 9, 7, 4});
  cumsum(1, 1, {9, 7, 4, 0});
  OpTester("CumSum", 14)
      .input<int64_t>({2, 2}, {1, 2, 3, 4})
      .input<int64_t>({}, {-1})
      .output<int64_t>({2, 2}, {1, 3, 3, 7})
      .run();
}

TEST(Det, BatchedAndSingular) {
  OpTester("Det", 11).input<float>({2, 2}, {1, 2, 3, 4}).output<float>({}, {-2}).run();
  OpTester("Det", 11)
      .input<double>({2, 3, 3}, {2, 0, 0, 0, 3, 0, 0, 0, 4, 1, 2, 3, 2, 4, 6, 0, 1, 1})
      .output<double>({2}, {24, 0})
      .run();
  OpTester("Det", 11).input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).run_expect_error(ErrorCode::kRuntime);
}

}  // namespace
}  // namespace parity::testing
