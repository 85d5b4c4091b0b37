// compare/comparator.h's and compare/data_loader.h's thread contract: Comparator calls on threads
// at once, each with its own runners, share one DataLoader and give the serial results; a runner
// given to two concurrent runs makes one of them fail with the in-use error; a configured
// DataLoader gives feed i to any thread, in any order. Also built under ThreadSanitizer.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "compare/comparator.h"
#include "compare/data_loader.h"
#include "runners/registry.h"
#include "support/concurrency.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

constexpr int kThreads = 4;
constexpr int kIterations = 3;

std::string demo_model() { return (source_dir() / "models/demo.onnx").string(); }

std::unique_ptr<runners::Runner> ref_runner() {
  return runners::RunnerRegistry::instance().find("ref")->create(runners::RunnerConfig{demo_model()});
}

// Two ref runners of demo.onnx compared over kIterations feeds of `data`.
RunResults compare_two_ref_runners(compare::FeedSource& data) {
  auto a = ref_runner(), b = ref_runner();
  return compare::Comparator::run({a.get(), b.get()}, data);
}

TEST(ComparatorConcurrency, RunsOnThreadsAtOnceSharingOneDataLoaderGetTheSerialResults) {
  compare::DataLoader data;
  data.seed(5).iterations(kIterations);
  const RunResults expected = compare_two_ref_runners(data);  // tells `data` the model's inputs
  std::vector<RunResults> got(kThreads);
  std::vector<char> matched(kThreads, 0);  // not vector<bool>: its bits share words
  run_on_threads(kThreads, [&](int t) {
    got[static_cast<size_t>(t)] = compare_two_ref_runners(data);
    matched[static_cast<size_t>(t)] = static_cast<bool>(compare::Comparator::compare_accuracy(got[static_cast<size_t>(t)]));
  });
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(matched[static_cast<size_t>(t)]) << "thread " << t;
    const RunResults& results = got[static_cast<size_t>(t)];
    ASSERT_EQ(results.size(), expected.size());
    for (size_t r = 0; r < results.size(); ++r) {
      ASSERT_EQ(results.runs[r].second.size(), static_cast<size_t>(kIterations));
      for (size_t i = 0; i < results.runs[r].second.size(); ++i)
        expect_bit_identical(expected.runs[r].second[i].outputs, results.runs[r].second[i].outputs,
                             "thread " + std::to_string(t) + ", runner " + std::to_string(r) + ", iteration " +
                                 std::to_string(i));
    }
  }
}

TEST(ComparatorConcurrency, CompareAccuracyAndValidateOnSharedResultsFromThreads) {
  compare::DataLoader data;
  data.seed(2).iterations(kIterations);
  const RunResults results = compare_two_ref_runners(data);
  std::vector<int> passed(kThreads, 0);
  run_on_threads(kThreads, [&](int t) {
    const compare::AccuracyResult accuracy = compare::Comparator::compare_accuracy(results);
    passed[static_cast<size_t>(t)] = static_cast<int>(accuracy.stats().passed);
    EXPECT_TRUE(compare::Comparator::validate(results, true));
  });
  for (int p : passed) EXPECT_EQ(p, kIterations);
}

// The same runner in two concurrent Comparator::run calls: one holds it (inside infer), the other
// is refused with the runner's one-line error, which the caller sees.
TEST(ComparatorConcurrency, OneRunnerInTwoConcurrentRunsFailsOneOfThemClearly) {
  GateRunner runner;
  compare::FeedList feeds({TensorMap{{"x", Tensor::from_vector<float>({2}, {3.f, 4.f})}}});
  RunResults held;
  std::thread holder([&] { held = compare::Comparator::run({&runner}, feeds); });
  runner.wait_until_inside();
  const std::string error = user_error_of([&] { compare::Comparator::run({&runner}, feeds); });
  EXPECT_NE(error.find("runner gate-runner: activate() was called while another thread is using the runner"),
            std::string::npos)
      << error;
  runner.release();
  holder.join();
  ASSERT_EQ(held.size(), 1u);
  EXPECT_TRUE(held.runs[0].second[0].outputs.at("y").bit_equal(feeds.feeds()[0].at("x")));
}

// Feed i depends only on the seed and i: threads asking for feeds in different orders all get
// the serial loader's.
TEST(DataLoaderConcurrency, FeedsAreTheSameOnEveryThreadInAnyOrder) {
  compare::DataLoader data;
  data.seed(11).iterations(8).val_range("", {-1.0, 1.0});
  TensorMetadata inputs;
  inputs.add("a", DType::kFloat32, DimShape(Shape{3, 5})).add("b", DType::kInt64, DimShape(Shape{4}));
  data.set_input_metadata(inputs);
  std::vector<TensorMap> expected;
  for (size_t i = 0; i < 8; ++i) expected.push_back(*data.feed(i));
  std::vector<std::vector<TensorMap>> got(kThreads, std::vector<TensorMap>(8));
  run_on_threads(kThreads, [&](int t) {
    for (size_t n = 0; n < 8; ++n) {
      const size_t i = t % 2 == 0 ? n : 7 - n;  // half the threads backwards
      got[static_cast<size_t>(t)][i] = t % 3 == 0 ? data.generate(i) : *data.feed(i);
    }
  });
  for (int t = 0; t < kThreads; ++t)
    for (size_t i = 0; i < 8; ++i)
      expect_bit_identical(expected[i], got[static_cast<size_t>(t)][i], "thread " + std::to_string(t) + ", feed " + std::to_string(i));
}

// A FeedList hands the same feeds to every thread.
TEST(DataLoaderConcurrency, FeedListIsTheSameOnEveryThread) {
  std::vector<TensorMap> feeds;
  for (int i = 0; i < 4; ++i) feeds.push_back(TensorMap{{"x", Tensor::from_vector<float>({2}, {float(i), float(-i)})}});
  compare::FeedList list(feeds);
  std::vector<std::vector<TensorMap>> got(kThreads);
  run_on_threads(kThreads, [&](int t) {
    for (size_t i = 0; auto feed = list.feed(i); ++i) got[static_cast<size_t>(t)].push_back(*feed);
  });
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(got[static_cast<size_t>(t)].size(), feeds.size());
    for (size_t i = 0; i < feeds.size(); ++i) expect_bit_identical(feeds[i], got[static_cast<size_t>(t)][i], "FeedList");
  }
}

}  // namespace
}  // namespace parity::testing
