// The fp64 oracle on a case with catastrophic cancellation: (x + 1e8) - 1e8 loses x entirely in
// float32 (the spacing of floats near 1e8 is 8) but keeps it in double.
#include <gtest/gtest.h>

#include <cmath>

#include "support/model_builder.h"
#include "runtime/session.h"

namespace parity::runtime {
namespace {

TEST(Fp64Oracle, CatastrophicCancellationIsCloserToExact) {
  testing::ModelBuilder m(14);
  m.input("x", DType::kFloat32, {3});
  m.initializer("big", Tensor::scalar<float>(1e8f));
  m.node("Add", {"x", "big"}, {"sum"}, "add");
  m.node("Sub", {"sum", "big"}, {"y"}, "sub");
  m.output("y", DType::kFloat32, {3});
  const std::vector<float> x = {0.1f, 1.7f, -3.3f};
  TensorMap feed{{"x", Tensor::from_vector<float>({3}, x)}};

  auto fp32 = Session::create(m.model()).value().run(feed).at("y");
  SessionOptions options;
  options.precision = Precision::kFloat64;
  options.outputs_in_model_dtype = false;
  auto fp64 = Session::create(m.model(), options).value().run(feed).at("y");
  ASSERT_EQ(fp64.dtype(), DType::kFloat64);
  for (size_t i = 0; i < x.size(); ++i) {
    const double exact = static_cast<double>(x[i]);  // (x + c) - c == x exactly
    const double err32 = std::fabs(fp32.value_as_double(i) - exact);
    const double err64 = std::fabs(fp64.value_as_double(i) - exact);
    EXPECT_GT(err32, 0.05) << "float32 should lose x[" << i << "] to cancellation";
    EXPECT_LT(err64, 1e-7) << "the fp64 oracle should keep x[" << i << "]";
    EXPECT_LT(err64, err32);
  }
}

}  // namespace
}  // namespace parity::runtime
