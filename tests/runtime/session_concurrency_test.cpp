// runtime/session.h's thread contract on real models: threads sharing one Session (made from the
// ONNX model or loaded from a plan file), with hooks, intermediate outputs and kernel threads,
// get results bit-identical to the same runs made alone. Also built under ThreadSanitizer.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "compare/data_loader.h"
#include "runtime/plan/plan_file.h"
#include "runtime/session.h"
#include "runtime/subgraph.h"
#include "support/concurrency.h"
#include "support/model_builder.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;
using runtime::RunOptions;
using runtime::Session;
using runtime::SessionOptions;
using runtime::Value;

constexpr int kCallers = 4;
constexpr int kRunsPerCaller = 3;
// Runs that observe every value (hooks, mark all) copy all of MobileNetV2's tensors: one a caller.
constexpr int kObservedRunsPerCaller = 1;

fs::path demo_model() { return source_dir() / "models/demo.onnx"; }
fs::path mobilenet_model() { return source_dir() / ".cache/bench-models/mobilenet_v2.onnx"; }

Session make_session(const fs::path& model, int threads) {
  SessionOptions options;
  options.threads = threads;
  return Session::create(model, options).value();
}

// Feed k of a session: Polygraphy's DataLoader at seed k, so every caller runs different data.
TensorMap feed_of(const Session& session, int k) {
  compare::DataLoader loader;
  loader.seed(k + 1);
  loader.input_metadata(session.input_metadata());
  return loader.generate(0);
}

int feed_index(int caller, int run, int runs_per_caller = kRunsPerCaller) { return caller * runs_per_caller + run; }

// Every value a run shows its hook, deep-copied (the executor releases values after their last use).
using HookValues = std::map<std::string, Tensor>;
RunOptions recording_hook(HookValues& seen) {
  RunOptions options;
  options.hook = [&seen](const std::string& name, const Value& value) {
    if (value.is_tensor()) seen[name] = value.tensor().clone();
  };
  return options;
}

TensorMap as_map(const HookValues& values) {
  TensorMap map;
  for (const auto& [name, tensor] : values) map.set(name, tensor);
  return map;
}

// kCallers threads run feeds 0..kCallers*runs_per_caller-1 on `shared` at once; each result must
// equal the one `serial` (a session of the same model and options) gives alone.
void expect_concurrent_runs_match_serial(const Session& shared, const Session& serial, const RunOptions& options,
                                         const std::string& context, int runs_per_caller = kRunsPerCaller) {
  std::vector<TensorMap> expected;
  for (int k = 0; k < kCallers * runs_per_caller; ++k) expected.push_back(serial.run(feed_of(serial, k), options).clone());
  std::vector<TensorMap> got(expected.size());
  run_on_threads(kCallers, [&](int caller) {
    for (int r = 0; r < runs_per_caller; ++r) {
      const int k = feed_index(caller, r, runs_per_caller);
      got[static_cast<size_t>(k)] = shared.run(feed_of(shared, k), options).clone();
    }
  });
  for (size_t k = 0; k < expected.size(); ++k)
    expect_bit_identical(expected[k], got[k], context + ", feed " + std::to_string(k));
}

struct ModelAndThreads {
  const char* model;  // "demo" or "mobilenet_v2"
  int threads;        // kernel threads of the session
};

fs::path model_path(const std::string& name) { return name == "demo" ? demo_model() : mobilenet_model(); }

class SessionConcurrency : public ::testing::TestWithParam<ModelAndThreads> {
 protected:
  void SetUp() override { PARITY_REQUIRE_FILE(model_path(GetParam().model)); }
  fs::path model() const { return model_path(GetParam().model); }
  std::string context() const {
    return std::string(GetParam().model) + " at " + std::to_string(GetParam().threads) + " kernel thread(s)";
  }
};

TEST_P(SessionConcurrency, ThreadsSharingOneSessionGetTheSerialResults) {
  const Session shared = make_session(model(), GetParam().threads);
  const Session serial = make_session(model(), GetParam().threads);
  expect_concurrent_runs_match_serial(shared, serial, {}, context());
}

// The unfused plan that hooks need is built on first need: here by whichever of the threads
// that start together gets there first, while the others wait for it.
TEST_P(SessionConcurrency, HooksOnSharedSessionSeeTheSerialValues) {
  const Session shared = make_session(model(), GetParam().threads);
  const Session serial = make_session(model(), GetParam().threads);
  std::vector<HookValues> expected(kCallers * kObservedRunsPerCaller);
  for (size_t k = 0; k < expected.size(); ++k) serial.run(feed_of(serial, static_cast<int>(k)), recording_hook(expected[k]));
  std::vector<HookValues> got(expected.size());
  run_on_threads(kCallers, [&](int caller) {
    for (int r = 0; r < kObservedRunsPerCaller; ++r) {
      const int k = feed_index(caller, r, kObservedRunsPerCaller);
      shared.run(feed_of(shared, k), recording_hook(got[static_cast<size_t>(k)]));
    }
  });
  for (size_t k = 0; k < expected.size(); ++k) {
    EXPECT_GT(expected[k].size(), 3u);
    expect_bit_identical(as_map(expected[k]), as_map(got[k]), context() + ", hook values of feed " + std::to_string(k));
  }
}

// Intermediate outputs (Polygraphy's mark all) and stop_after, asked for by threads at once.
TEST_P(SessionConcurrency, IntermediateOutputsOfSharedSessionAreTheSerialOnes) {
  const Session shared = make_session(model(), GetParam().threads);
  const Session serial = make_session(model(), GetParam().threads);
  const std::vector<std::string> names = serial.intermediate_names();
  ASSERT_GT(names.size(), 2u);
  RunOptions mark_all;
  mark_all.outputs = names;
  expect_concurrent_runs_match_serial(shared, serial, mark_all, context() + ", every intermediate output",
                                      kObservedRunsPerCaller);

  RunOptions stop_early;
  stop_early.stop_after = names[names.size() / 2];
  run_on_threads(kCallers, [&](int caller) { EXPECT_TRUE(shared.run(feed_of(shared, caller), stop_early).empty()); });
}

TEST_P(SessionConcurrency, ThreadsSharingOnePlanLoadedSessionGetTheSerialResults) {
  TempDir dir;
  const fs::path plan = dir / "model.plan";
  runtime::plan::save_plan(make_session(model(), 1), plan, model().filename().string());
  SessionOptions options;
  options.threads = GetParam().threads;
  const Session shared = runtime::plan::load_plan(plan, options).value();
  const Session serial = runtime::plan::load_plan(plan, options).value();
  expect_concurrent_runs_match_serial(shared, serial, {}, context() + ", plan file");
}

INSTANTIATE_TEST_SUITE_P(Models, SessionConcurrency,
                         ::testing::Values(ModelAndThreads{"demo", 1}, ModelAndThreads{"demo", 2},
                                           ModelAndThreads{"mobilenet_v2", 1}, ModelAndThreads{"mobilenet_v2", 2}),
                         [](const auto& info) {
                           return std::string(info.param.model) + "_threads" + std::to_string(info.param.threads);
                         });

// A plan-loaded session refuses hooks with the same one-line error on every thread.
TEST(SessionConcurrencyContract, PlanLoadedSessionRefusesHooksOnEveryThread) {
  TempDir dir;
  runtime::plan::save_plan(make_session(demo_model(), 1), dir / "demo.plan", "demo.onnx");
  const Session loaded = runtime::plan::load_plan(dir / "demo.plan").value();
  std::vector<std::string> errors(kCallers);
  run_on_threads(kCallers, [&](int caller) {
    HookValues seen;
    errors[static_cast<size_t>(caller)] = user_error_of([&] { loaded.run(feed_of(loaded, caller), recording_hook(seen)); });
  });
  for (const auto& error : errors) {
    EXPECT_NE(error.find("a plan file runs as it was built"), std::string::npos) << error;
    EXPECT_EQ(error, errors[0]);
  }
}

// Random ops draw from the session seed and the run's own call count: concurrent runs of a
// RandomUniformLike model all give the serial run's values.
TEST(SessionConcurrencyContract, RandomOpsGiveEveryConcurrentRunTheSerialValues) {
  ModelBuilder builder;
  builder.input("x", DType::kFloat32, {64}).output("y", DType::kFloat32, {64}).output("z", DType::kFloat32, {64});
  builder.node("RandomUniformLike", {"x"}, {"y"});
  builder.node("RandomNormalLike", {"x"}, {"z"});
  SessionOptions options;
  options.seed = 7;
  const Session session = Session::create(builder.model(), options).value();
  const TensorMap feed{{"x", Tensor(DType::kFloat32, Shape{64})}};
  const TensorMap expected = session.run(feed).clone();
  std::vector<TensorMap> got(kCallers * kRunsPerCaller);
  run_on_threads(kCallers, [&](int caller) {
    for (int r = 0; r < kRunsPerCaller; ++r) got[static_cast<size_t>(feed_index(caller, r))] = session.run(feed).clone();
  });
  for (size_t k = 0; k < got.size(); ++k) expect_bit_identical(expected, got[k], "run " + std::to_string(k));
}

// A hook runs on the thread that called run(), not on the session's kernel threads, and the
// inspectors may be called while other threads run.
TEST(SessionConcurrencyContract, HooksRunOnTheCallingThreadAndInspectorsServeBesideRuns) {
  const Session session = make_session(demo_model(), 2);
  const Session serial = make_session(demo_model(), 2);
  const TensorMetadata inputs = serial.input_metadata();
  const std::vector<std::string> names = serial.intermediate_names(), outputs = serial.output_names();
  std::atomic<int> calls{0}, elsewhere{0};
  run_on_threads(kCallers, [&](int caller) {
    if (caller == 0) {  // an inspector thread beside the runs
      for (int i = 0; i < 20; ++i) {
        EXPECT_EQ(session.input_metadata(), inputs);
        EXPECT_EQ(session.intermediate_names(), names);
        EXPECT_EQ(session.output_names(), outputs);
        EXPECT_EQ(session.options().threads, 2);
        EXPECT_FALSE(session.plan().nodes_.empty());
      }
      return;
    }
    const std::thread::id me = std::this_thread::get_id();
    RunOptions options;
    options.hook = [&](const std::string&, const Value&) {
      ++calls;
      if (std::this_thread::get_id() != me) ++elsewhere;
    };
    for (int r = 0; r < kRunsPerCaller; ++r) session.run(feed_of(session, feed_index(caller, r)), options);
  });
  EXPECT_GT(calls.load(), 0);
  EXPECT_EQ(elsewhere.load(), 0) << "hook calls on a thread other than the caller's";
}

// Threads created by this process now (Linux: one /proc/self/task entry per thread).
int live_threads() {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// The kernel threads belong to the session: concurrent runs share its workers, so the only
// threads alive during them are the ones before plus the callers.
TEST(SessionConcurrencyContract, ConcurrentRunsShareTheSessionsKernelThreads) {
  const Session session = make_session(demo_model(), 3);
  session.run(feed_of(session, 0));  // packs weights once (oneDNN may start its own threads here)
  const int before = live_threads();
  std::atomic<int> most{0};
  RunOptions options;
  options.hook = [&](const std::string&, const Value&) {
    const int now = live_threads();
    for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
    }
  };
  run_on_threads(kCallers, [&](int caller) { session.run(feed_of(session, caller), options); });
  EXPECT_GT(most.load(), before);
  EXPECT_LE(most.load(), before + kCallers) << "runs started kernel threads of their own";
}

// Distinct sessions built at once on different threads, sharing one timing cache, each give the
// results of a session built alone (to round-off: timing may choose other kernels).
TEST(SessionConcurrencyContract, SessionsBuiltAtOnceMayShareATimingCache) {
  auto cache = std::make_shared<runtime::TimingCache>();
  SessionOptions timed;
  timed.tactics.time = true;
  timed.tactics.cache = cache;
  const Session alone = make_session(demo_model(), 1);
  const TensorMap feed = feed_of(alone, 0);
  const TensorMap expected = alone.run(feed).clone();
  std::vector<TensorMap> got(kCallers);
  auto build_on_threads = [&] {
    run_on_threads(kCallers, [&](int caller) {
      const Session built = Session::create(demo_model(), timed).value();
      got[static_cast<size_t>(caller)] = built.run(feed).clone();
    });
  };
  // Cold: the builds time kernels and put their times while the others look them up.
  build_on_threads();
  EXPECT_GT(cache->size(), 0u);
  EXPECT_GE(cache->hits() + cache->misses(), cache->size() * kCallers);
  // Warm: every time is in the cache now, so no build measures one.
  const size_t misses = cache->misses(), hits = cache->hits();
  build_on_threads();
  EXPECT_EQ(cache->misses(), misses);
  EXPECT_GE(cache->hits(), hits + cache->size() * kCallers);
  for (int caller = 0; caller < kCallers; ++caller) {
    const TensorMap& outputs = got[static_cast<size_t>(caller)];
    ASSERT_EQ(outputs.names(), expected.names());
    for (const auto& [name, tensor] : expected) {
      ASSERT_EQ(tensor.shape(), outputs.at(name).shape()) << "session " << caller;
      for (int64_t i = 0; i < tensor.numel(); ++i)
        ASSERT_NEAR(tensor.value_as_double(i), outputs.at(name).value_as_double(i), 1e-4) << "session " << caller;
    }
  }
}

}  // namespace
}  // namespace parity::testing
