// `parity debug reduce` end to end on PP-OCRv4 det: a runner that computes one chosen node wrong
// (the test extension's --plugin-ref-wrong, like a mis-registered kernel) is found by the built-in
// check and by an external --check command, in bisect and linear mode, and the reduced model
// fails by itself.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <filesystem>

#include "model/model.h"
#include "support/model_builder.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity {
namespace {

using testing::run_parity;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string det_model() {
  return (testing::source_dir() / ".cache/npm/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx").string();
}
std::string extension() { return std::string(PARITY_TEST_EXTENSION_DIR) + "/good/libparity_test_extension.so"; }

// A Conv early in the backbone: its error reaches the output only in relative terms (the random
// inputs drive the sigmoid output to ~1e-11), hence --atol 0 --rtol 1e-3 everywhere.
constexpr const char* kWrongConv = "p2o.Conv.20";

struct Reduced {
  testing::CommandResult result;
  onnx::ModelProto model;
};

Reduced reduce(const testing::TempDir& tmp, std::vector<std::string> extra, const std::string& model = det_model()) {
  std::vector<std::string> args{"--extension", extension(), "debug", "reduce", model, "-o",
                                (tmp / "reduced.onnx").string(), "--iter-artifact", (tmp / "iter.onnx").string(), "--save-debug-replay",
                                (tmp / "replay.json").string(), "--atol", "0", "--rtol", "1e-3"};
  if (model == det_model()) args.insert(args.end(), {"--input-shapes", "x:[1,3,64,64]"});
  args.insert(args.end(), extra.begin(), extra.end());
  Reduced reduced{run_parity(args), {}};
  if (reduced.result.exit_code == 0) reduced.model = model::load_model(tmp / "reduced.onnx").value().proto();
  return reduced;
}

void expect_single_node(const Reduced& reduced, const std::string& name) {
  ASSERT_EQ(reduced.result.exit_code, 0) << reduced.result.output;
  ASSERT_EQ(reduced.model.graph().node_size(), 1) << reduced.result.output;
  EXPECT_EQ(reduced.model.graph().node(0).name(), name);
}

// The reduced model shows the failure alone, on fresh random inputs.
void expect_fails_alone(const testing::TempDir& tmp, const std::string& name) {
  const auto r = run_parity({"--extension", extension(), "run", (tmp / "reduced.onnx").string(), "--ref", "--plugin-ref",
                             "--plugin-ref-wrong", name, "--atol", "0", "--rtol", "1e-3"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const auto right = run_parity({"--extension", extension(), "run", (tmp / "reduced.onnx").string(), "--ref",
                                 "--plugin-ref", "--atol", "0", "--rtol", "1e-3"});
  EXPECT_EQ(right.exit_code, 0) << right.output;
}

TEST(DebugReduceCommand, BisectWithRunnersEndsWithTheWrongNodeAlone) {
  PARITY_REQUIRE_FILE(det_model());
  testing::TempDir tmp;
  const auto reduced = reduce(tmp, {"--ref", "--plugin-ref", "--plugin-ref-wrong", kWrongConv, "--min-good",
                                    (tmp / "good.onnx").string()});
  expect_single_node(reduced, kWrongConv);
  EXPECT_TRUE(contains(reduced.result.output, "Reduced ")) << reduced.result.output;
  expect_fails_alone(tmp, kWrongConv);
  // --min-good: a model without the failure.
  const auto good = run_parity({"--extension", extension(), "run", (tmp / "good.onnx").string(), "--ref", "--plugin-ref",
                                "--plugin-ref-wrong", kWrongConv, "--atol", "0", "--rtol", "1e-3"});
  EXPECT_EQ(good.exit_code, 0) << good.output;
  EXPECT_FALSE(std::filesystem::exists(tmp / "iter.onnx"));  // the iteration artifact is removed

  // The replay answers every check of the same reduction: nothing runs again.
  const auto replayed = reduce(tmp, {"--load-debug-replay", (tmp / "replay.json").string(), "--ref", "--plugin-ref",
                                     "--plugin-ref-wrong", kWrongConv});
  expect_single_node(replayed, kWrongConv);
  EXPECT_TRUE(contains(replayed.result.output, "(from the replay)")) << replayed.result.output;
  EXPECT_TRUE(contains(replayed.result.output, " checks (0 run)")) << replayed.result.output;
}

TEST(DebugReduceCommand, LinearWithRunnersEndsWithTheWrongNodeAlone) {
  PARITY_REQUIRE_FILE(det_model());
  testing::TempDir tmp;
  // Linear mode runs one check per node: on the 52 nodes of three backbone blocks around the
  // wrong Conv (with their squeeze-and-excitation branches), not all 330.
  const std::string slice = (tmp / "slice.onnx").string();
  const auto extracted = run_parity({"surgeon", "extract", det_model(), "--inputs", "p2o.Add.131:[1,192,4,4]:float32",
                                     "--outputs", "conv2d_466.tmp_0:auto", "-o", slice});
  ASSERT_EQ(extracted.exit_code, 0) << extracted.output;
  const auto reduced =
      reduce(tmp, {"--mode", "linear", "--ref", "--plugin-ref", "--plugin-ref-wrong", kWrongConv}, slice);
  expect_single_node(reduced, kWrongConv);
  expect_fails_alone(tmp, kWrongConv);
}

TEST(DebugReduceCommand, ExternalCheckGetsTheCandidateAndItsRecordedInputs) {
  PARITY_REQUIRE_FILE(det_model());
  testing::TempDir tmp;
  const auto reduced = reduce(tmp, {"--artifacts", (tmp / "iter.onnx").string(), "--artifacts-dir",
                                    (tmp / "sorted").string(), "--check", PARITY_BINARY, "--extension", extension(),
                                    "run", "{model}", "--ref", "--plugin-ref", "--plugin-ref-wrong", kWrongConv,
                                    "--atol", "0", "--rtol", "1e-3", "--load-inputs", "{inputs}"});
  expect_single_node(reduced, kWrongConv);
  expect_fails_alone(tmp, kWrongConv);
  EXPECT_FALSE(std::filesystem::is_empty(tmp / "sorted" / "bad"));
  EXPECT_FALSE(std::filesystem::is_empty(tmp / "sorted" / "good"));
}

TEST(DebugReduceCommand, AFailureOnlyTheThirdIterationShowsIsReduced) {
  PARITY_REQUIRE_FILE(det_model());
  testing::TempDir tmp;
  const std::vector<std::string> check{"--ref", "--plugin-ref", "--plugin-ref-wrong", kWrongConv,
                                       "--plugin-ref-wrong-from", "3"};
  std::vector<std::string> three = check;
  three.insert(three.end(), {"--iterations", "3"});
  expect_single_node(reduce(tmp, three), kWrongConv);
  // On one iteration no candidate fails: there is nothing to reduce, and the model is saved whole
  // (its Constant nodes as initializers, as reduce lowers them first).
  const auto one = reduce(tmp, check);
  EXPECT_EQ(one.result.exit_code, 0) << one.result.output;
  EXPECT_TRUE(contains(one.result.output, "[W] no candidate failed the check: nothing to reduce")) << one.result.output;
  const model::Model whole = model::load_model(det_model()).value();
  const auto& original = whole.proto().graph().node();
  const auto computing = std::count_if(original.begin(), original.end(),
                                       [](const onnx::NodeProto& node) { return node.op_type() != "Constant"; });
  EXPECT_EQ(one.model.graph().node_size(), computing);
}

// test_debug.py TestReduce.test_reduce_shape_inference, typed as Polygraphy's test types it (in
// the output folder, with the default artifacts there): the candidates carry the given shapes.
TEST(DebugReduceCommand, PolygraphyModelInputShapesWithAndWithoutFallbackShapeInference) {
  testing::TempDir tmp;
  testing::ModelBuilder b(13);
  b.input("X", DType::kFloat32, {1, 2, -1, -1}).output("Y", DType::kFloat32, {1, 2, -1, -1});
  b.node("Identity", {"X"}, {"Y"}, "onnx_graphsurgeon_node_1");
  const std::string model = (tmp / "dynamic_identity.onnx").string();
  model::save_model(model::Model(std::make_unique<onnx::ModelProto>(b.model())), model).throw_if_error();
  for (const std::string opts : {"", " --force-fallback-shape-inference"}) {
    SCOPED_TRACE(opts);
    const auto r = testing::run_shell("cd '" + tmp.path().string() + "' && '" + PARITY_BINARY + "' debug reduce '" +
                                      model + "' --output=reduced.onnx --show-output --model-input-shapes=X:[1,2,5,5]" +
                                      opts + " --check false");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const model::Model reduced = model::load_model(tmp / "reduced.onnx").value();
    for (const auto* value : {&reduced.proto().graph().input(0), &reduced.proto().graph().output(0)}) {
      const auto& shape = value->type().tensor_type().shape();
      ASSERT_EQ(shape.dim_size(), 4) << value->name();
      std::vector<int64_t> dims;
      for (const auto& d : shape.dim()) dims.push_back(d.dim_value());
      EXPECT_EQ(dims, (std::vector<int64_t>{1, 2, 5, 5})) << value->name();
    }
    std::filesystem::remove(tmp / "reduced.onnx");
  }
}

// Polygraphy's interactive mode: without --check or runners, each candidate's verdict is asked for.
TEST(DebugReduceCommand, InteractiveModeAsksForEachVerdict) {
  testing::TempDir tmp;
  testing::ModelBuilder b(13);
  b.input("X", DType::kFloat32, {2, 2}).output("Z", DType::kFloat32, {2, 2});
  b.node("Identity", {"X"}, {"Y"}, "first");
  b.node("Neg", {"Y"}, {"Z"}, "second");
  const std::string model = (tmp / "two.onnx").string();
  model::save_model(model::Model(std::make_unique<onnx::ModelProto>(b.model())), model).throw_if_error();
  const std::string in_dir = "cd '" + tmp.path().string() + "' && ";
  const std::string reduce = "'" + std::string(PARITY_BINARY) + "' debug reduce '" + model + "' -o reduced.onnx --mode linear";
  // Every candidate fails: one node is left.
  auto r = testing::run_shell(in_dir + "yes f | " + reduce);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, ">>> Did 'polygraphy_debug.onnx' [p]ass or [f]ail?")) << r.output;
  EXPECT_EQ(model::load_model(tmp / "reduced.onnx").value().proto().graph().node_size(), 1);
  // An answer that is neither is asked again; every candidate passing leaves nothing to reduce.
  r = testing::run_shell(in_dir + "printf 'maybe\\npass\\npass\\n' | " + reduce);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Please choose either: 'p' or 'f':")) << r.output;
  EXPECT_TRUE(contains(r.output, "no candidate failed the check: nothing to reduce")) << r.output;
  EXPECT_EQ(model::load_model(tmp / "reduced.onnx").value().proto().graph().node_size(), 2);
  r = testing::run_shell(in_dir + reduce + " < /dev/null");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "interactive mode: no answer (standard input is closed)")) << r.output;
}

TEST(DebugReduceCommand, BadInputIsOneLine) {
  PARITY_REQUIRE_FILE(det_model());
  testing::TempDir tmp;
  const std::string out = (tmp / "r.onnx").string();
  auto r = run_parity({"debug", "reduce", det_model(), "-o", out, "--check", "no-such-command-xyz", "{model}"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "command 'no-such-command-xyz' not found")) << r.output;
  r = run_parity({"debug", "reduce", det_model(), "-o", out, "--ref"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "one runner cannot decide whether a candidate fails")) << r.output;
  testing::write_file(tmp / "file", "x");
  r = run_parity({"debug", "reduce", det_model(), "-o", out, "--artifacts", "a.txt", "--artifacts-dir",
                  (tmp / "file" / "dir").string(), "--check", "true"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--artifacts-dir: cannot create")) << r.output;
  testing::write_file(tmp / "replay.json", "{\"parity_debug_replay\": 1, \"model\": \"other\", \"checks\": []}");
  r = run_parity({"debug", "reduce", det_model(), "-o", out, "--input-shapes", "x:[1,3,32,32]", "--iter-artifact",
                  (tmp / "i.onnx").string(), "--load-debug-replay", (tmp / "replay.json").string(), "--check", "false"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "was written while reducing another model")) << r.output;
  // A report name that is neither .html nor .json fails before any check runs.
  r = run_parity({"debug", "reduce", det_model(), "-o", out, "--report", (tmp / "r.pdf").string(), "--check", "false"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "the file name must end in .html")) << r.output;
  EXPECT_FALSE(contains(r.output, "Check 1")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));
}

// `mark all` explains where the divergence starts, and the command it offers isolates that node.
TEST(DebugReduceCommand, MarkAllNamesTheNodeWhereTheDivergenceStarts) {
  PARITY_REQUIRE_FILE(det_model());
  testing::TempDir tmp;
  const auto r = run_parity({"--extension", extension(), "run", det_model(), "--input-shapes", "x:[1,3,64,64]", "--ref",
                             "--plugin-ref", "--plugin-ref-wrong", kWrongConv, "--onnx-outputs", "mark", "all"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, std::string("Divergence starts at node '") + kWrongConv +
                                     "' (Conv): its inputs are within tolerance, its output is not"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "input  p2o.Add.139 | max abs err 0, max rel err 0 | within tolerance")) << r.output;
  EXPECT_TRUE(contains(r.output, "output conv2d_460.tmp_0 | max abs err 1,")) << r.output;
  const std::string prefix = "Isolate it: parity surgeon extract " + det_model() + " ";
  const size_t at = r.output.find(prefix);
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string offered = r.output.substr(at + prefix.size(), r.output.find('\n', at) - at - prefix.size());
  EXPECT_EQ(offered, "--inputs p2o.Add.139:auto:auto --outputs conv2d_460.tmp_0:auto -o node.onnx");
  const std::string node = (tmp / "node.onnx").string();
  const auto extracted = run_parity({"surgeon", "extract", det_model(), "--inputs", "p2o.Add.139:auto:auto", "--outputs",
                                     "conv2d_460.tmp_0:auto", "-o", node});
  ASSERT_EQ(extracted.exit_code, 0) << extracted.output;
  EXPECT_EQ(model::load_model(node).value().proto().graph().node_size(), 3);  // the Conv and its two weight Constants
  const auto alone = run_parity({"--extension", extension(), "run", node, "--ref", "--plugin-ref", "--plugin-ref-wrong", kWrongConv});
  EXPECT_EQ(alone.exit_code, 1) << alone.output;
}

}  // namespace
}  // namespace parity
