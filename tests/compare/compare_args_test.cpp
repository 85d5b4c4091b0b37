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

// The single-bound tolerances of debug build, debug precision, optimize and the backend tests:
// one group, the Comparator's spellings, unset where not given.
TEST(ToleranceArgs, ScalarTolerancesWithTheComparatorsSpellings) {
  const ToleranceArgs group("of the check", "1e-5", "1e-4");
  options::ArgParser parser("t", "t");
  group.add_to(parser);
  EXPECT_NE(parser.help().find("Absolute tolerance of the check (default: 1e-5)"), std::string::npos) << parser.help();
  EXPECT_NE(parser.help().find("Relative tolerance of the check (default: 1e-4)"), std::string::npos) << parser.help();
  const Tolerances none = group.parse(parser.parse({}));
  EXPECT_FALSE(none.atol.has_value());
  EXPECT_FALSE(none.rtol.has_value());
  const Tolerances given = group.parse(parser.parse({"--abs-tol", "0.5", "--rtol", "1e-2"}));
  EXPECT_EQ(given.atol, 0.5);
  EXPECT_EQ(given.rtol, 1e-2);
  try {
    group.parse(parser.parse({"--atol", "-1"}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--atol must not be negative"), std::string::npos) << e.what();
  }
  EXPECT_THROW(group.parse(parser.parse({"--rtol", "x"})), Error);
  // Per-output items are the Comparator's: here a value is one number.
  EXPECT_THROW(group.parse(parser.parse({"--atol", "out:1e-3"})), Error);
}

}  // namespace
}  // namespace parity::compare
