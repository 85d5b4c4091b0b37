// The parts of a validation state merge exactly: exact sums and fixed-bin histograms give the same
// figures in any order of addition and any split into shards; states round-trip through JSON.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "tools/validate/error_histogram.h"
#include "tools/validate/exact_sum.h"
#include "tools/validate/state.h"
#include "tools/validate/validate.h"

namespace parity::tools::validation {
namespace {

// Values of very different magnitudes and signs: a naive double sum depends on their order.
std::vector<double> awkward_values(uint32_t seed, size_t count) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-60, 60);
  std::vector<double> values;
  for (size_t i = 0; i < count; ++i) values.push_back(std::ldexp(mantissa(rng), exponent(rng)));
  values.push_back(1e300);
  values.push_back(-1e300);
  values.push_back(5e-324);  // the smallest subnormal
  return values;
}

TEST(ExactSum, EqualInAnyOrderAndSplit) {
  std::vector<double> values = awkward_values(1, 5000);
  ExactSum forward;
  for (double v : values) forward.add(v);
  std::mt19937 rng(2);
  std::shuffle(values.begin(), values.end(), rng);
  ExactSum a, b, c;
  for (size_t i = 0; i < values.size(); ++i) (i % 3 == 0 ? a : i % 3 == 1 ? b : c).add(values[i]);
  c.merge(a);
  c.merge(b);
  EXPECT_TRUE(forward == c);
  EXPECT_EQ(forward.value(), c.value());
  // A naive sum of the same values in these two orders differs (the point of the exact sum).
  double naive_forward = 0, naive_shuffled = 0;
  for (double v : awkward_values(1, 5000)) naive_forward += v;
  for (double v : values) naive_shuffled += v;
  EXPECT_NE(naive_forward, naive_shuffled);
}

TEST(ExactSum, ValueIsTheSumAndRoundTripsThroughJson) {
  ExactSum s;
  for (double v : {0.1, 0.2, -0.3, 1e-310, 2.5}) s.add(v);
  EXPECT_NEAR(s.value(), 2.5, 1e-15);
  s.add(NAN);  // ignored
  EXPECT_TRUE(ExactSum::from_json(s.to_json()) == s);
  ExactSum zero;
  zero.add(1.0);
  zero.add(-1.0);
  EXPECT_EQ(zero.value(), 0.0);
  EXPECT_TRUE(zero.to_json().empty());
}

TEST(ErrorHistogram, ShardsMergeIntoTheWholeAndQuantilesFollowTheData) {
  std::mt19937 rng(3);
  std::exponential_distribution<double> e(1e4);
  ErrorHistogram whole, part0, part1;
  std::vector<double> values;
  for (int i = 0; i < 20000; ++i) {
    const double v = i % 100 == 0 ? 0.0 : e(rng);
    values.push_back(v);
    whole.add(v);
    (i % 2 ? part0 : part1).add(v);
  }
  whole.add(NAN);
  part0.add(NAN);
  part1.merge(part0);
  EXPECT_TRUE(part1 == whole);
  EXPECT_EQ(whole.count(), 20000);
  EXPECT_EQ(whole.nonfinite(), 1);
  std::sort(values.begin(), values.end());
  for (double q : {0.5, 0.9, 0.99}) {
    const double exact = values[static_cast<size_t>(q * (values.size() - 1))];
    EXPECT_NEAR(whole.quantile(q), exact, exact * 0.05) << q;  // a bin spans 4.4%
  }
  EXPECT_EQ(whole.quantile(0.0), 0.0);
  EXPECT_TRUE(ErrorHistogram::from_json(whole.to_json()) == whole);
}

TEST(ValidationState, MergeOfShardsRoundTripsAndRefusesOverlaps) {
  auto shard = [](int64_t begin, int64_t end) {
    ValidationState s;
    s.worst_limit = 3;
    s.done.add(begin, end);
    OutputState& o = s.pair("ref", "ort").output("y");
    for (int64_t i = begin; i < end; ++i) {
      const double err = std::ldexp(1.0 + static_cast<double>(i % 7), -static_cast<int>(i % 20));
      o.abs.add(err);
      o.rel.add(err * 3);
      ++o.samples;
      o.samples_passed += err < 0.5;
      o.per_sample["max_absdiff"].add(err);
      o.add_worst({i, std::string("s").append(std::to_string(i)), err, err * 3, err / 2, err < 0.5, ""}, 3);
    }
    return s;
  };
  ValidationState whole = shard(0, 90);
  ValidationState merged = shard(60, 90);
  merged.merge(shard(0, 30));
  merged.merge(shard(30, 60));
  EXPECT_EQ(merged.to_json().dump(), whole.to_json().dump());
  EXPECT_EQ(ValidationState::from_json(whole.to_json()).to_json().dump(), whole.to_json().dump());
  EXPECT_EQ(whole.pairs[0].outputs[0].second.worst.size(), 3u);
  EXPECT_THROW(merged.merge(shard(10, 20)), Error);
}

TEST(ShardRange, SharesCoverTheDatasetOnce) {
  for (int64_t samples : {0, 1, 64, 1001})
    for (int64_t count : {1, 2, 3, 7}) {
      int64_t next = 0;
      for (int64_t i = 0; i < count; ++i) {
        const auto [begin, end] = shard_range(samples, {i, count});
        EXPECT_EQ(begin, next);
        next = end;
      }
      EXPECT_EQ(next, samples);
    }
}

}  // namespace
}  // namespace parity::tools::validation
