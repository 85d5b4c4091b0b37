// The navigator's parts on their own: the batch axis squeezed and put back, sample selection,
// measured tolerances with the zero-reference guard, the profiler's stability and saturation
// rules, status.yaml round trips, and the .nav unpacker refusing entries that escape its folder.
#include <gtest/gtest.h>
#include <zip.h>

#include <filesystem>
#include <thread>

#include "core/status.h"
#include "support/test_support.h"
#include "tools/navigator/cells.h"
#include "tools/navigator/formats.h"
#include "tools/navigator/package.h"
#include "tools/navigator/profiler.h"
#include "tools/navigator/samples.h"
#include "tools/navigator/status.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;
namespace nav = tools::navigator;

Tensor iota(const Shape& shape) {
  std::vector<float> values(shape_numel(shape));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  return Tensor::from_vector(shape, values);
}

TEST(NavigatorSamples, BatchAxisIsSqueezedAndRepeatedBack) {
  const Tensor batch = iota({2, 3, 4});
  const Tensor item = nav::take_item(batch, 0, 1);
  ASSERT_EQ(item.shape(), (Shape{3, 4}));
  EXPECT_EQ(item.values<float>()[0], 12.0f);
  const Tensor again = nav::repeat_item(item, 0, 3);
  ASSERT_EQ(again.shape(), (Shape{3, 3, 4}));
  for (int b = 0; b < 3; ++b)
    for (int i = 0; i < 12; ++i) ASSERT_EQ(again.values<float>()[b * 12 + i], 12.0f + i);
  // A batch axis in the middle: item 0 along axis 1 of [2, 3, 4] keeps rows 0 of each outer block.
  const Tensor middle = nav::take_item(batch, 1, 2);
  ASSERT_EQ(middle.shape(), (Shape{2, 4}));
  EXPECT_EQ(middle.values<float>()[0], 8.0f);
  EXPECT_EQ(middle.values<float>()[4], 20.0f);
  const Tensor back = nav::repeat_item(middle, 1, 2);
  ASSERT_EQ(back.shape(), (Shape{2, 2, 4}));
  EXPECT_EQ(back.values<float>()[4], 8.0f);
  EXPECT_EQ(back.values<float>()[8], 20.0f);
}

TEST(NavigatorSamples, ConversionSamplesSpanEachDynamicAxis) {
  std::vector<TensorMap> samples;
  for (int64_t width : {64, 32, 128, 96}) samples.push_back(TensorMap{{"x", iota({3, 8, width})}});
  TensorMetadata inputs;
  inputs.add("x", DType::kFloat32, DimShape{Dim::dynamic("batch"), 3, 8, Dim::dynamic("w")});
  const auto axes = nav::sample_dynamic_axes(samples, inputs, {}, int64_t{0});
  ASSERT_EQ(axes.at("x"), (std::vector<int64_t>{2}));
  const auto sets = nav::select_samples(samples, axes, 3, 7);
  ASSERT_EQ(sets.of("conversion").size(), 2u);
  EXPECT_EQ(sets.of("conversion")[0].at("x").dim(2), 32);
  EXPECT_EQ(sets.of("conversion")[1].at("x").dim(2), 128);
  EXPECT_EQ(sets.of("correctness").size(), 3u);
  EXPECT_EQ(sets.of("profiling").size(), 1u);
  const auto profiles = nav::axis_profiles(sets, axes, int64_t{0}, 4);
  ASSERT_EQ(profiles.size(), 2u);
  EXPECT_EQ(profiles[0].axis, 0);
  EXPECT_EQ(profiles[0].max, 4);
  EXPECT_EQ(profiles[1].axis, 3);  // model coordinates: the batch axis is back in front
  EXPECT_EQ(profiles[1].min, 32);
  EXPECT_EQ(profiles[1].max, 128);
}

TEST(NavigatorCorrectness, MeasuresToleranceWithAZeroReferenceGuard) {
  const TensorMap source{{"y", Tensor::from_vector<float>({4}, {1.0f, 2.0f, 0.5f, 0.0f})}};
  const TensorMap format{{"y", Tensor::from_vector<float>({4}, {1.0f, 2.5f, 0.25f, 0.0f})}};
  const auto measured = nav::compare_outputs({source}, {format}, std::nullopt, std::nullopt);
  ASSERT_TRUE(measured.ok()) << measured.reason;
  ASSERT_EQ(measured.tolerances.size(), 1u);
  EXPECT_DOUBLE_EQ(measured.tolerances[0].atol, 0.5);
  EXPECT_DOUBLE_EQ(measured.tolerances[0].rtol, 1.0);  // |0.5 - 0.25| / 0.25; the zero pair adds nothing

  // A difference at a zero reference counts in atol, never as an infinite rtol.
  const TensorMap at_zero{{"y", Tensor::from_vector<float>({4}, {1.0f, 2.0f, 0.5f, 0.0f})}};
  const TensorMap off_zero{{"y", Tensor::from_vector<float>({4}, {1.0f, 2.0f, 0.5f, 0.0f})}};
  TensorMap shifted = off_zero.clone();
  shifted.find("y")->data<float>()[3] = 0.0f;
  const TensorMap src_nonzero{{"y", Tensor::from_vector<float>({4}, {1.0f, 2.0f, 0.5f, 0.125f})}};
  const auto guarded = nav::compare_outputs({src_nonzero}, {shifted}, std::nullopt, std::nullopt);
  ASSERT_TRUE(guarded.ok());
  EXPECT_DOUBLE_EQ(guarded.tolerances[0].atol, 0.125);
  EXPECT_DOUBLE_EQ(guarded.tolerances[0].rtol, 0.0);

  // Judged against user limits when given.
  const auto judged = nav::compare_outputs({source}, {format}, 0.1, std::nullopt);
  EXPECT_EQ(judged.state, nav::StepState::kFail);
  EXPECT_NE(judged.reason.find("output 'y' differs by 0.5"), std::string::npos) << judged.reason;
  // The failure carries the measured maxima over the whole output, not just the first miss.
  EXPECT_NE(judged.reason.find("measured atol 0.5 rtol"), std::string::npos) << judged.reason;
  EXPECT_TRUE(nav::compare_outputs({source}, {format}, 0.5, 0.0).ok());
}

TEST(NavigatorCorrectness, NanAndMissingOutputsFailWithTheReason) {
  const TensorMap source{{"y", Tensor::from_vector<float>({2}, {1.0f, 2.0f})}};
  const TensorMap nan{{"y", Tensor::from_vector<float>({2}, {1.0f, std::nanf("")})}};
  const auto with_nan = nav::compare_outputs({source}, {nan}, std::nullopt, std::nullopt);
  EXPECT_EQ(with_nan.state, nav::StepState::kFail);
  EXPECT_NE(with_nan.reason.find("output 'y' has 1 NaN or infinite values"), std::string::npos) << with_nan.reason;
  const TensorMap other{{"z", Tensor::from_vector<float>({2}, {1.0f, 2.0f})}};
  const auto missing = nav::compare_outputs({source}, {other}, std::nullopt, std::nullopt);
  EXPECT_NE(missing.reason.find("does not produce output 'y'"), std::string::npos) << missing.reason;
}

TEST(NavigatorProfiler, StableWindowsAndThroughputSaturation) {
  nav::ProfilerConfig config;
  config.count_windows = true;
  config.window_count = 5;
  config.max_trials = 6;
  config.batch_sizes = {1, 2, 4, 8};
  // Latency grows linearly past batch 2: throughput stops growing at 2.
  const auto result = nav::profile([](int64_t b) { return 0.001 * std::max<int64_t>(b, 2); }, config);
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result.performance.size(), 3u);  // 1, 2, then 4 shows the saturation
  EXPECT_EQ(result.saturated_at, 2);
  EXPECT_TRUE(result.performance[0].stable);
  EXPECT_EQ(result.performance[0].trials, 3);
  EXPECT_DOUBLE_EQ(result.performance[1].p50_ms, 2.0);
  EXPECT_NEAR(result.performance[0].p99_ms, 2.0, 1e-9);

  // Latencies that keep growing never stabilise: flagged, measured, not failed.
  int calls = 0;
  config.batch_sizes = {1};
  const auto drifting = nav::profile([&](int64_t) { return 0.001 * ++calls; }, config);
  ASSERT_TRUE(drifting.ok());
  EXPECT_FALSE(drifting.performance[0].stable);
  EXPECT_EQ(drifting.performance[0].trials, 6);
  EXPECT_EQ(nav::batch_sizes_up_to(6), (std::vector<int64_t>{1, 2, 4, 6}));
  EXPECT_DOUBLE_EQ(nav::percentile({1, 2, 3, 4}, 50), 2.5);
}

TEST(NavigatorStatus, YamlRoundTripKeepsEveryField) {
  nav::WorkspaceStatus status;
  status.parity_version = "0.1.0";
  status.environment["os"] = "Linux";
  status.config.source = "/m.onnx";
  status.config.torchscript_copy = "/m.pt";
  status.config.batch_dim = 0;
  status.config.atol = 1e-3;
  status.config.dynamic_axes["x"] = {0, 3};
  status.inputs.push_back({"x", "float32", {-1, 3, 48, -1}, false});
  status.profiles.push_back({"x", 3, 160, 320, 640});
  status.sample_counts["correctness"] = 3;
  nav::FormatStatus format{"onnx", "onnx/model.onnx", {}, {}};
  format.export_step.state = nav::StepState::kOk;
  nav::RuntimeStatus runtime{"ort", {}};
  runtime.step("conversion").state = nav::StepState::kOk;
  runtime.step("correctness").state = nav::StepState::kOk;
  runtime.step("correctness").tolerances.push_back({"y", 1.5e-6, 2e-4});
  nav::StepResult& perf = runtime.step("performance");
  perf.state = nav::StepState::kOk;
  perf.performance.push_back({1, 1.5, 1.7, 1.8, 2.0, 1.6, 650.0, 30, 3, true});
  perf.saturated_at = 1;
  runtime.step("verification").state = nav::StepState::kOk;
  format.runtimes.push_back(runtime);
  status.formats.push_back(format);
  nav::FormatStatus plan{"plan-fp16", "plan-fp16/model.plan", {}, {}};
  plan.export_step.state = nav::StepState::kSkipped;
  plan.export_step.reason = "fp16 plans are not supported by this build";
  status.formats.push_back(plan);

  const auto text = nav::status_to_yaml(status);
  const auto back = nav::status_from_yaml(text, "status.yaml");
  EXPECT_EQ(nav::status_to_yaml(back), text);
  EXPECT_EQ(back.config.batch_dim, 0);
  EXPECT_EQ(back.config.torchscript_copy, "/m.pt");
  EXPECT_EQ(back.config.atol, 1e-3);
  EXPECT_FALSE(back.config.rtol);
  const auto* ort = back.find_format("onnx")->find_runtime("ort");
  ASSERT_TRUE(ort);
  EXPECT_TRUE(ort->passed());
  EXPECT_TRUE(ort->verified());
  EXPECT_DOUBLE_EQ(ort->find_step("correctness")->tolerances[0].rtol, 2e-4);
  EXPECT_EQ(ort->find_step("performance")->saturated_at, 1);
  EXPECT_EQ(back.find_format("plan-fp16")->export_step.reason, "fp16 plans are not supported by this build");
  EXPECT_THROW(nav::status_from_yaml("format_version: 99\n", "x.yaml"), Error);
  for (const char* path : {"../../etc/passwd", "/etc/passwd", "onnx/../../x"}) {
    std::string hostile = text;
    hostile.replace(hostile.find("onnx/model.onnx"), 15, path);
    EXPECT_THROW(nav::status_from_yaml(hostile, "status.yaml"), Error) << path;
  }
  EXPECT_THROW(nav::status_from_yaml("[1, 2", "x.yaml"), Error);
}

// Found by fuzz_nav_package: YAML lets a mapping repeat a key, and a status.yaml naming a format
// twice read as two formats but was written back as one (the round trip lost a format).
TEST(NavigatorStatus, AFormatOrRuntimeNamedTwiceIsOneLine) {
  const std::string twice_format =
      "format_version: 1\nformats:\n  onnx:\n    model_path:ts:\n  onnx:\n    model_path: onnx/model.onnx\n"
      "    export: {status: OK}\n    runtimes: {ref: {cnnversion: {status: OK}, correctness: {status: OK}}}";
  const std::string twice_runtime =
      "format_version: 1\nformats:\n  onnx:\n    model_path: onnx/model.onnx\n"
      "    runtimes: {ref: {correctness: {status: OK}}, ref: {correctness: {status: FAIL}}}";
  for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {twice_format, "status.yaml: format onnx is listed twice"},
           {twice_runtime, "status.yaml: format onnx lists runtime ref twice"}}) {
    try {
      nav::status_from_yaml(text, "status.yaml");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

// A zip with one crafted entry (name, and a symlink when link_target is set) beside status.yaml.
void write_crafted_zip(const fs::path& path, const std::string& name, const std::string& link_target = {}) {
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  ASSERT_TRUE(archive);
  static const std::string kStatus = "format_version: 1\n";
  zip_file_add(archive, "status.yaml", zip_source_buffer(archive, kStatus.data(), kStatus.size(), 0), 0);
  const std::string& body = link_target.empty() ? kStatus : link_target;
  const zip_int64_t index = zip_file_add(archive, name.c_str(), zip_source_buffer(archive, body.data(), body.size(), 0), 0);
  ASSERT_GE(index, 0);
  if (!link_target.empty())
    zip_file_set_external_attributes(archive, index, 0, ZIP_OPSYS_UNIX, (0120777u) << 16);
  ASSERT_EQ(zip_close(archive), 0);
}

TEST(NavigatorPackage, EntriesThatEscapeTheTargetAreRefusedBeforeAnythingIsWritten) {
  TempDir dir;
  struct Case {
    std::string name, link, expected;
  };
  const std::vector<Case> cases{
      {"../escaped.txt", "", "has a '..' component"},
      {"onnx/../../escaped.txt", "", "has a '..' component"},
      {"/tmp/parity_nav_absolute_escape.txt", "", "has an absolute path"},
      {"link", (dir.path() / "outside").string(), "is a symbolic link"},
  };
  for (const auto& c : cases) {
    const fs::path package = dir / "bad.nav";
    write_crafted_zip(package, c.name, c.link);
    const fs::path target = dir / "unpacked";
    try {
      nav::unpack_package(package, target);
      ADD_FAILURE() << c.name << " was unpacked";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(target)) << c.name << ": something was written";
    EXPECT_FALSE(fs::exists(dir / "escaped.txt"));
    EXPECT_FALSE(fs::exists("/tmp/parity_nav_absolute_escape.txt"));
    EXPECT_FALSE(fs::exists(dir / "outside"));
  }
  // A file that is no zip, and a zip without status.yaml.
  write_file(dir / "plain.nav", "not a zip");
  EXPECT_THROW(nav::unpack_package(dir / "plain.nav", dir / "t1"), Error);
  fs::create_directories(dir / "target_in_use");
  write_file(dir / "target_in_use" / "file", "x");
  ASSERT_TRUE(fs::is_regular_file(dir / "target_in_use" / "file"));
  write_crafted_zip(dir / "ok.nav", "model_input/a.txt");
  EXPECT_THROW(nav::unpack_package(dir / "ok.nav", dir / "target_in_use"), Error);
  nav::unpack_package(dir / "ok.nav", dir / "fresh");
  EXPECT_TRUE(fs::is_regular_file(dir / "fresh" / "model_input" / "a.txt"));
}

// A zip of (name, content) entries, in order.
void write_zip_entries(const fs::path& path, const std::vector<std::pair<std::string, std::string>>& entries) {
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  ASSERT_TRUE(archive);
  for (const auto& [name, content] : entries)
    ASSERT_GE(zip_file_add(archive, name.c_str(), zip_source_buffer(archive, content.data(), content.size(), 0), 0), 0)
        << name;
  ASSERT_EQ(zip_close(archive), 0);
}

// Found by fuzz_nav_package: an entry that is a file and also the folder of another entry made
// the unpacker throw std::filesystem_error (an internal error in the CLI) after writing the file.
// Such archives, and names that normalize to the same file or to none, are refused before
// anything is written.
TEST(NavigatorPackage, EntriesThatConflictAreRefusedBeforeAnythingIsWritten) {
  TempDir dir;
  const std::string status = "format_version: 1\n";
  struct Case {
    std::vector<std::pair<std::string, std::string>> entries;
    std::string expected;
  };
  const std::vector<Case> cases{
      {{{"status.yaml", status}, {"onnx", "x"}, {"onnx/model.onnx", "y"}}, "entry 'onnx' is both a file and a folder"},
      {{{"status.yaml", status}, {"onnx/model.onnx", "y"}, {"onnx", "x"}}, "entry 'onnx' is both a file and a folder"},
      {{{"status.yaml", status}, {"a/b/c", "y"}, {"a/b", "x"}}, "entry 'a/b' is both a file and a folder"},
      {{{"status.yaml", status}, {"status.yaml/", ""}}, "entry 'status.yaml' is both a file and a folder"},
      {{{"status.yaml", status}, {"a/b", "1"}, {"a/./b", "2"}}, "entry 'a/./b' appears twice"},
      {{{"status.yaml", status}, {"./", ""}}, "entry './' names no file"},
  };
  for (const auto& c : cases) {
    const fs::path package = dir / "conflict.nav";
    write_zip_entries(package, c.entries);
    const fs::path target = dir / "unpacked";
    try {
      nav::unpack_package(package, target);
      ADD_FAILURE() << c.expected << ": was unpacked";
    } catch (const Error& e) {
      EXPECT_FALSE(e.is_internal()) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(target)) << c.expected << ": something was written";
  }
  // A folder entry beside files inside it is fine.
  write_zip_entries(dir / "folders.nav", {{"status.yaml", status}, {"onnx/", ""}, {"onnx/model.onnx", "y"}});
  nav::unpack_package(dir / "folders.nav", dir / "fresh");
  EXPECT_EQ(read_file(dir / "fresh" / "onnx" / "model.onnx"), "y");
}

TEST(NavigatorFormats, EveryPlanPrecisionIsBuiltAndReproducedThroughConvert) {
  for (const char* precision : {"fp32", "fp16", "bf16", "int8"}) EXPECT_EQ(nav::plan_precision_unsupported(precision), "");
  EXPECT_EQ(nav::plan_precision_unsupported("fp8"), "fp8 plans are not supported by this build");
  const fs::path source = "/models/m.onnx";
  EXPECT_EQ(nav::export_command(nav::format_info("plan-fp32"), source), "parity convert onnx/model.onnx -o plan-fp32/model.plan");
  EXPECT_EQ(nav::export_command(nav::format_info("plan-bf16"), source),
            "parity convert onnx/model.onnx --bf16 -o plan-bf16/model.plan");
  EXPECT_EQ(nav::export_command(nav::format_info("plan-int8"), source),
            "parity convert onnx/model.onnx --int8 --calibration-cache plan-int8/calibration.cache -o plan-int8/model.plan");
}

}  // namespace
}  // namespace parity::testing
