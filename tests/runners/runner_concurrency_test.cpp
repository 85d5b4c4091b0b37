// runners/runner.h's thread contract: distinct runners (ref, ort) are activated, run and
// deactivated on threads at once with the serial results; a second thread inside one runner gets
// a one-line error instead of a race; threads taking turns on one runner need no lock; a runner's
// name, state and last time are readable from anywhere. Also built under ThreadSanitizer.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "compare/data_loader.h"
#include "runners/registry.h"
#include "support/concurrency.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

constexpr int kThreads = 4;
constexpr int kRounds = 2;  // activate, infer kInferences feeds, deactivate; per thread
constexpr int kInferences = 3;

std::string demo_model() { return (source_dir() / "models/demo.onnx").string(); }

std::unique_ptr<runners::Runner> make_runner(const std::string& runtime) {
  const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find(runtime);
  EXPECT_NE(info, nullptr) << runtime;
  return info->create(runners::RunnerConfig{demo_model()});
}

TensorMap feed_of(const TensorMetadata& inputs, int k) {
  compare::DataLoader loader;
  loader.seed(k + 1);
  loader.input_metadata(inputs);
  return loader.generate(0);
}

// What a runner of `runtime` gives alone for feeds 0..kInferences-1.
std::vector<TensorMap> serial_outputs(const std::string& runtime) {
  auto runner = make_runner(runtime);
  runners::ActiveRunner active(*runner);
  std::vector<TensorMap> outputs;
  for (int k = 0; k < kInferences; ++k) outputs.push_back(runner->infer(feed_of(runner->input_metadata(), k)).clone());
  return outputs;
}

// Thread t owns a runner of runtimes[t % size]: its whole life (create, activate, infer,
// deactivate, destroy) overlaps the other threads'.
void expect_distinct_runners_match_serial(const std::vector<std::string>& runtimes) {
  std::map<std::string, std::vector<TensorMap>> expected;
  for (const auto& runtime : runtimes) expected[runtime] = serial_outputs(runtime);
  std::vector<std::vector<TensorMap>> got(kThreads);
  run_on_threads(kThreads, [&](int t) {
    const std::string& runtime = runtimes[static_cast<size_t>(t) % runtimes.size()];
    for (int round = 0; round < kRounds; ++round) {
      auto runner = make_runner(runtime);
      runner->activate();
      for (int k = 0; k < kInferences; ++k)
        got[static_cast<size_t>(t)].push_back(runner->infer(feed_of(runner->input_metadata(), k)).clone());
      runner->deactivate();
    }
  });
  for (int t = 0; t < kThreads; ++t) {
    const std::string& runtime = runtimes[static_cast<size_t>(t) % runtimes.size()];
    ASSERT_EQ(got[static_cast<size_t>(t)].size(), static_cast<size_t>(kRounds * kInferences));
    for (size_t i = 0; i < got[static_cast<size_t>(t)].size(); ++i)
      expect_bit_identical(expected[runtime][i % kInferences], got[static_cast<size_t>(t)][i],
                           runtime + " on thread " + std::to_string(t) + ", inference " + std::to_string(i));
  }
}

TEST(RunnerConcurrency, DistinctRefRunnersOnThreadsAtOnceGetTheSerialResults) {
  expect_distinct_runners_match_serial({"ref"});
}

TEST(RunnerConcurrency, DistinctRefAndOrtRunnersOnThreadsAtOnceGetTheSerialResults) {
  PARITY_REQUIRE_RUNNER("ort");
  expect_distinct_runners_match_serial({"ref", "ort"});
}

// One thread is held inside infer; every call another thread makes on that runner meanwhile is
// refused with one line naming the runner and the call, and the runner works on afterwards.
TEST(RunnerConcurrency, SecondThreadInsideOneRunnerGetsAOneLineError) {
  GateRunner runner;
  runner.activate();
  const TensorMap feed{{"x", Tensor::from_vector<float>({2}, {1.f, 2.f})}};
  TensorMap held_result;
  std::thread holder([&] { held_result = runner.infer(feed); });
  runner.wait_until_inside();
  for (const auto& [call, fn] : std::vector<std::pair<std::string, std::function<void()>>>{
           {"infer", [&] { runner.infer(feed); }},
           {"activate", [&] { runner.activate(); }},
           {"deactivate", [&] { runner.deactivate(); }},
           {"input_metadata", [&] { runner.input_metadata(); }}}) {
    const std::string error = user_error_of(fn);
    EXPECT_EQ(error, "runner gate-runner: " + call +
                         "() was called while another thread is using the runner; a runner serves one thread at a "
                         "time (give each thread its own runner, or share a Session)");
  }
  EXPECT_TRUE(runner.is_active()) << "a refused deactivate changes nothing";
  runner.release();
  holder.join();
  EXPECT_TRUE(held_result.at("y").bit_equal(feed.at("x")));
  EXPECT_TRUE(runner.infer(feed).at("y").bit_equal(feed.at("x"))) << "usable again once the holder left";
  runner.deactivate();
}

// Threads that share one runner and take turns (retrying when it is in use) need no lock of their
// own: every inference succeeds with the serial result.
TEST(RunnerConcurrency, ThreadsTakingTurnsOnOneRunnerGetTheSerialResults) {
  const std::vector<TensorMap> expected = serial_outputs("ref");
  auto runner = make_runner("ref");
  runners::ActiveRunner active(*runner);
  const TensorMetadata inputs = runner->input_metadata();
  std::vector<std::vector<TensorMap>> got(kThreads);
  std::atomic<int> refused{0};
  run_on_threads(kThreads, [&](int t) {
    for (int k = 0; k < kInferences;) {
      try {
        got[static_cast<size_t>(t)].push_back(runner->infer(feed_of(inputs, k)).clone());
        ++k;
      } catch (const Error& e) {
        ASSERT_NE(std::string(e.what()).find("while another thread is using the runner"), std::string::npos) << e.what();
        ++refused;
        std::this_thread::yield();
      }
    }
  });
  for (int t = 0; t < kThreads; ++t)
    for (int k = 0; k < kInferences; ++k)
      expect_bit_identical(expected[static_cast<size_t>(k)], got[static_cast<size_t>(t)][static_cast<size_t>(k)],
                           "thread " + std::to_string(t) + ", feed " + std::to_string(k));
  RecordProperty("refused_calls", refused.load());
}

// name, is_active and last_inference_time may be read from any thread while another runs.
TEST(RunnerConcurrency, StateIsReadableFromAnyThreadDuringInference) {
  auto runner = make_runner("ref");
  runner->activate();
  const TensorMap feed = feed_of(runner->input_metadata(), 0);
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::thread reader([&] {
    while (!done.load()) {
      EXPECT_TRUE(runner->is_active());
      EXPECT_GE(runner->last_inference_time(), 0.0);
      EXPECT_FALSE(runner->name().empty());
      ++reads;
    }
  });
  // Inferences go on until the reader has read during them (it may start late on a busy machine).
  for (int k = 0; k < kInferences || reads.load() < 100; ++k) runner->infer(feed);
  done = true;
  reader.join();
  EXPECT_GT(runner->last_inference_time(), 0.0);
  runner->deactivate();
  EXPECT_FALSE(runner->is_active());
}

}  // namespace
}  // namespace parity::testing
