// `parity optimize` end to end: PP-OCRv4 rec (dynamic batch and width) from .npz samples, a
// TorchScript fixture from seeded random data, the failure cells (a crashing runtime, a NaN
// sample, a TorchScript model whose ONNX export fails) recorded as FAIL while the other cells
// complete, and the `package` commands: save, load in a fresh folder, verify, status, profile,
// triton, and a path-escaping .nav refused.
#include <gtest/gtest.h>
#include <zip.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "core/formats/npz.h"
#include "runtime/plan/plan_file.h"
#include "support/require.h"
#include "support/test_support.h"
#include "tools/navigator/status.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;
namespace nav = tools::navigator;

const fs::path kRec = source_dir() / ".cache" / "npm" / "ocr-models" / "assets" / "ch_PP-OCRv4_rec_infer.onnx";
const fs::path kDemo = source_dir() / "models" / "demo.onnx";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Tensor random_tensor(const Shape& shape, uint32_t seed) {
  std::vector<float> values(shape_numel(shape));
  uint32_t state = seed;
  for (auto& v : values) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / static_cast<float>(1u << 24);
  }
  return Tensor::from_vector(shape, values);
}

const nav::StepResult& step_of(const nav::WorkspaceStatus& status, const std::string& format, const std::string& runtime,
                               const std::string& step) {
  const auto* f = status.find_format(format);
  if (!f) throw std::runtime_error("no format " + format);
  const auto* r = f->find_runtime(runtime);
  if (!r) throw std::runtime_error("no runtime " + runtime + " for " + format);
  const auto* s = r->find_step(step);
  if (!s) throw std::runtime_error("no step " + step);
  return *s;
}

TEST(Optimize, PpOcrRecWithDynamicBatchAndWidth) {
  PARITY_REQUIRE_FILE(kRec);
  PARITY_REQUIRE_RUNNER("ort");
  TempDir dir;
  // Three samples of batch 2 with widths 80, 160, 120.
  fs::create_directories(dir / "samples");
  uint32_t seed = 1;
  for (int64_t width : {80, 160, 120})
    write_npz((dir / "samples" / ("w" + std::to_string(width) + ".npz")).string(),
              TensorMap{{"x", random_tensor({2, 3, 48, width}, seed++)}});
  const fs::path ws = dir / "rec.workspace";
  const CommandResult r =
      run_parity({"optimize", kRec.string(), "--samples", (dir / "samples").string(), "--workspace", ws.string(),
                  "--target-formats", "onnx", "onnx-sanitized", "onnx-fp16", "plan-fp32", "plan-fp16", "plan-bf16",
                  "plan-int8", "--runners", "ref", "ort", "--max-batch-size", "2", "--sample-count", "2", "--window-ms", "15", "--max-trials", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "[navigator] onnx on ort: correctness OK")) << r.output;

  // The seed's workspace tree.
  for (const char* path : {"status.yaml", "navigator.log", "model_input/conversion/0.npz", "model_input/conversion/1.npz",
                           "model_input/correctness/0.npz", "model_input/correctness/1.npz", "model_input/profiling/0.npz",
                           "model_output/conversion/0.npz", "model_output/correctness/1.npz", "model_output/profiling/0.npz",
                           "onnx/model.onnx", "onnx/config.yaml", "onnx/reproduce_correctness.sh",
                           "onnx-sanitized/model.onnx", "onnx-fp16/model.onnx", "plan-fp32/model.plan",
                           "plan-fp32/reproduce_export.sh", "plan-fp16/model.plan", "plan-bf16/model.plan",
                           "plan-int8/model.plan", "plan-int8/calibration.cache"})
    EXPECT_TRUE(fs::is_regular_file(ws / path)) << path;
  EXPECT_FALSE(fs::exists(ws / "model_input" / "conversion" / "2.npz"));
  // Samples are single items (batch axis squeezed); conversion spans the width's min and max.
  std::set<Shape> conversion_shapes;
  for (const char* file : {"0.npz", "1.npz"})
    conversion_shapes.insert(read_npz((ws / "model_input" / "conversion" / file).string()).at("x").shape());
  EXPECT_EQ(conversion_shapes, (std::set<Shape>{{3, 48, 80}, {3, 48, 160}}));

  const nav::WorkspaceStatus status = nav::read_status(ws);
  EXPECT_EQ(status.config.batch_dim, 0);
  ASSERT_EQ(status.profiles.size(), 2u);
  EXPECT_EQ(status.profiles[1].axis, 3);
  EXPECT_EQ(status.profiles[1].min, 80);
  EXPECT_EQ(status.profiles[1].max, 160);
  EXPECT_EQ(status.inputs.at(0).shape, (std::vector<int64_t>{-1, 3, 48, -1}));
  EXPECT_FALSE(status.find_format("plan-fp32")->find_runtime("ort"));  // plans run on ref only
  // The plans serve the samples' axis ranges as an optimization profile.
  const auto plan = runtime::plan::summarize_plan(ws / "plan-fp32" / "model.plan");
  ASSERT_EQ(plan.profiles.size(), 1u);
  EXPECT_EQ(plan.profiles[0].text.rfind("profile 0: x [1,3,48,80]..[2,3,48,160]", 0), 0u) << plan.profiles[0].text;
  // Measured error bounds per format (the random samples are seeded): exact copies, float16, bfloat16
  // (8 mantissa bits) and int8 calibrated on the two conversion samples.
  const std::map<std::string, double> max_atol{{"onnx", 1e-3},      {"onnx-sanitized", 1e-3}, {"onnx-fp16", 0.05},
                                               {"plan-fp32", 1e-3}, {"plan-fp16", 0.05},      {"plan-bf16", 0.25},
                                               {"plan-int8", 0.5}};
  for (const auto& [format_name, bound] : max_atol) {
    const char* format = format_name.c_str();
    for (const char* runtime : {"ref", "ort"}) {
      if (format_name.starts_with("plan-") && std::string(runtime) == "ort") continue;
      SCOPED_TRACE(std::string(format) + " on " + runtime);
      EXPECT_EQ(step_of(status, format, runtime, "conversion").state, nav::StepState::kOk);
      const auto& correctness = step_of(status, format, runtime, "correctness");
      ASSERT_EQ(correctness.state, nav::StepState::kOk) << correctness.reason;
      ASSERT_EQ(correctness.tolerances.size(), 1u);
      EXPECT_EQ(correctness.tolerances[0].output, "softmax_11.tmp_0");
      EXPECT_LT(correctness.tolerances[0].atol, bound);
      const auto& performance = step_of(status, format, runtime, "performance");
      ASSERT_EQ(performance.state, nav::StepState::kOk) << performance.reason;
      ASSERT_GE(performance.performance.size(), 1u);
      EXPECT_EQ(performance.performance[0].batch_size, 1);
      EXPECT_GT(performance.performance[0].p50_ms, 0);
      EXPECT_GE(performance.performance[0].p99_ms, performance.performance[0].p50_ms);
      EXPECT_GT(performance.performance[0].throughput, 0);
    }
  }
  // fp16 computation differs measurably from the fp32 source; the plain copy on ref does not.
  EXPECT_GT(step_of(status, "onnx-fp16", "ref", "correctness").tolerances[0].atol, 0);
  EXPECT_EQ(step_of(status, "onnx", "ref", "correctness").tolerances[0].atol, 0);
  // Reduced-precision plans differ measurably from the fp32 source; each config.yaml names its precision.
  for (const char* format : {"plan-fp16", "plan-bf16", "plan-int8"}) {
    EXPECT_GT(step_of(status, format, "ref", "correctness").tolerances[0].atol, 0) << format;
    const std::string config = read_file(ws / format / "config.yaml");
    EXPECT_TRUE(contains(config, "precision: " + std::string(format).substr(5))) << config;
  }
  EXPECT_TRUE(contains(read_file(ws / "plan-int8" / "reproduce_export.sh"),
                       "parity convert onnx/model.onnx --int8 --calibration-cache plan-int8/calibration.cache"));
}

TEST(Optimize, TorchScriptFixtureFromRandomData) {
  PARITY_REQUIRE_RUNNER("torch");
  const fs::path pt = source_dir() / "tests" / "data" / "torch" / "conv_relu_linear.pt";
  TempDir dir;
  const fs::path ws = dir / "ts.workspace";
  const CommandResult r = run_parity({"optimize", pt.string(), "--input-shapes", "x:[2,3,8,8]", "--workspace", ws.string(),
                                      "--target-formats", "torchscript", "onnx", "onnx-sanitized", "--runners", "torch",
                                      "ref", "--sample-count", "2", "--max-batch-size", "2", "--window-ms", "10",
                                      "--max-trials", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nav::WorkspaceStatus status = nav::read_status(ws);
  EXPECT_EQ(status.config.source_kind, "torchscript");
  EXPECT_TRUE(fs::is_regular_file(ws / "torchscript" / "model.pt"));
  EXPECT_EQ(step_of(status, "torchscript", "torch", "correctness").state, nav::StepState::kOk);
  EXPECT_EQ(step_of(status, "torchscript", "torch", "correctness").tolerances[0].atol, 0);
  // The ONNX export (python3-torch) runs on ref and matches LibTorch closely.
  const auto& exported = step_of(status, "onnx", "ref", "correctness");
  ASSERT_EQ(exported.state, nav::StepState::kOk) << exported.reason;
  EXPECT_EQ(exported.tolerances[0].output, "output_0");
  EXPECT_LT(exported.tolerances[0].atol, 1e-4);
  EXPECT_EQ(step_of(status, "onnx-sanitized", "ref", "correctness").state, nav::StepState::kOk);
  EXPECT_EQ(step_of(status, "onnx", "ref", "performance").performance.back().batch_size, 2);
  EXPECT_EQ(status.outputs.at(0).shape, (std::vector<int64_t>{-1, 10}));
}

TEST(Optimize, CrashingRuntimeFailsOneCellOthersComplete) {
  TempDir dir;
  const fs::path ws = dir / "ws";
  const CommandResult r =
      run_with_failing_runners({"optimize", kDemo.string(), "--workspace", ws.string(), "--target-formats", "onnx",
                                "plan-fp32", "--runners", "segfault", "hang", "ref", "--sample-count", "2",
                                "--window-ms", "10", "--max-trials", "3", "--cell-timeout", "4"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const nav::WorkspaceStatus status = nav::read_status(ws);
  const auto& crashed = step_of(status, "onnx", "segfault", "conversion");
  EXPECT_EQ(crashed.state, nav::StepState::kFail);
  EXPECT_TRUE(contains(crashed.reason, "killed by signal 11")) << crashed.reason;
  EXPECT_EQ(step_of(status, "onnx", "segfault", "correctness").state, nav::StepState::kSkipped);
  const auto& hung = step_of(status, "onnx", "hang", "conversion");
  EXPECT_EQ(hung.state, nav::StepState::kFail);
  EXPECT_TRUE(contains(hung.reason, "did not finish within 4 s (--cell-timeout)")) << hung.reason;
  EXPECT_EQ(step_of(status, "onnx", "ref", "correctness").state, nav::StepState::kOk);
  EXPECT_EQ(step_of(status, "plan-fp32", "ref", "performance").state, nav::StepState::kOk);
  EXPECT_TRUE(contains(read_file(ws / "navigator.log"), "onnx on segfault: conversion FAIL: the runner's process was killed"));
  EXPECT_TRUE(contains(r.output, "conversion FAIL")) << r.output;
}

TEST(Optimize, NanSampleFailsCorrectnessWithTheReason) {
  TempDir dir;
  fs::create_directories(dir / "samples");
  Tensor bad = random_tensor({1, 3, 32, 32}, 5);
  bad.data<float>()[7] = std::nanf("");
  write_npz((dir / "samples" / "0.npz").string(), TensorMap{{"input", random_tensor({1, 3, 32, 32}, 4)}});
  write_npz((dir / "samples" / "1.npz").string(), TensorMap{{"input", bad}});
  const fs::path ws = dir / "ws";
  const CommandResult r = run_parity({"optimize", kDemo.string(), "--samples", (dir / "samples").string(), "--workspace",
                                      ws.string(), "--target-formats", "onnx", "--runners", "ref", "--no-profiling"});
  EXPECT_EQ(r.exit_code, 1) << r.output;  // nothing passed
  const nav::WorkspaceStatus status = nav::read_status(ws);
  EXPECT_EQ(step_of(status, "onnx", "ref", "conversion").state, nav::StepState::kOk);
  const auto& correctness = step_of(status, "onnx", "ref", "correctness");
  EXPECT_EQ(correctness.state, nav::StepState::kFail);
  EXPECT_TRUE(contains(correctness.reason, "input 'input' has 1 NaN or infinite values")) << correctness.reason;
  EXPECT_TRUE(contains(read_file(ws / "navigator.log"), "NaN"));
  EXPECT_FALSE(step_of(status, "onnx", "ref", "conversion").reason.size());
}

TEST(Optimize, FailedExportIsRecordedAndTheSourceFormatStillRuns) {
  PARITY_REQUIRE_RUNNER("torch");
  TempDir dir;
  // A TorchScript model with an operator the ONNX exporter does not know (rfft at opset 13).
  write_file(dir / "make.py",
             "import sys, torch\n"
             "class M(torch.nn.Module):\n"
             "    def forward(self, x):\n"
             "        return torch.fft.rfft(x).abs() + 1.0\n"
             "torch.jit.trace(M(), (torch.randn(2, 8),)).save(sys.argv[1])\n");
  const CommandResult made = run_shell("/usr/bin/python3 '" + (dir / "make.py").string() + "' '" + (dir / "fft.pt").string() + "'");
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const fs::path ws = dir / "ws";
  const CommandResult r = run_parity({"optimize", (dir / "fft.pt").string(), "--input-shapes", "x:[2,8]", "--workspace",
                                      ws.string(), "--target-formats", "torchscript", "onnx", "onnx-fp16", "--runners",
                                      "torch", "ref", "--sample-count", "2", "--no-profiling"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const nav::WorkspaceStatus status = nav::read_status(ws);
  const auto& onnx = status.find_format("onnx")->export_step;
  EXPECT_EQ(onnx.state, nav::StepState::kFail);
  EXPECT_TRUE(contains(onnx.reason, "aten::fft_rfft")) << onnx.reason;
  EXPECT_EQ(status.find_format("onnx-fp16")->export_step.reason, "needs the onnx format, which was not produced");
  EXPECT_EQ(step_of(status, "onnx", "ref", "conversion").state, nav::StepState::kSkipped);
  EXPECT_EQ(step_of(status, "torchscript", "torch", "correctness").state, nav::StepState::kOk);
  EXPECT_TRUE(contains(read_file(ws / "navigator.log"), "onnx: export FAIL"));
}

// An ONNX source with a TorchScript copy of the same module (as `parity.navigator.torch.export`
// passes its traced module): the torchscript format runs on LibTorch, fed and read by position, so
// its unnamed outputs are checked against the ONNX outputs of the same position.
TEST(Optimize, TorchScriptCopyOfAnOnnxSourceIsCheckedAgainstItsOutputs) {
  PARITY_REQUIRE_RUNNER("torch");
  const fs::path data = source_dir() / "tests" / "data" / "torch";
  TempDir dir;
  const fs::path ws = dir / "two_heads.workspace";
  const CommandResult r = run_parity({"optimize", (data / "two_heads.onnx").string(), "--torchscript",
                                      (data / "two_heads.pt").string(), "--workspace", ws.string(), "--target-formats",
                                      "onnx", "torchscript", "--runners", "ref", "torch", "--sample-count", "2",
                                      "--window-ms", "10", "--max-trials", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nav::WorkspaceStatus status = nav::read_status(ws);
  EXPECT_EQ(status.config.source_kind, "onnx");
  EXPECT_EQ(fs::path(status.config.torchscript_copy).filename(), "two_heads.pt");
  EXPECT_TRUE(fs::is_regular_file(ws / "torchscript" / "model.pt"));
  const auto& checked = step_of(status, "torchscript", "torch", "correctness");
  ASSERT_EQ(checked.state, nav::StepState::kOk) << checked.reason;
  ASSERT_EQ(checked.tolerances.size(), 2u);
  EXPECT_EQ(checked.tolerances[0].output, "doubled_relu");
  EXPECT_EQ(checked.tolerances[1].output, "row_sum");
  EXPECT_LT(checked.tolerances[0].atol, 1e-5);
  EXPECT_EQ(step_of(status, "torchscript", "torch", "performance").state, nav::StepState::kOk);
  EXPECT_FALSE(status.find_format("torchscript")->find_runtime("ref"));
  EXPECT_TRUE(contains(read_file(ws / "torchscript" / "reproduce_export.sh"), "two_heads.pt"));

  const CommandResult missing = run_parity({"optimize", (data / "two_heads.onnx").string(), "--torchscript",
                                            (dir / "nope.pt").string(), "--workspace", (dir / "w2").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(contains(missing.output, "the TorchScript copy")) << missing.output;
  EXPECT_FALSE(fs::exists(dir / "w2"));
  const CommandResult twice = run_parity({"optimize", (data / "two_heads.pt").string(), "--torchscript",
                                          (data / "two_heads.pt").string(), "--input-shapes", "x:[2,5]", "--workspace",
                                          (dir / "w3").string()});
  EXPECT_EQ(twice.exit_code, 1);
  EXPECT_TRUE(contains(twice.output, "is TorchScript already")) << twice.output;
  const CommandResult without = run_parity({"optimize", (data / "two_heads.onnx").string(), "--target-formats",
                                            "torchscript", "--workspace", (dir / "w4").string()});
  EXPECT_EQ(without.exit_code, 1);
  EXPECT_TRUE(contains(without.output, "--torchscript")) << without.output;
}

TEST(Optimize, BadInputIsOneLineAndNothingIsOverwritten) {
  TempDir dir;
  const fs::path ws = dir / "ws";
  fs::create_directories(ws);
  write_file(ws / "keep.txt", "mine");
  const CommandResult r = run_parity({"optimize", kDemo.string(), "--workspace", ws.string(), "--override-workspace"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.output, "not a navigator workspace")) << r.output;
  EXPECT_EQ(read_file(ws / "keep.txt"), "mine");
  const CommandResult unknown = run_parity({"optimize", kDemo.string(), "--workspace", (dir / "w2").string(),
                                            "--target-formats", "tensorrt"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_TRUE(contains(unknown.output, "unknown format 'tensorrt'")) << unknown.output;
  const CommandResult missing = run_parity({"optimize", (dir / "nope.onnx").string()});
  EXPECT_EQ(missing.exit_code, 1);
}

// `optimize --report` writes the package report at the end of the run, the same as `package status
// --report` of the workspace; a bad report name fails before any work.
TEST(Optimize, ReportAtTheEndOfTheRun) {
  TempDir dir;
  const fs::path ws = dir / "ws";
  const CommandResult bad = run_parity({"optimize", kDemo.string(), "--workspace", ws.string(), "--report",
                                        (dir / "r.txt").string()});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_FALSE(fs::exists(ws)) << "nothing done before the report name is checked";
  for (const char* name : {"r.html", "r.json"}) {  // the JSON last: the run the workspace keeps
    const CommandResult r = run_parity({"optimize", kDemo.string(), "--workspace", ws.string(), "--override-workspace",
                                        "--target-formats", "onnx", "plan-fp16", "--runners", "ref", "--sample-count", "2",
                                        "--window-ms", "10", "--max-trials", "3", "--report", (dir / name).string()});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "Wrote report: " + (dir / name).string())) << r.output;
  }
  ASSERT_EQ(run_parity({"package", "status", ws.string(), "--report", (dir / "status.json").string()}).exit_code, 0);
  const auto sections = [](const std::string& text) {
    const nlohmann::json j = nlohmann::json::parse(text);
    return j["sections"];
  };
  const nlohmann::json from_optimize = sections(read_file(dir / "r.json"));
  ASSERT_EQ(from_optimize.size(), 1u);
  EXPECT_EQ(from_optimize[0]["type"], "package");
  ASSERT_EQ(from_optimize[0]["formats"].size(), 2u);
  EXPECT_EQ(from_optimize[0]["formats"][1]["format"], "plan-fp16");
  EXPECT_EQ(from_optimize[0]["formats"][1]["runtimes"][0]["correctness"]["status"], "OK");
  EXPECT_TRUE(from_optimize[0]["formats"][1]["runtimes"][0]["performance"].contains("performance"));
  // The same cells and statuses as the workspace's own report (the figures are the same run's).
  EXPECT_EQ(from_optimize, sections(read_file(dir / "status.json")));
  const std::string page = read_file(dir / "r.html");
  EXPECT_TRUE(contains(page, "Content-Security-Policy"));
  EXPECT_TRUE(contains(page, "<table class=\"package-matrix\">"));
  EXPECT_TRUE(contains(page, "data-kind=\"latency\""));
}

TEST(Package, SaveLoadVerifyProfileAndTritonFromTheCommandLine) {
  TempDir dir;
  const fs::path ws = dir / "ws";
  ASSERT_EQ(run_parity({"optimize", kDemo.string(), "--workspace", ws.string(), "--target-formats", "onnx", "plan-fp32",
                        "plan-fp16", "plan-bf16", "plan-int8", "--runners", "ref", "--sample-count", "2", "--window-ms",
                        "10", "--max-trials", "3"})
                .exit_code,
            0);
  {
    const nav::WorkspaceStatus status = nav::read_status(ws);
    for (const char* format : {"plan-fp16", "plan-bf16", "plan-int8"}) {
      const auto& correctness = step_of(status, format, "ref", "correctness");
      EXPECT_EQ(correctness.state, nav::StepState::kOk) << format << ": " << correctness.reason;
      ASSERT_EQ(correctness.tolerances.size(), 1u) << format;
      EXPECT_GT(correctness.tolerances[0].atol, 0) << format;
      EXPECT_LT(correctness.tolerances[0].atol, 0.05) << format;
    }
  }
  const fs::path nav_file = dir / "demo.nav";
  const CommandResult verified = run_parity({"package", "verify", ws.string(), "--format", "onnx", "--runtime", "ref"});
  ASSERT_EQ(verified.exit_code, 0) << verified.output;
  ASSERT_EQ(run_parity({"package", "save", ws.string(), "-o", nav_file.string()}).exit_code, 0);
  const CommandResult again = run_parity({"package", "save", ws.string(), "-o", nav_file.string()});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_TRUE(contains(again.output, "--override")) << again.output;

  const CommandResult loaded = run_parity({"package", "load", nav_file.string(), "-o", (dir / "fresh").string()});
  ASSERT_EQ(loaded.exit_code, 0) << loaded.output;
  EXPECT_TRUE(contains(loaded.output, "re-test")) << loaded.output;
  const nav::WorkspaceStatus fresh = nav::read_status(dir / "fresh");
  EXPECT_TRUE(fresh.find_format("onnx")->find_runtime("ref")->verified());
  EXPECT_EQ(step_of(fresh, "plan-fp32", "ref", "correctness").state, nav::StepState::kOk);

  // Exported again here (the derived formats), re-tested and profiled.
  const CommandResult reexported = run_parity({"package", "load", nav_file.string(), "-o", (dir / "fresh2").string(),
                                               "--retest-conversions", "--run-profiling"});
  ASSERT_EQ(reexported.exit_code, 0) << reexported.output;
  EXPECT_TRUE(contains(reexported.output, "[navigator] plan-fp32: export OK")) << reexported.output;
  EXPECT_TRUE(contains(reexported.output, "[navigator] plan-int8: export OK")) << reexported.output;
  EXPECT_TRUE(fs::is_regular_file(dir / "fresh2" / "plan-int8" / "calibration.cache"));
  EXPECT_TRUE(contains(reexported.output, "[navigator] plan-fp32 on ref: performance OK")) << reexported.output;
  EXPECT_FALSE(contains(reexported.output, "[navigator] onnx: export")) << "the package's own onnx was replaced";
  // A reproduce script re-runs its step through `parity package retest`.
  const CommandResult reproduced = run_shell("PATH='" + fs::path(PARITY_BINARY).parent_path().string() + "':$PATH sh '" +
                                             (ws / "plan-fp32" / "reproduce_correctness.sh").string() + "'");
  EXPECT_EQ(reproduced.exit_code, 0) << reproduced.output;
  EXPECT_TRUE(contains(reproduced.output, "plan-fp32 on ref: correctness OK")) << reproduced.output;
  // The int8 plan is rebuilt by `parity convert` from the calibration cache kept in its folder.
  fs::remove(ws / "plan-int8" / "model.plan");
  const CommandResult rebuilt = run_shell("PATH='" + fs::path(PARITY_BINARY).parent_path().string() + "':$PATH sh '" +
                                          (ws / "plan-int8" / "reproduce_export.sh").string() + "'");
  EXPECT_EQ(rebuilt.exit_code, 0) << rebuilt.output;
  EXPECT_TRUE(contains(rebuilt.output, "tensor ranges from calibration cache")) << rebuilt.output;
  EXPECT_TRUE(contains(rebuilt.output, " int8")) << rebuilt.output;
  EXPECT_TRUE(fs::is_regular_file(ws / "plan-int8" / "model.plan"));

  const CommandResult status = run_parity({"package", "status", nav_file.string(), "--report", (dir / "r.json").string()});
  ASSERT_EQ(status.exit_code, 0) << status.output;
  EXPECT_TRUE(contains(status.output, "best by min-latency:")) << status.output;
  const std::string report = read_file(dir / "r.json");
  EXPECT_TRUE(contains(report, "\"type\": \"package\"")) << report.substr(0, 400);
  EXPECT_TRUE(contains(report, "\"p99_ms\"")) << report.substr(0, 400);
  ASSERT_EQ(run_parity({"package", "status", nav_file.string(), "--report", (dir / "r.html").string()}).exit_code, 0);
  const std::string page = read_file(dir / "r.html");
  EXPECT_TRUE(contains(page, "Content-Security-Policy"));
  EXPECT_TRUE(contains(page, "Measured tolerances"));
  EXPECT_TRUE(contains(page, "plan-fp32"));
  const CommandResult profiled = run_parity({"package", "profile", nav_file.string(), "--window-ms", "5", "--max-trials", "3"});
  ASSERT_EQ(profiled.exit_code, 0) << profiled.output;
  const CommandResult triton = run_parity({"package", "triton", nav_file.string(), "--model-repository",
                                           (dir / "repo").string(), "--name", "demo"});
  ASSERT_EQ(triton.exit_code, 0) << triton.output;
  EXPECT_TRUE(fs::is_regular_file(dir / "repo" / "demo" / "1" / "model.onnx"));
  const std::string config = read_file(dir / "repo" / "demo" / "config.pbtxt");
  EXPECT_TRUE(contains(config, "backend: \"onnxruntime\"")) << config;
  EXPECT_TRUE(contains(config, "max_batch_size: 1")) << config;

  // A .nav whose entry climbs out of the target folder is refused; nothing lands outside.
  int error = 0;
  zip_t* archive = zip_open((dir / "evil.nav").c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  ASSERT_TRUE(archive);
  static const std::string kBody = "format_version: 1\n";
  zip_file_add(archive, "status.yaml", zip_source_buffer(archive, kBody.data(), kBody.size(), 0), 0);
  zip_file_add(archive, "../evil.txt", zip_source_buffer(archive, kBody.data(), kBody.size(), 0), 0);
  ASSERT_EQ(zip_close(archive), 0);
  const CommandResult evil = run_parity({"package", "load", (dir / "evil.nav").string(), "-o", (dir / "target").string()});
  EXPECT_EQ(evil.exit_code, 1);
  EXPECT_TRUE(contains(evil.output, "entry '../evil.txt' has a '..' component")) << evil.output;
  EXPECT_FALSE(fs::exists(dir / "evil.txt"));
  EXPECT_FALSE(fs::exists(dir / "target"));
}

}  // namespace
}  // namespace parity::testing
