// merge_iterations: iteration-wise union of data files, later files winning on name clashes.
#include "tools/data/to_input.h"

#include <gtest/gtest.h>

namespace parity::tools::data {
namespace {

TEST(DataToInput, LaterFilesReplaceTensorsAndTheLongestFileSetsTheIterations) {
  const Tensor one = Tensor::scalar<float>(1.f), two = Tensor::scalar<float>(2.f);
  const std::vector<TensorMap> inputs{{{"x", one}}, {{"x", one}}};
  const std::vector<TensorMap> outputs{{{"y", one}, {"x", two}}};
  const auto merged = merge_iterations({inputs, outputs});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].names(), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(merged[0].at("x").data<float>()[0], 2.f);
  EXPECT_EQ(merged[1].names(), std::vector<std::string>{"x"});
  EXPECT_TRUE(merge_iterations({}).empty());
}

}  // namespace
}  // namespace parity::tools::data
