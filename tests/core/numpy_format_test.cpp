// format_numpy against what numpy 1.24's str() prints for the same arrays (strings recorded from
// python3-numpy: str(np.array(...))).
#include "core/numpy_format.h"

#include <gtest/gtest.h>

#include <numeric>

namespace parity {
namespace {

Tensor floats(const Shape& shape, std::vector<float> values) { return Tensor::from_vector(shape, values); }

TEST(NumpyFormat, FloatsAlignLikeNumpy) {
  EXPECT_EQ(format_numpy(floats({2, 2}, {1, 1, 1, 1})), "[[1. 1.]\n [1. 1.]]");
  EXPECT_EQ(format_numpy(floats({3}, {1.5f, 2.f, -0.25f})), "[ 1.5   2.   -0.25]");
  EXPECT_EQ(format_numpy(floats({}, {3.5f})), "3.5");
}

TEST(NumpyFormat, ScientificWhenMagnitudesNeedIt) {
  EXPECT_EQ(format_numpy(floats({2}, {1e-5f, 1.f})), "[1.e-05 1.e+00]");
  EXPECT_EQ(format_numpy(floats({3}, {0.1f, 0.2f, 123456.7f})), "[1.000000e-01 2.000000e-01 1.234567e+05]");
}

TEST(NumpyFormat, NestsThreeDimensionsWithBlankLines) {
  std::vector<float> v(24);
  std::iota(v.begin(), v.end(), 0.f);
  EXPECT_EQ(format_numpy(floats({2, 3, 4}, v)),
            "[[[ 0.  1.  2.  3.]\n  [ 4.  5.  6.  7.]\n  [ 8.  9. 10. 11.]]\n\n"
            " [[12. 13. 14. 15.]\n  [16. 17. 18. 19.]\n  [20. 21. 22. 23.]]]");
}

TEST(NumpyFormat, SummarizesLargeArraysAndAlignsIntegers) {
  std::vector<int64_t> v(2000);
  std::iota(v.begin(), v.end(), 0);
  EXPECT_EQ(format_numpy(Tensor::from_vector(Shape{40, 50}, v)),
            "[[   0    1    2 ...   47   48   49]\n [  50   51   52 ...   97   98   99]\n"
            " [ 100  101  102 ...  147  148  149]\n ...\n [1850 1851 1852 ... 1897 1898 1899]\n"
            " [1900 1901 1902 ... 1947 1948 1949]\n [1950 1951 1952 ... 1997 1998 1999]]");
}

TEST(NumpyFormat, BoolsAndWrappedRows) {
  EXPECT_EQ(format_numpy(Tensor::from_vector(Shape{2}, std::vector<bool>{true, false})), "[ True False]");
  // Eight values of width 11 wrap after six, the wrapped line stripped of its padding.
  const std::vector<float> row = {-0.70937335f, 1.2307081f, 1.1511228f, 0.9789783f,
                                  0.7747805f,   -1.1522231f, -1.4564495f, -0.9355205f};
  EXPECT_EQ(format_numpy(floats({1, 8}, row)),
            "[[-0.70937335  1.2307081   1.1511228   0.9789783   0.7747805  -1.1522231\n"
            "  -1.4564495  -0.9355205 ]]");
}

}  // namespace
}  // namespace parity
