// Writes are atomic and never replace an input: a parity killed with SIGKILL while saving a large
// RunResults file or plan leaves the previous file (or none), and a command refuses to write over a
// file it read (a model, its data, a plan).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <onnx/onnx_pb.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <thread>

#include "core/formats/polygraphy_json.h"
#include "runtime/plan/plan_file.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

// y = Identity(x) with x float32 of dynamic length: --input-shapes makes the output as large as
// the test needs without a large file in the repository.
void write_identity_model(const fs::path& path) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("big_identity");
  auto value = [](onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    auto* tensor = v->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    tensor->mutable_shape()->add_dim()->set_dim_param("n");
  };
  value(g->add_input(), "x");
  value(g->add_output(), "y");
  onnx::NodeProto* node = g->add_node();
  node->set_op_type("Identity");
  node->add_input("x");
  node->add_output("y");
  std::ofstream out(path, std::ios::binary);
  ASSERT_TRUE(model.SerializeToOstream(&out));
}

// Starts parity with the given arguments (output discarded); returns its pid.
pid_t spawn_parity(const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv{const_cast<char*>(PARITY_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execv(PARITY_BINARY, argv.data());
    ::_exit(127);
  }
  return pid;
}

// Polls until the child starts writing `out`: a temporary file appears beside it, or the target
// itself changes (size or inode), or the child exits.
void wait_until_writing(const fs::path& dir, const fs::path& out, pid_t pid) {
  struct stat before {};
  const bool existed = ::stat(out.c_str(), &before) == 0;
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != 0) return;
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().filename().string().rfind("." + out.filename().string() + ".parity-tmp-", 0) == 0) return;
    struct stat now {};
    const bool exists = ::stat(out.c_str(), &now) == 0;
    if (exists != existed || (exists && (now.st_size != before.st_size || now.st_ino != before.st_ino))) return;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
}

std::vector<std::string> save_args(const fs::path& model, const fs::path& out, int seed) {
  // 4M floats: about 22 MB of base64 JSON, long enough to be killed mid-write.
  return {"run", model.string(), "--ref", "--seed", std::to_string(seed), "--input-shapes", "x:[4000000]",
          "--save-outputs", out.string()};
}

TEST(AtomicWriteTest, KilledSaveOutputsLeavesOldFileOrNone) {
  TempDir dir;
  const fs::path model = dir / "identity.onnx";
  write_identity_model(model);
  const fs::path out = dir / "big.json";

  // Killed before any complete file exists: the target is absent or complete, never truncated.
  std::mt19937 rng(20240518);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(run_parity(save_args(model, out, 1)).exit_code, 0);
  const auto full_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  std::optional<std::string> previous = read_file(out);  // what the target holds before a round
  ASSERT_GT(previous->size(), 20u << 20);

  int killed_mid_run = 0;
  for (int round = 0; round < 6; ++round) {
    if (round % 3 == 0) {  // some rounds start with no file at all
      fs::remove(out);
      previous.reset();
    }
    const pid_t pid = spawn_parity(save_args(model, out, 2 + round));
    int delay_ms = 0;
    if (round % 2 == 0) {  // anywhere in the run
      delay_ms = std::uniform_int_distribution<int>(static_cast<int>(full_ms / 10), static_cast<int>(full_ms))(rng);
    } else {  // while the file is being written: the window a plain write would truncate
      wait_until_writing(dir.path(), out, pid);
      delay_ms = std::uniform_int_distribution<int>(0, 30)(rng);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    killed_mid_run += WIFSIGNALED(status) ? 1 : 0;
    SCOPED_TRACE("round " + std::to_string(round) + ", killed after " + std::to_string(delay_ms) + " ms");
    if (!fs::exists(out)) {
      EXPECT_FALSE(previous.has_value()) << "the old file disappeared";
      continue;
    }
    const std::string now = read_file(out);
    if (now != previous) {
      // The new run renamed its file into place before the kill: the file must be whole.
      const RunResults results = read_run_results(out.string());
      ASSERT_EQ(results.size(), 1u);
      ASSERT_EQ(results.runs[0].second.size(), 1u);
      EXPECT_EQ(results.runs[0].second[0].outputs.at("y").numel(), 4000000);
    }
    previous = now;
  }
  EXPECT_GT(killed_mid_run, 0) << "no round was killed mid-run: the test did not test anything";
  // Leftover temporaries of killed runs are hidden files beside the target, never the target.
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name == "identity.onnx" || name == "big.json" || name.rfind(".big.json.parity-tmp-", 0) == 0)
        << name;
  }
}

// y = Add(x, w) with a constant w of `elements` float32s (seeded): a plan as large as the test needs.
void write_large_weights_model(const fs::path& path, int64_t elements) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("large_weights");
  auto value = [&](onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    auto* tensor = v->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    tensor->mutable_shape()->add_dim()->set_dim_value(elements);
  };
  value(g->add_input(), "x");
  value(g->add_output(), "y");
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(elements);
  std::vector<float> values(static_cast<size_t>(elements));
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (auto& v : values) v = dist(rng);
  w->set_raw_data(values.data(), values.size() * sizeof(float));
  onnx::NodeProto* node = g->add_node();
  node->set_op_type("Add");
  node->add_input("x");
  node->add_input("w");
  node->add_output("y");
  std::ofstream out(path, std::ios::binary);
  ASSERT_TRUE(model.SerializeToOstream(&out));
}

TEST(AtomicWriteTest, KilledPlanSaveLeavesOldPlanOrNone) {
  TempDir dir;
  const fs::path model = dir / "weights.onnx";
  write_large_weights_model(model, 8 << 20);  // 32 MiB of weights
  const fs::path out = dir / "big.plan";
  const std::vector<std::string> args{"convert", model.string(), "-o", out.string()};
  ASSERT_EQ(run_parity(args).exit_code, 0);
  std::optional<std::string> previous = read_file(out);
  ASSERT_GT(previous->size(), 32u << 20);

  std::mt19937 rng(20261123);
  int killed_while_writing = 0;
  for (int round = 0; round < 4; ++round) {
    if (round == 2) {  // later rounds start with no plan at all
      fs::remove(out);
      previous.reset();
    }
    const pid_t pid = spawn_parity(args);
    wait_until_writing(dir.path(), out, pid);
    const int delay_ms = std::uniform_int_distribution<int>(0, 20)(rng);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    killed_while_writing += WIFSIGNALED(status) ? 1 : 0;
    SCOPED_TRACE("round " + std::to_string(round) + ", killed " + std::to_string(delay_ms) + " ms into the write");
    if (!fs::exists(out)) {
      EXPECT_FALSE(previous.has_value()) << "the old plan disappeared";
      continue;
    }
    const std::string now = read_file(out);
    // Either the old plan, or a new one that was complete before it was renamed into place.
    if (now != previous) EXPECT_TRUE(runtime::plan::load_plan(out).is_ok()) << "a truncated plan of " << now.size() << " bytes";
    previous = now;
  }
  EXPECT_GT(killed_while_writing, 0) << "no round was killed mid-run: the test did not test anything";
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name == "weights.onnx" || name == "big.plan" || name.rfind(".big.plan.parity-tmp-", 0) == 0) << name;
  }
}

TEST(AtomicWriteTest, RefusesToWriteOverAnInputOfTheSameCommand) {
  TempDir dir;
  const fs::path model = dir / "identity.onnx";
  write_identity_model(model);
  const fs::path inputs = dir / "inputs.json";
  ASSERT_EQ(run_parity({"run", model.string(), "--ref", "--input-shapes", "x:[4]", "--save-inputs", inputs.string()})
                .exit_code,
            0);
  const std::string before = read_file(inputs);

  CommandResult r = run_parity({"run", model.string(), "--ref", "--load-inputs", inputs.string(), "--save-inputs",
                                inputs.string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("refusing to write " + inputs.string() + ": it is an input of this command"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(read_file(inputs), before);

  // The same file under another spelling (a hard link) is still the input.
  const fs::path alias = dir / "alias.onnx";
  fs::create_hard_link(model, alias);
  r = run_parity({"run", model.string(), "--ref", "--input-shapes", "x:[4]", "--save-outputs", alias.string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("is the same file as " + model.string()), std::string::npos) << r.output;

  // A plan is an input too: --save-outputs over the plan being run used to replace it with JSON.
  const fs::path plan = dir / "identity.plan";
  ASSERT_EQ(run_parity({"convert", model.string(), "-o", plan.string()}).exit_code, 0);
  const std::string plan_bytes = read_file(plan);
  r = run_parity({"run", plan.string(), "--ref", "--input-shapes", "x:[4]", "--save-outputs", plan.string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("refusing to write " + plan.string() + ": it is an input of this command"), std::string::npos)
      << r.output;
  EXPECT_EQ(read_file(plan), plan_bytes);
}

}  // namespace
}  // namespace parity::testing
