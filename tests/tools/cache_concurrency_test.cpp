// The files builds share (docs/concurrency.md), written by threads at once: a calibration cache,
// a timing cache and a plan file each read back complete (one writer's whole file, never a mix or
// a prefix) while they are rewritten, the last complete write wins, and no temporary file is left.
// A session loaded from a plan keeps running while the file is replaced. Also built under
// ThreadSanitizer; tests/cli/concurrent_writers_test.cpp runs the same with processes.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "compare/data_loader.h"
#include "core/formats/file_io.h"
#include "runtime/plan/plan_file.h"
#include "runtime/tactics.h"
#include "support/concurrency.h"
#include "support/test_support.h"
#include "tools/calibration.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kWriters = 3;
constexpr int kReaders = 2;
constexpr int kWritesEach = 6;

// Runs kWriters threads that each call write(w) kWritesEach times and kReaders threads that call
// read() until the writers are done; returns how many reads were made.
int write_and_read_at_once(const std::function<void(int)>& write, const std::function<void()>& read) {
  std::atomic<int> writers_left{kWriters};
  std::atomic<int> reads{0};
  run_on_threads(kWriters + kReaders, [&](int t) {
    if (t < kWriters) {
      for (int i = 0; i < kWritesEach; ++i) write(t);
      --writers_left;
      return;
    }
    do {
      read();
      ++reads;
    } while (writers_left.load() > 0);
  });
  return reads.load();
}

// Nothing but `expected` in `dir`: every temporary file was renamed or removed.
void expect_only(const fs::path& dir, const std::vector<std::string>& expected) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, expected);
}

// Writer w's table: many tensors, so a torn file would lose lines or mix two writers' scales.
tools::CalibrationTable calibration_table(int writer) {
  tools::CalibrationTable table;
  for (int i = 0; i < 2000; ++i) table.scales["tensor_" + std::to_string(i)] = 0.001f * static_cast<float>(writer + 1) + 1e-7f * i;
  table.algorithm = writer % 2 ? "entropy" : "minmax";
  return table;
}

int writer_of(const tools::CalibrationTable& read) {
  for (int w = 0; w < kWriters; ++w) {
    const tools::CalibrationTable table = calibration_table(w);
    if (read.scales == table.scales && read.algorithm == table.algorithm) return w;
  }
  return -1;
}

TEST(CacheConcurrency, CalibrationCacheWrittenByThreadsIsAlwaysOneWritersWholeFile) {
  TempDir dir;
  const fs::path cache = dir / "calibration.cache";
  tools::write_calibration_cache(cache, calibration_table(0));
  const int reads = write_and_read_at_once([&](int w) { tools::write_calibration_cache(cache, calibration_table(w)); },
                                           [&] { EXPECT_GE(writer_of(tools::read_calibration_cache(cache)), 0) << "a torn cache"; });
  EXPECT_GT(reads, 0);
  EXPECT_GE(writer_of(tools::read_calibration_cache(cache)), 0);
  expect_only(dir.path(), {"calibration.cache"});
}

std::string timing_cache_json(int writer) {
  runtime::TimingCache cache;
  for (int i = 0; i < 2000; ++i) cache.put("Conv|node_" + std::to_string(i) + "|optimized", 1e-6 * (writer + 1) * (i + 1));
  return cache.to_json();
}

TEST(CacheConcurrency, TimingCacheWrittenByThreadsIsAlwaysOneWritersWholeFile) {
  TempDir dir;
  const fs::path path = dir / "timing.json";
  std::vector<std::string> written;
  for (int w = 0; w < kWriters; ++w) written.push_back(timing_cache_json(w));
  formats::write_binary_file(path.string(), written[0]);
  auto one_writers = [&](const std::string& text) {
    return std::find(written.begin(), written.end(), text) != written.end();
  };
  const int reads = write_and_read_at_once([&](int w) { formats::write_binary_file(path.string(), written[static_cast<size_t>(w)]); },
                                           [&] {
                                             const std::string text = formats::read_binary_file(path.string());
                                             EXPECT_TRUE(one_writers(text)) << "a torn timing cache of " << text.size() << " bytes";
                                             EXPECT_EQ(runtime::TimingCache::from_json(text, "timing cache").size(), 2000u);
                                           });
  EXPECT_GT(reads, 0);
  EXPECT_TRUE(one_writers(formats::read_binary_file(path.string())));
  expect_only(dir.path(), {"timing.json"});
}

// Two plans of demo.onnx that differ (fused or not) rewritten over one path by threads while
// others load and run it; a session loaded before keeps its results throughout.
TEST(CacheConcurrency, PlanRewrittenByThreadsLoadsCompleteAndLoadedSessionsKeepRunning) {
  TempDir dir;
  const fs::path plan = dir / "demo.plan";
  const fs::path model = source_dir() / "models/demo.onnx";
  std::vector<std::string> bytes;
  for (bool fuse : {true, false}) {
    runtime::SessionOptions options;
    options.fuse = fuse;
    bytes.push_back(runtime::plan::plan_to_bytes(runtime::Session::create(model, options).value(), "demo.onnx"));
  }
  ASSERT_NE(bytes[0], bytes[1]);
  formats::write_binary_file(plan.string(), bytes[0]);
  const runtime::Session before = runtime::plan::load_plan(plan).value();
  compare::DataLoader loader;
  loader.input_metadata(before.input_metadata());
  const TensorMap feed = loader.generate(0);
  const TensorMap expected = before.run(feed).clone();

  const int reads = write_and_read_at_once(
      [&](int w) { formats::write_binary_file(plan.string(), bytes[static_cast<size_t>(w) % bytes.size()]); },
      [&] {
        const runtime::Session loaded = runtime::plan::load_plan(plan).value();
        for (const auto& [name, tensor] : expected)
          EXPECT_EQ(tensor.shape(), loaded.run(feed).at(name).shape()) << name;
        expect_bit_identical(expected, before.run(feed), "the session loaded before the rewrites");
      });
  EXPECT_GT(reads, 0);
  const std::string final_bytes = formats::read_binary_file(plan.string());
  EXPECT_TRUE(final_bytes == bytes[0] || final_bytes == bytes[1]);
  expect_only(dir.path(), {"demo.plan"});
}

}  // namespace
}  // namespace parity::testing
