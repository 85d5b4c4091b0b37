#include "compare/compare_func.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compare/comparator.h"
#include "compare/report.h"
#include "fixture_npy.h"
#include "support/test_support.h"

namespace parity::compare {
namespace {

IterationResult iteration(const std::string& runner, TensorMap outputs) {
  IterationResult r;
  r.runner_name = runner;
  r.outputs = std::move(outputs);
  return r;
}

const OutputCompareResult& only(const IterationMatch& m) {
  EXPECT_EQ(m.size(), 1u);
  return m.at(0).second;
}

TEST(SimpleCompareTest, HandComputedFloatErrors) {
  // out0 = [1, 2, 3], out1 = [1, 2.5, 2.9] (float32):
  // abs = [0, 0.5, 0.0999999], rel = abs / |out1| = [0, 0.2, 0.0344827].
  auto r0 = iteration("a", {{"y", Tensor::from_vector<float>({3}, {1, 2, 3})}});
  auto r1 = iteration("b", {{"y", Tensor::from_vector<float>({3}, {1, 2.5f, 2.9f})}});
  SimpleCompareOptions opt;
  opt.atol = 0.2;
  opt.rtol = 0.1;
  auto res = only(compare_funcs::simple(opt)(r0, r1));
  EXPECT_FALSE(res.passed);  // element 1: 0.5 > 0.2 and 0.2 > 0.1
  EXPECT_FLOAT_EQ(res.max_absdiff, 0.5f);
  EXPECT_FLOAT_EQ(res.max_reldiff, 0.2f);
  EXPECT_FLOAT_EQ(res.mean_absdiff, 0.19999997f);
  EXPECT_FLOAT_EQ(res.median_reldiff, 0.034482725f);

  opt.rtol = 0.2;  // now element 1's relative error is within tolerance
  EXPECT_TRUE(only(compare_funcs::simple(opt)(r0, r1)).passed);

  // mean stat: mean abs 0.2 > 0.1 but mean rel 0.0782 <= 0.1 -> passes (both must exceed).
  SimpleCompareOptions mean_opt;
  mean_opt.check_error_stat = ErrorStat::kMean;
  mean_opt.atol = 0.1;
  mean_opt.rtol = 0.1;
  EXPECT_TRUE(only(compare_funcs::simple(mean_opt)(r0, r1)).passed);
  mean_opt.rtol = 0.05;
  EXPECT_FALSE(only(compare_funcs::simple(mean_opt)(r0, r1)).passed);

  // Per-output tolerance overrides the default.
  SimpleCompareOptions per_out;
  per_out.atol.set("y", 0.5);
  EXPECT_TRUE(only(compare_funcs::simple(per_out)(r0, r1)).passed);
}

TEST(SimpleCompareTest, TrtexecNormStatisticsByHand) {
  // out0 = [1, 2, 2], ref = out1 = [1, 0, 4]: d = [0, 2, -2], |ref| = [1, 0, 4].
  // l1 = 4, l1/|ref|_1 = 4/5; l2 = sqrt(8), l2/|ref|_2 = sqrt(8/17); linf = 2, linf/|ref|_inf = 2/4;
  // cos = (1 + 0 + 8) / (3 * sqrt(17)); with atol = rtol = 0.5 the per-element limits are
  // [1, 0.5, 2.5], so only element 1 is outside: l0 = 1/3.
  const Tensor a = Tensor::from_vector<double>({3}, {1, 2, 2});
  const Tensor b = Tensor::from_vector<double>({3}, {1, 0, 4});
  const ErrorStatistics s = compute_error_statistics(a, b, 0.5, 0.5, false);
  EXPECT_DOUBLE_EQ(s.l1, 4.0);
  EXPECT_DOUBLE_EQ(s.l1_rel, 0.8);
  EXPECT_DOUBLE_EQ(s.l2, std::sqrt(8.0));
  EXPECT_DOUBLE_EQ(s.l2_rel, std::sqrt(8.0) / std::sqrt(17.0));
  EXPECT_DOUBLE_EQ(s.linf, 2.0);
  EXPECT_DOUBLE_EQ(s.linf_rel, 0.5);
  EXPECT_NEAR(s.cosine_distance, 1.0 - 9.0 / (3.0 * std::sqrt(17.0)), 1e-15);
  EXPECT_DOUBLE_EQ(s.l0_fraction, 1.0 / 3.0);

  auto failed = [&](ErrorStat stat, double atol, double rtol, double q = 0.99) {
    return simple_check_failed(s, stat, atol, rtol, q, nullptr, nullptr);
  };
  // Norms fail only when both the absolute and the relative norm exceed their tolerance.
  EXPECT_TRUE(failed(ErrorStat::kL1, 3.9, 0.79));
  EXPECT_FALSE(failed(ErrorStat::kL1, 4.0, 0.79));
  EXPECT_FALSE(failed(ErrorStat::kL1, 3.9, 0.8));
  EXPECT_TRUE(failed(ErrorStat::kL2, 2.8, 0.68));
  EXPECT_FALSE(failed(ErrorStat::kL2, 2.9, 0.68));
  EXPECT_FALSE(failed(ErrorStat::kL2, 2.8, 0.69));
  EXPECT_TRUE(failed(ErrorStat::kLinf, 1.9, 0.49));
  EXPECT_FALSE(failed(ErrorStat::kLinf, 1.9, 0.5));
  // Cosine distance 0.2724 against atol alone.
  EXPECT_TRUE(failed(ErrorStat::kCosine, 0.27, 1e9));
  EXPECT_FALSE(failed(ErrorStat::kCosine, 0.28, 0));
  // l0: 1/3 of the elements outside; allowed 1 - error_quantile.
  EXPECT_TRUE(failed(ErrorStat::kL0, 0.5, 0.5, 0.99));
  EXPECT_FALSE(failed(ErrorStat::kL0, 0.5, 0.5, 0.6));

  // Identical outputs (and all-zero ones) pass every statistic at zero tolerance.
  const ErrorStatistics same = compute_error_statistics(b, b, 0, 0, false);
  const ErrorStatistics zeros = compute_error_statistics(Tensor::from_vector<float>({2}, {0, 0}),
                                                         Tensor::from_vector<float>({2}, {0, 0}), 0, 0, false);
  for (ErrorStat stat : {ErrorStat::kL0, ErrorStat::kL1, ErrorStat::kL2, ErrorStat::kLinf, ErrorStat::kCosine}) {
    EXPECT_FALSE(simple_check_failed(same, stat, 0, 0, 1.0, nullptr, nullptr)) << error_stat_name(stat);
    EXPECT_FALSE(simple_check_failed(zeros, stat, 0, 0, 1.0, nullptr, nullptr)) << error_stat_name(stat);
    EXPECT_EQ(error_stat_from_name(error_stat_name(stat)), stat);
  }
  // A NaN fails every statistic.
  const ErrorStatistics nan = compute_error_statistics(Tensor::from_vector<float>({2}, {std::nanf(""), 1}),
                                                       Tensor::from_vector<float>({2}, {1, 1}), 1e9, 1e9, false);
  for (ErrorStat stat : {ErrorStat::kL0, ErrorStat::kL1, ErrorStat::kL2, ErrorStat::kLinf, ErrorStat::kCosine})
    EXPECT_TRUE(simple_check_failed(nan, stat, 1e9, 1e9, 0.99, nullptr, nullptr)) << error_stat_name(stat);

  // Through simple(): the log names the statistic and its required tolerance.
  SimpleCompareOptions opt;
  opt.check_error_stat = ErrorStat::kL2;
  opt.atol = 2.9;
  EXPECT_TRUE(only(compare_funcs::simple(opt)(iteration("a", {{"y", a}}), iteration("b", {{"y", b}}))).passed);
  opt.atol = 2.8;
  opt.rtol = 0.68;
  EXPECT_FALSE(only(compare_funcs::simple(opt)(iteration("a", {{"y", a}}), iteration("b", {{"y", b}}))).passed);
}

TEST(SimpleCompareTest, IntegersPromoteAndDivideLikeNumpy) {
  // int8 vs int16 compare as int32: abs = [2, 2, 0]; rel = [2, inf, 0] (division by |0|).
  ErrorStatistics s = compute_error_statistics(Tensor::from_vector<int8_t>({3}, {3, -2, 7}),
                                               Tensor::from_vector<int16_t>({3}, {1, 0, 7}), 1e-5, 1e-5, false);
  EXPECT_EQ(s.absdiff.dtype(), DType::kInt32);
  EXPECT_EQ(s.absdiff.to_vector<int32_t>(), (std::vector<int32_t>{2, 2, 0}));
  EXPECT_EQ(s.reldiff.dtype(), DType::kFloat64);
  EXPECT_TRUE(std::isinf(s.max_reldiff));
  EXPECT_EQ(s.max_absdiff, 2);
  EXPECT_TRUE(s.elementwise_mismatch);
  EXPECT_EQ(comparison_dtype(DType::kFloat32, DType::kInt64), DType::kFloat64);
  EXPECT_EQ(comparison_dtype(DType::kFloat16, DType::kFloat16), DType::kFloat32);
  EXPECT_EQ(comparison_dtype(DType::kUInt32, DType::kInt32), DType::kInt64);
}

TEST(SimpleCompareTest, ZerosInReferenceUseEpsilonAndBoolsUseXor) {
  ErrorStatistics s = compute_error_statistics(Tensor::from_vector<float>({2}, {1e-3f, 0}),
                                               Tensor::from_vector<float>({2}, {0, 0}), 1e-5, 1e-5, false);
  EXPECT_FLOAT_EQ(static_cast<float>(s.max_reldiff), 1e-3f / static_cast<float>(2.220446049250313e-16));
  ErrorStatistics b = compute_error_statistics(Tensor::from_vector<bool>({3}, {true, false, true}),
                                               Tensor::from_vector<bool>({3}, {true, true, true}), 1e-5, 1e-5, false);
  EXPECT_EQ(b.absdiff.dtype(), DType::kBool);
  EXPECT_EQ(b.max_absdiff, 1);
  EXPECT_TRUE(b.elementwise_mismatch);
}

TEST(SimpleCompareTest, InfinitiesAndNaNs) {
  const float inf = std::numeric_limits<float>::infinity();
  auto r0 = iteration("a", {{"y", Tensor::from_vector<float>({2}, {inf, 1})}});
  auto r1 = iteration("b", {{"y", Tensor::from_vector<float>({2}, {inf, 1})}});
  EXPECT_FALSE(only(compare_funcs::simple()(r0, r1)).passed);  // inf - inf is NaN
  SimpleCompareOptions opt;
  opt.infinities_compare_equal = true;
  EXPECT_TRUE(only(compare_funcs::simple(opt)(r0, r1)).passed);
  auto nan0 = iteration("a", {{"y", Tensor::from_vector<float>({1}, {std::nanf("")})}});
  EXPECT_FALSE(only(compare_funcs::simple()(nan0, nan0)).passed);
}

TEST(SimpleCompareTest, ShapeMismatchFailsUnlessShapeCheckIsOff) {
  auto r0 = iteration("a", {{"y", Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4})}});
  auto r1 = iteration("b", {{"y", Tensor::from_vector<float>({4}, {1, 2, 3, 4})}});
  EXPECT_FALSE(only(compare_funcs::simple()(r0, r1)).passed);
  SimpleCompareOptions opt;
  opt.check_shapes = false;
  EXPECT_TRUE(only(compare_funcs::simple(opt)(r0, r1)).passed);
}

TEST(SimpleCompareTest, MissingOutputIsAnErrorNamingBothSides) {
  auto r0 = iteration("a", {{"y", Tensor::from_vector<float>({1}, {1})}, {"z", Tensor::from_vector<float>({1}, {1})}});
  auto r1 = iteration("b", {{"y", Tensor::from_vector<float>({1}, {1})}, {"w", Tensor::from_vector<float>({1}, {1})}});
  try {
    compare_funcs::simple()(r0, r1);
    FAIL();
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("z"), std::string::npos) << msg;
    EXPECT_NE(msg.find("b outputs: y, w"), std::string::npos) << msg;
  }
}

TEST(IndicesCompareTest, IndexToleranceAsDocumented) {
  auto make = [](std::vector<int64_t> v) { return iteration("r", {{"idx", Tensor::from_vector<int64_t>({3}, v)}}); };
  IndicesCompareOptions tol0, tol1, tol2;
  tol1.index_tolerance = 1;
  tol2.index_tolerance = 2;
  EXPECT_FALSE(only(compare_funcs::indices(tol0)(make({0, 1, 2}), make({1, 0, 2}))).passed);
  EXPECT_TRUE(only(compare_funcs::indices(tol1)(make({0, 1, 2}), make({1, 0, 2}))).passed);
  EXPECT_FALSE(only(compare_funcs::indices(tol1)(make({0, 1, 2}), make({1, 2, 0}))).passed);
  EXPECT_TRUE(only(compare_funcs::indices(tol2)(make({0, 1, 2}), make({1, 2, 0}))).passed);
  EXPECT_FALSE(only(compare_funcs::indices(tol0)(make({0, 1, 2}), make({0, 1, 5}))).passed);
}

TEST(DistanceCompareTest, L2AndCosine) {
  // a = [3, 4], b = [3, 4.1]: L2 = 0.1; cosine = (9 + 16.4) / (5 * sqrt(25.81)).
  auto r0 = iteration("a", {{"y", Tensor::from_vector<double>({2}, {3, 4})}});
  auto r1 = iteration("b", {{"y", Tensor::from_vector<double>({2}, {3, 4.1})}});
  DistanceCompareOptions opt;
  opt.l2_tolerance = 0.11;
  auto res = only(compare_funcs::distance_metrics(opt)(r0, r1));
  EXPECT_NEAR(*res.l2_norm, 0.1, 1e-12);
  EXPECT_NEAR(*res.cosine_similarity, 25.4 / (5 * std::sqrt(25.81)), 1e-12);
  EXPECT_TRUE(res.passed);
  opt.l2_tolerance = 0.09;
  EXPECT_FALSE(only(compare_funcs::distance_metrics(opt)(r0, r1)).passed);
}

TEST(QualityCompareTest, PsnrAndSnr) {
  // a = [1, 2], b = [1, 2.1]: mse = 0.005, peak 2 -> PSNR = 20 log10 2 - 10 log10 0.005;
  // signal = 2.5 -> SNR = 10 log10(500).
  auto r0 = iteration("a", {{"y", Tensor::from_vector<double>({2}, {1, 2})}});
  auto r1 = iteration("b", {{"y", Tensor::from_vector<double>({2}, {1, 2.1})}});
  auto res = only(compare_funcs::quality_metrics()(r0, r1));
  EXPECT_NEAR(*res.psnr, 20 * std::log10(2.0) - 10 * std::log10(0.005), 1e-9);
  EXPECT_NEAR(*res.snr, 10 * std::log10(500.0), 1e-9);
  EXPECT_FALSE(res.passed);  // PSNR 29.03 dB is below the default minimum of 30 dB
  QualityCompareOptions opt;
  opt.psnr_tolerance = 29.0;
  EXPECT_TRUE(only(compare_funcs::quality_metrics(opt)(r0, r1)).passed);
}

TEST(TopKTest, StableDescendingIndices) {
  Tensor t = Tensor::from_vector<float>({2, 4}, {0.1f, 0.9f, 0.5f, 0.9f, 3, 2, 1, 0});
  EXPECT_EQ(top_k_indices(t, 2, -1).to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 0, 1}));
  EXPECT_EQ(top_k_indices(t, 10, -1).shape(), (Shape{2, 4}));  // clamped to the axis length
  EXPECT_EQ(top_k_indices(t, 1, 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 1, 0}));
}

// The fixture holds an ONNX-Runtime and a TensorRT run saved by Polygraphy 0.49.27; the expected
// numbers are what `polygraphy run --load-outputs run_results.json [options]` printed for them.
class PolygraphyFixtureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    results_ = testing::run_results_from_json(nlohmann::ordered_json::parse(
        testing::read_file(testing::polygraphy_fixtures_dir() / "run_results.json")));
  }
  AccuracyResult compare(SimpleCompareOptions opt) {
    return Comparator::compare_accuracy(results_, compare_funcs::simple(opt));
  }
  RunResults results_;
};

TEST_F(PolygraphyFixtureTest, DefaultTolerancesMatchPolygraphy) {
  AccuracyResult acc = compare({});
  ASSERT_EQ(acc.pairs().size(), 1u);
  const auto& its = acc.pairs()[0].iterations;
  ASSERT_EQ(its.size(), 2u);
  EXPECT_FALSE(bool(acc));
  EXPECT_EQ(acc.stats().passed, 0u);
  for (const auto& it : its) {
    ASSERT_EQ(it.size(), 4u);
    EXPECT_EQ(it[0].first, "y");
    EXPECT_FALSE(it[0].second.passed);
    EXPECT_TRUE(it[1].second.passed);  // y_half
    EXPECT_TRUE(it[2].second.passed);  // argmax
    EXPECT_TRUE(it[3].second.passed);  // positive
    EXPECT_EQ(format_g(it[3].second.max_absdiff), "0");
    EXPECT_EQ(format_g(it[3].second.max_reldiff), "nan");
  }
  const auto& y0 = its[0][0].second;
  EXPECT_EQ(format_g(y0.max_absdiff), "9.8884e-05");
  EXPECT_EQ(format_g(y0.max_reldiff), "0.00010005");
  EXPECT_EQ(format_g(y0.mean_absdiff), "4.7783e-05");
  EXPECT_EQ(format_g(y0.mean_reldiff), "0.00010001");
  EXPECT_EQ(format_g(y0.median_absdiff), "4.2021e-05");
  EXPECT_EQ(format_g(y0.median_reldiff), "0.00010002");
  const auto& y1 = its[1][0].second;
  EXPECT_EQ(format_g(y1.max_absdiff), "9.65e-05");
  EXPECT_EQ(format_g(y1.max_reldiff), "0.00010004");
  EXPECT_EQ(format_g(y1.mean_absdiff), "4.4131e-05");
  EXPECT_EQ(format_g(y1.median_absdiff), "4.3646e-05");
  EXPECT_EQ(format_g(y1.median_reldiff), "0.00010001");
}

TEST_F(PolygraphyFixtureTest, OtherStatsAndTolerancesMatchPolygraphy) {
  SimpleCompareOptions loose;
  loose.atol = 1e-4;
  EXPECT_TRUE(bool(compare(loose)));

  SimpleCompareOptions mean;
  mean.check_error_stat = ErrorStat::kMean;
  mean.atol = 4.5e-5;
  auto acc = compare(mean);
  EXPECT_FALSE(acc.pairs()[0].iterations[0][0].second.passed);
  EXPECT_TRUE(acc.pairs()[0].iterations[1][0].second.passed);
  EXPECT_EQ(acc.stats().passed, 1u);

  SimpleCompareOptions median;
  median.check_error_stat = ErrorStat::kMedian;
  median.rtol = 1.00015e-4;
  acc = compare(median);
  EXPECT_FALSE(acc.pairs()[0].iterations[0][0].second.passed);
  EXPECT_TRUE(acc.pairs()[0].iterations[1][0].second.passed);

  SimpleCompareOptions quantile;
  quantile.check_error_stat = ErrorStat::kQuantile;
  quantile.error_quantile = 0.5;
  quantile.atol = 4.3e-5;
  acc = compare(quantile);
  const auto& q0 = acc.pairs()[0].iterations[0][0].second;
  EXPECT_TRUE(q0.passed);
  EXPECT_EQ(format_g(*q0.quantile_absdiff), "4.2021e-05");
  EXPECT_EQ(format_g(*q0.quantile_reldiff), "0.00010002");

  SimpleCompareOptions rel_only;
  rel_only.rtol = 1.00045e-4;
  rel_only.atol = 0;
  acc = compare(rel_only);
  EXPECT_FALSE(acc.pairs()[0].iterations[0][0].second.passed);
  EXPECT_TRUE(acc.pairs()[0].iterations[1][0].second.passed);
}

}  // namespace
}  // namespace parity::compare
