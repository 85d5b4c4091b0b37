// Model loading/saving: every ONNX backend-test model round-trips through the IR exactly; external
// data is mapped lazily (also past 2 GiB); broken files give one clear error.
#include "model/model.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>

#include "model/graph.h"
#include "model/shape_inference.h"
#include "model/test_models.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;
using model::load_model;
using model::Model;

std::vector<fs::path> backend_test_models() {
  std::vector<fs::path> models;
  for (const auto& e : fs::recursive_directory_iterator(onnx_testdata_dir()))
    if (e.path().extension() == ".onnx") models.push_back(e.path());
  std::sort(models.begin(), models.end());
  return models;
}

TEST(OnnxModel, EveryBackendTestModelRoundTripsAndInfersShapes) {
  const auto models = backend_test_models();
  ASSERT_EQ(models.size(), 1072u) << "libonnx-testdata changed?";
  std::vector<std::string> failures;
  for (const auto& path : models) {
    const std::string label = fs::relative(path, onnx_testdata_dir()).string();
    try {
      Model original = load_model(path).value();
      auto graph = model::Graph::from_model(original);
      Model exported = graph->to_model();
      const std::string bytes = model::serialize_model(exported);
      Model reloaded = model::load_model_from_bytes(bytes, path.parent_path()).value();
      if (reloaded.proto().SerializeAsString() != original.proto().SerializeAsString()) {
        failures.push_back(label + ": round trip changed the ModelProto");
        continue;
      }
      model::infer_shapes(reloaded.proto(), /*data_prop=*/true);
    } catch (const std::exception& e) {
      failures.push_back(label + ": " + e.what());
    }
  }
  std::string report;
  for (const auto& f : failures) report += "  " + f + "\n";
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << models.size() << " models failed:\n" << report;
}

TEST(OnnxModel, SaveAndLoadFileKeepsTheModel) {
  TempDir dir;
  Model model(std::make_unique<onnx::ModelProto>(add_relu_model()));
  ASSERT_TRUE(model::save_model(model, dir / "m.onnx").is_ok());
  Model loaded = load_model(dir / "m.onnx").value();
  EXPECT_EQ(loaded.proto().SerializeAsString(), model.proto().SerializeAsString());
  EXPECT_EQ(loaded.opset(), 13);
  EXPECT_EQ(loaded.opset("ai.onnx"), 13);
  EXPECT_EQ(loaded.base_dir(), dir.path());
}

TEST(OnnxModel, ExternalDataIsMappedAndSavedBothWays) {
  TempDir dir;
  const std::vector<float> w = {0.5f, 1.5f, -2.5f, 8.0f};
  onnx::ModelProto proto = add_relu_model(w);
  externalize(proto, "W", dir.path(), "weights.bin");
  write_model(proto, dir / "model.onnx");

  Model model = load_model(dir / "model.onnx").value();
  EXPECT_TRUE(model.has_external_data());
  auto graph = model::Graph::from_model(model);
  auto weights = graph->tensor("W");
  ASSERT_TRUE(weights->is_constant());
  EXPECT_TRUE(weights->is_external());
  EXPECT_FALSE(weights->values_loaded());
  EXPECT_EQ(weights->values().to_vector<float>(), w);

  // Save with everything external into another folder, then inline, and read both back.
  model::SaveOptions external;
  external.external_data = true;
  external.size_threshold = 0;
  ASSERT_TRUE(model::save_model(graph->to_model(), dir / "out" / "ext.onnx", external).is_ok());
  EXPECT_TRUE(fs::exists(dir / "out" / "ext.onnx.data"));
  auto ext = model::Graph::from_model(load_model(dir / "out" / "ext.onnx").value());
  EXPECT_TRUE(ext->tensor("W")->is_external());
  EXPECT_EQ(ext->tensor("W")->values().to_vector<float>(), w);

  ASSERT_TRUE(model::save_model(model, dir / "inline" / "in.onnx").is_ok());
  Model inlined = load_model(dir / "inline" / "in.onnx").value();
  EXPECT_FALSE(inlined.has_external_data());
  EXPECT_EQ(model::Graph::from_model(inlined)->tensor("W")->values().to_vector<float>(), w);

  // One file per tensor.
  external.all_tensors_to_one_file = false;
  ASSERT_TRUE(model::save_model(model, dir / "per" / "m.onnx", external).is_ok());
  EXPECT_TRUE(fs::exists(dir / "per" / "W"));
  EXPECT_EQ(model::Graph::from_model(load_model(dir / "per" / "m.onnx").value())->tensor("W")->values().to_vector<float>(), w);
}

int64_t resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  return -1;
}

TEST(OnnxModel, WeightsPastTwoGigabytesLoadWithoutBeingRead) {
  TempDir dir;
  // 2.5 GiB of float32 weights in a sparse file: nothing is on disk, and nothing may be read.
  const int64_t count = (int64_t{5} << 30) / 2 / 4;
  const int64_t bytes = count * 4;
  {
    std::ofstream(dir / "big.bin", std::ios::binary).put('\0');
    ASSERT_EQ(::truncate((dir / "big.bin").c_str(), bytes), 0);
  }
  onnx::ModelProto proto = add_relu_model({0.f});
  auto* t = proto.mutable_graph()->mutable_initializer(0);
  t->set_dims(0, count);
  t->clear_raw_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value("big.bin");
  kv = t->add_external_data();
  kv->set_key("length");
  kv->set_value(std::to_string(bytes));
  write_model(proto, dir / "big.onnx");

  const int64_t before = resident_kib();
  Model model = load_model(dir / "big.onnx").value();
  auto graph = model::Graph::from_model(model);
  auto weights = graph->tensor("W");
  EXPECT_EQ(weights->constant_bytes(), static_cast<size_t>(bytes));
  const Tensor& values = weights->values();
  EXPECT_EQ(values.numel(), count);
  EXPECT_EQ(values.data<float>()[count - 1], 0.0f);  // touches one page
  Model exported = graph->to_model();
  EXPECT_LT(model::serialize_model(exported).size(), 4096u);
  const int64_t grown_kib = resident_kib() - before;
  EXPECT_LT(grown_kib, 64 * 1024) << "loading should not read the weights";

  // Inlining 2.5 GiB cannot fit protobuf: refused before anything is written.
  Status s = model::save_model(exported, dir / "copy" / "inline.onnx");
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("2 GiB"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(dir / "copy" / "inline.onnx"));
}

// --- bad input ---------------------------------------------------------------------------------

Error load_error(const fs::path& path) {
  auto r = load_model(path);
  EXPECT_FALSE(r.is_ok()) << path;
  return r.is_ok() ? Error(ErrorCode::kInternal, "loaded") : r.error();
}

TEST(OnnxModelErrors, TruncatedProtobuf) {
  TempDir dir;
  const std::string bytes = add_relu_model().SerializeAsString();
  write_file(dir / "cut.onnx", bytes.substr(0, bytes.size() / 2));
  Error e = load_error(dir / "cut.onnx");
  EXPECT_EQ(e.code(), ErrorCode::kInvalidModel);
  EXPECT_NE(std::string(e.what()).find("cut.onnx"), std::string::npos) << e.what();
}

TEST(OnnxModelErrors, NotAModel) {
  TempDir dir;
  write_file(dir / "text.onnx", "this is a text file, not a model\n");
  EXPECT_EQ(load_error(dir / "text.onnx").code(), ErrorCode::kInvalidModel);
  write_file(dir / "empty.onnx", "");
  EXPECT_EQ(load_error(dir / "empty.onnx").code(), ErrorCode::kInvalidModel);
  // A serialized TensorProto is valid protobuf but not a model.
  onnx::TensorProto t;
  t.add_dims(3);
  t.set_data_type(1);
  t.set_raw_data(std::string(12, '\0'));
  write_file(dir / "tensor.onnx", t.SerializeAsString());
  EXPECT_EQ(load_error(dir / "tensor.onnx").code(), ErrorCode::kInvalidModel);
  EXPECT_EQ(load_error(dir / "missing.onnx").code(), ErrorCode::kNotFound);
}

TEST(OnnxModelErrors, WrongExternalDataLength) {
  TempDir dir;
  onnx::ModelProto proto = add_relu_model();
  externalize(proto, "W", dir.path(), "w.bin");
  proto.mutable_graph()->mutable_initializer(0)->mutable_external_data(2)->set_value("12");
  write_model(proto, dir / "m.onnx");
  Error e = load_error(dir / "m.onnx");
  EXPECT_EQ(e.code(), ErrorCode::kInvalidModel);
  EXPECT_NE(std::string(e.what()).find("length 12"), std::string::npos) << e.what();

  // File shorter than the tensor.
  onnx::ModelProto short_file = add_relu_model();
  externalize(short_file, "W", dir.path(), "w2.bin");
  write_file(dir / "w2.bin", "abc");
  write_model(short_file, dir / "m2.onnx");
  EXPECT_EQ(load_error(dir / "m2.onnx").code(), ErrorCode::kInvalidModel);

  onnx::ModelProto missing = add_relu_model();
  externalize(missing, "W", dir.path(), "w3.bin");
  fs::remove(dir / "w3.bin");
  write_model(missing, dir / "m3.onnx");
  EXPECT_EQ(load_error(dir / "m3.onnx").code(), ErrorCode::kNotFound);
}

TEST(OnnxModelErrors, ErrorsNameTheFileAndTensorInTheirFields) {
  TempDir dir;
  write_file(dir / "text.onnx", "not a model");
  const Error bad = load_error(dir / "text.onnx");
  EXPECT_EQ(bad.file(), (dir / "text.onnx").string());
  EXPECT_FALSE(bad.tensor());
  EXPECT_EQ(load_error(dir / "missing.onnx").file(), (dir / "missing.onnx").string());

  // Broken external data names the tensor and the weights file, not the model.
  onnx::ModelProto short_file = add_relu_model();
  externalize(short_file, "W", dir.path(), "w.bin");
  write_file(dir / "w.bin", "abc");
  write_model(short_file, dir / "m.onnx");
  const Error weights = load_error(dir / "m.onnx");
  EXPECT_EQ(weights.tensor(), "W");
  ASSERT_TRUE(weights.file());
  EXPECT_EQ(fs::path(*weights.file()).filename(), "w.bin");

  // A bad length is found before any weights file is opened: the model is the file.
  onnx::ModelProto wrong_length = add_relu_model();
  externalize(wrong_length, "W", dir.path(), "w2.bin");
  wrong_length.mutable_graph()->mutable_initializer(0)->mutable_external_data(2)->set_value("12");
  write_model(wrong_length, dir / "m2.onnx");
  const Error length = load_error(dir / "m2.onnx");
  EXPECT_EQ(length.tensor(), "W");
  EXPECT_EQ(length.file(), (dir / "m2.onnx").string());
}

TEST(OnnxModelErrors, ExternalDataEscapingTheFolder) {
  TempDir dir;
  fs::create_directories(dir / "model");
  fs::create_directories(dir / "elsewhere");
  onnx::ModelProto proto = add_relu_model();
  externalize(proto, "W", dir / "elsewhere", "w.bin");
  auto set_location = [&](const std::string& location) {
    proto.mutable_graph()->mutable_initializer(0)->mutable_external_data(0)->set_value(location);
    write_model(proto, dir / "model" / "m.onnx");
    return load_error(dir / "model" / "m.onnx");
  };
  for (const std::string& location : std::vector<std::string>{"../elsewhere/w.bin", (dir / "elsewhere" / "w.bin").string()}) {
    Error e = set_location(location);
    EXPECT_EQ(e.code(), ErrorCode::kInvalidModel) << location;
    EXPECT_NE(std::string(e.what()).find("model's folder"), std::string::npos) << e.what();
  }
  fs::create_symlink(dir / "elsewhere" / "w.bin", dir / "model" / "link.bin");
  Error e = set_location("link.bin");
  EXPECT_EQ(e.code(), ErrorCode::kInvalidModel);
  EXPECT_NE(std::string(e.what()).find("outside the model's folder"), std::string::npos) << e.what();
  fs::create_directory_symlink(dir / "elsewhere", dir / "model" / "dirlink");
  EXPECT_EQ(set_location("dirlink/w.bin").code(), ErrorCode::kInvalidModel);
  // A symlink that stays inside the folder is fine.
  fs::copy_file(dir / "elsewhere" / "w.bin", dir / "model" / "real.bin");
  fs::create_symlink(dir / "model" / "real.bin", dir / "model" / "inside.bin");
  proto.mutable_graph()->mutable_initializer(0)->mutable_external_data(0)->set_value("inside.bin");
  write_model(proto, dir / "model" / "m.onnx");
  EXPECT_TRUE(load_model(dir / "model" / "m.onnx").is_ok());
}

TEST(OnnxModelErrors, CyclicGraphNamesTheCycle) {
  TempDir dir;
  write_model(cyclic_model(), dir / "cycle.onnx");
  auto graph = model::Graph::from_model(load_model(dir / "cycle.onnx").value());
  try {
    graph->toposort();
    FAIL() << "toposort accepted a cycle";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidModel);
    const std::string msg = e.what();
    for (const char* n : {"relu_in_cycle", "neg_in_cycle", "add_in_cycle"})
      EXPECT_NE(msg.find(n), std::string::npos) << msg;
  }
}

TEST(OnnxModel, NewerOpsetThanLibraryWarnsButLoads) {
  onnx::ModelProto proto = add_relu_model();
  proto.mutable_opset_import(0)->set_version(model::max_known_opset() + 5);
  auto warnings = model::newer_than_library_warnings(proto);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("newer than this build's ONNX schemas (up to 28)"), std::string::npos) << warnings[0];
  auto model = model::load_model_from_bytes(proto.SerializeAsString());
  ASSERT_TRUE(model.is_ok());
  EXPECT_NO_THROW(model::infer_shapes(model.value().proto(), true));
}

}  // namespace
}  // namespace parity::testing
