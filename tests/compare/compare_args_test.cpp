#include "compare/compare_args.h"

#include <gtest/gtest.h>

namespace parity::compare {
namespace {

CompareSettings parse(const std::vector<std::string>& argv) {
  const ComparatorCompareArgs group;
  options::ArgParser parser("t", "t");
  group.add_to(parser);
  return group.parse(parser.parse(argv));
}

TEST(ComparatorCompareArgs, PerOutputValuesAndDefaults) {
  const CompareSettings s = parse({"--atol", "1e-3", "y:0.5", "--rtol", "2e-2", "--check-error-stat", "z:max",
                                   "--fail-fast", "--no-shape-check"});
  EXPECT_EQ(s.func, "simple");
  EXPECT_TRUE(s.fail_fast);
  EXPECT_FALSE(s.validate);
  EXPECT_FALSE(s.simple.check_shapes);
  EXPECT_TRUE(s.simple.fail_fast);
  EXPECT_DOUBLE_EQ(s.simple.atol.get("x"), 1e-3);
  EXPECT_DOUBLE_EQ(s.simple.atol.get("y"), 0.5);
  EXPECT_DOUBLE_EQ(s.simple.rtol.get("y"), 2e-2);
  EXPECT_EQ(s.simple.check_error_stat.get("z"), ErrorStat::kMax);
  EXPECT_EQ(s.simple.check_error_stat.get("y"), ErrorStat::kElemwise);
  EXPECT_DOUBLE_EQ(s.quality.psnr_tolerance.get("y"), 30.0);
  // Named outputs, per option, for the checks against the outputs that exist.
  ASSERT_FALSE(s.named_outputs.empty());
  EXPECT_EQ(s.named_outputs[0].first, "--atol");
  EXPECT_EQ(s.named_outputs[0].second, (std::vector<std::string>{"y"}));
  EXPECT_EQ(s.named_outputs[2].first, "--check-error-stat");
  EXPECT_EQ(s.named_outputs[2].second, (std::vector<std::string>{"z"}));
}

TEST(ComparatorCompareArgs, EachFunctionGetsItsOptions) {
  EXPECT_EQ(parse({"--compare", "indices", "--index-tolerance", "2"}).indices.index_tolerance.get("a"), 2);
  const CompareSettings d = parse({"--compare-func", "distance_metrics", "--l2-tolerance", "out:0.1"});
  EXPECT_EQ(d.func, "distance_metrics");
  EXPECT_DOUBLE_EQ(d.distance.l2_tolerance.get("out"), 0.1);
  EXPECT_DOUBLE_EQ(d.distance.cosine_similarity_threshold.get("out"), 0.997);
  EXPECT_TRUE(static_cast<bool>(d.compare_func()));
}

TEST(ComparatorCompareArgs, BadValuesNameTheOption) {
  try {
    parse({"--check-error-stat", "worst"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "invalid --check-error-stat 'worst'; valid: elemwise, max, mean, median, quantile, l0, l1, l2, linf, cosine");
  }
  EXPECT_THROW(parse({"--atol", "y:abc"}), Error);
  EXPECT_THROW(parse({"--index-tolerance", "1.5"}), Error);
}

}  // namespace
}  // namespace parity::compare
