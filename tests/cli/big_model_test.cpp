// End-to-end tests of the model-editing commands on a model past protobuf's 2 GiB limit: 2.5 GiB of
// float32 weights in a sparse external file (no disk blocks, nothing to read), so every command
// must keep the weights external, never inline or compute them, and stay small in memory. Then a
// plan past 2 GiB (BigPlan): built, saved, loaded and run, with values checked beyond 2 GiB.
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "../model/test_models.h"
#include "model/external_data.h"
#include "model/model.h"
#include "runtime/session.h"
#include "support/test_support.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing::run_parity;

constexpr int64_t kCount = (int64_t{5} << 30) / 2 / 4;  // 2.5 GiB of float32
constexpr int64_t kBytes = kCount * 4;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// y = (x + Gather(W, idx)) + Gather(Neg(W), idx), W [kCount] external in big.bin (sparse).
// Gather(W, idx) folds to two numbers; Neg(W) would be another 2.5 GiB and must not be computed.
fs::path write_big_model(const fs::path& dir) {
  {
    std::ofstream(dir / "big.bin", std::ios::binary).put('\0');
    EXPECT_EQ(::truncate((dir / "big.bin").c_str(), kBytes), 0);
  }
  onnx::ModelProto m = testing::empty_model();
  auto* g = m.mutable_graph();
  testing::add_tensor_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {2});
  testing::add_tensor_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {2});
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(kCount);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [key, value] : {std::pair<std::string, std::string>{"location", "big.bin"}, {"offset", "0"},
                            {"length", std::to_string(kBytes)}}) {
    auto* kv = w->add_external_data();
    kv->set_key(key);
    kv->set_value(value);
  }
  auto* idx = g->add_initializer();
  idx->set_name("idx");
  idx->set_data_type(onnx::TensorProto::INT64);
  idx->add_dims(2);
  idx->add_int64_data(0);
  idx->add_int64_data(kCount - 1);
  testing::add_node(g, "Gather", {"W", "idx"}, {"g"}, "gather_w");
  testing::add_node(g, "Add", {"x", "g"}, {"y1"}, "add_g");
  testing::add_node(g, "Neg", {"W"}, {"neg_w"}, "neg_w");
  testing::add_node(g, "Gather", {"neg_w", "idx"}, {"h"}, "gather_neg");
  testing::add_node(g, "Add", {"y1", "h"}, {"y"}, "add_h");
  testing::write_model(m, dir / "big.onnx");
  return dir / "big.onnx";
}

// Runs parity under /usr/bin/time; returns the output and the peak resident set in MiB (-1 when
// /usr/bin/time is missing).
std::pair<testing::CommandResult, double> run_measured(const std::vector<std::string>& args) {
  if (!fs::exists("/usr/bin/time")) return {run_parity(args), -1.0};
  std::string cmd = "/usr/bin/time -f 'maxrss_kib=%M' '" + std::string(PARITY_BINARY) + "'";
  for (const auto& a : args) cmd += " '" + a + "'";  // the arguments here hold no quotes
  const testing::CommandResult r = testing::run_shell(cmd);
  const size_t at = r.output.rfind("maxrss_kib=");
  const double mib = at == std::string::npos ? -1.0 : std::stod(r.output.substr(at + 11)) / 1024.0;
  return {r, mib};
}

// Checks that `path` loads, passes libonnx's checker and keeps W external at its full size.
void expect_big_and_external(const fs::path& path) {
  model::Model m = model::load_model(path).value();
  bool found = false;
  for (const auto& t : m.proto().graph().initializer()) {
    if (t.name() != "W") continue;
    found = true;
    EXPECT_TRUE(model::has_external_data(t)) << path;
    EXPECT_EQ(t.dims(0), kCount);
  }
  EXPECT_TRUE(found) << path << " lost W";
  // All of W's bytes are in the new side file (still sparse: copying skips holes).
  const fs::path data = path.string() + ".data";
  ASSERT_TRUE(fs::exists(data));
  EXPECT_GE(fs::file_size(data), static_cast<uintmax_t>(kBytes));
  EXPECT_LT(fs::file_size(path), 64u * 1024) << "weights inlined into " << path;
  EXPECT_NO_THROW(onnx::checker::check_model(path.string()));
}

class BigModel : public ::testing::Test {
 protected:
  void SetUp() override { model_ = write_big_model(tmp_.path()); }
  testing::TempDir tmp_;
  fs::path model_;
};

TEST_F(BigModel, SanitizeFoldsSmallResultsAndLeavesTheBigWeightAlone) {
  const auto out = tmp_ / "sanitized.onnx";
  auto [r, rss] = run_measured({"surgeon", "sanitize", model_.string(), "--fold-constants", "--fold-size-threshold",
                                "1048576", "--cleanup", "-o", out.string(), "--external-data"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_big_and_external(out);
  const model::Model m = model::load_model(out).value();
  // gather_w folded into an initializer; Neg(W) stayed a node (never computed).
  std::vector<std::string> ops;
  for (const auto& n : m.proto().graph().node()) ops.push_back(n.name());
  EXPECT_EQ(ops, (std::vector<std::string>{"add_g", "neg_w", "gather_neg", "add_h"})) << r.output;
  if (rss > 0) EXPECT_LT(rss, 512.0) << "sanitize read or computed the 2.5 GiB weight\n" << r.output;
}

TEST_F(BigModel, ExtractKeepsTheBigWeightExternal) {
  const auto out = tmp_ / "cut.onnx";
  auto [r, rss] = run_measured({"surgeon", "extract", model_.string(), "--inputs", "x:[2]:float32", "--outputs",
                                "y1:float32", "-o", out.string(), "--external-data"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_big_and_external(out);
  EXPECT_EQ(model::load_model(out).value().proto().graph().node_size(), 2);
  if (rss > 0) EXPECT_LT(rss, 512.0) << r.output;
}

TEST_F(BigModel, ConvertWritesExternalDataAndRefusesToInline) {
  const auto out = tmp_ / "converted.onnx";
  auto [r, rss] = run_measured({"convert", model_.string(), "--opset", "17", "-o", out.string(), "--external-data"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_big_and_external(out);
  EXPECT_EQ(model::load_model(out).value().opset(""), 17);
  if (rss > 0) EXPECT_LT(rss, 512.0) << r.output;
  // Without --external-data the result cannot fit protobuf: one clear error, nothing written.
  const auto inline_out = tmp_ / "inline.onnx";
  r = run_parity({"convert", model_.string(), "-o", inline_out.string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "2 GiB")) << r.output;
  EXPECT_FALSE(fs::exists(inline_out));
}

TEST_F(BigModel, WeightStripDropsTheBigWeight) {
  const auto out = tmp_ / "stripped.onnx";
  auto [r, rss] = run_measured({"surgeon", "weight-strip", model_.string(), "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Stripped 1 tensors (" + std::to_string(kBytes) + " bytes)")) << r.output;
  EXPECT_LT(fs::file_size(out), 4096u);
  EXPECT_EQ(fs::file_size(tmp_ / "stripped.onnx.weightless"), 0u);
  EXPECT_NO_THROW(onnx::checker::check_model(out.string()));
  if (rss > 0) EXPECT_LT(rss, 512.0) << r.output;
}

// Reconstructing 2.5 GiB would generate and write 2.5 GB of random numbers (tens of seconds and
// real disk), so the round trip runs on a 48 MiB external weight; the code path is the same.
TEST(BigModelReconstruct, StripAndReconstructKeepWeightsExternal) {
  testing::TempDir tmp;
  constexpr int64_t kSmall = int64_t{12} << 20;  // floats: 48 MiB
  onnx::ModelProto m = testing::add_relu_model({0.f});
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->set_dims(0, kSmall);
  w->clear_raw_data();
  {
    std::ofstream(tmp / "w.bin", std::ios::binary).put('\0');
    ASSERT_EQ(::truncate((tmp / "w.bin").c_str(), kSmall * 4), 0);
  }
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = w->add_external_data();
  kv->set_key("location");
  kv->set_value("w.bin");
  testing::write_model(m, tmp / "m.onnx");
  auto r = run_parity({"surgeon", "weight-strip", (tmp / "m.onnx").string(), "-o", (tmp / "s.onnx").string(),
                       "--strip-size-threshold", "1024"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_parity({"surgeon", "weight-reconstruct", (tmp / "s.onnx").string(), "-o", (tmp / "r.onnx").string(),
                  "--external-data"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(fs::file_size(tmp / "r.onnx.data"), static_cast<uintmax_t>(kSmall * 4));
  EXPECT_LT(fs::file_size(tmp / "r.onnx"), 4096u);
  EXPECT_NO_THROW(onnx::checker::check_model((tmp / "r.onnx").string()));
}

// A plan past 2 GiB: y = Gather(W, idx) with W 2.1 GiB of float32 in a sparse external file that
// holds real values at three places, one of them past byte 2^31 (where a 32-bit offset or size
// would wrap). idx is an input, so no build step can fold W away: the plan keeps all of it as a
// constant. Disk: the model's side file and the plan are sparse (a few MiB of blocks where the
// file system has holes, else 2 x 2.1 GiB while the test runs; both are removed at its end).
constexpr int64_t kPlanCount = (int64_t{21} << 30) / 10 / 4;  // 2.1 GiB of float32
constexpr int64_t kPlanIndices[3] = {0, (int64_t{1} << 29) + 12345, kPlanCount - 1};  // 2nd: byte 2 GiB + 49380
constexpr float kPlanValues[3] = {1.5f, -2.25f, 3.125f};

fs::path write_big_gather_model(const fs::path& dir) {
  {
    std::ofstream(dir / "w.bin", std::ios::binary).put('\0');
    EXPECT_EQ(::truncate((dir / "w.bin").c_str(), kPlanCount * 4), 0);
    const int fd = ::open((dir / "w.bin").c_str(), O_WRONLY);
    EXPECT_GE(fd, 0);
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(::pwrite(fd, &kPlanValues[i], 4, static_cast<off_t>(kPlanIndices[i] * 4)), 4);
    ::close(fd);
  }
  onnx::ModelProto m = testing::empty_model();
  auto* g = m.mutable_graph();
  testing::add_tensor_info(g->add_input(), "idx", onnx::TensorProto::INT64, {3});
  testing::add_tensor_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {3});
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(kPlanCount);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = w->add_external_data();
  kv->set_key("location");
  kv->set_value("w.bin");
  testing::add_node(g, "Gather", {"W", "idx"}, {"y"}, "gather_w");
  testing::write_model(m, dir / "big.onnx");
  return dir / "big.onnx";
}

std::vector<float> gather_three(const fs::path& model) {
  const runtime::Session session = runtime::Session::create(model).value();
  TensorMap feed;
  feed.set("idx", Tensor::from_vector<int64_t>({3}, {kPlanIndices[0], kPlanIndices[1], kPlanIndices[2]}));
  return session.run(feed).at("y").to_vector<float>();
}

TEST(BigPlan, BuildsSavesLoadsAndRunsPast2GiB) {
  testing::TempDir tmp;
  const fs::path model = write_big_gather_model(tmp.path());
  const std::vector<float> expected(std::begin(kPlanValues), std::end(kPlanValues));
  EXPECT_EQ(gather_three(model), expected) << "the ONNX model itself";

  const fs::path plan = tmp / "big.plan";
  auto [convert, convert_rss] = run_measured({"convert", model.string(), "-o", plan.string()});
  ASSERT_EQ(convert.exit_code, 0) << convert.output;
  ASSERT_GT(fs::file_size(plan), static_cast<uintmax_t>(kPlanCount * 4)) << "W is not in the plan";
  // One copy of W at most (the source mapping); the writer streams it instead of gathering it.
  if (convert_rss > 0) EXPECT_LT(convert_rss, 3.0 * 1024) << convert.output;

  EXPECT_EQ(gather_three(plan), expected) << "the plan, through the C++ API";
  auto [run, run_rss] = run_measured({"run", plan.string(), "--ref", "--val-range", "idx:[0,1000]"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "PASSED")) << run.output;
  if (run_rss > 0) EXPECT_LT(run_rss, 3.0 * 1024) << "the plan's weights were copied\n" << run.output;
  // And a truncated plan of that size is still one clear line.
  ASSERT_EQ(::truncate(plan.c_str(), static_cast<off_t>(fs::file_size(plan) - 4096)), 0);
  const auto refused = run_parity({"run", plan.string(), "--ref"});
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_TRUE(contains(refused.output, "truncated")) << refused.output;
}

}  // namespace
}  // namespace parity
