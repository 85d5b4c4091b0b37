// load_model_mapped: large initializers are left out of the protobuf parse and read straight into
// their tensors, byte for byte; everything it does not expect stays in the proto; broken files
// give one clear error.
#include "model/mapped_load.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <numeric>

#include "model/proto_convert.h"
#include "model/test_models.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

onnx::TensorProto* add_raw(onnx::GraphProto* g, const std::string& name, int dtype, std::vector<int64_t> dims,
                           const std::string& bytes) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(dtype);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(bytes);
  return t;
}

template <typename T>
std::string bytes_of(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

std::vector<float> ramp(size_t n, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + 0.25f * static_cast<float>(i);
  return v;
}

/// A graph input, outputs and initializers: W (64x64 float, 16 KiB: read beside the proto), b (4
/// floats: stays), I (1024 int64: 8 KiB, read beside), and odd ones that must stay in the proto: an
/// int4 tensor (packed on disk) and a float tensor whose raw data does not match its dims.
onnx::ModelProto mixed_model() {
  onnx::ModelProto m = empty_model();
  auto* g = m.mutable_graph();
  add_tensor_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {4});
  add_tensor_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {4});
  add_raw(g, "W", onnx::TensorProto::FLOAT, {64, 64}, bytes_of(ramp(64 * 64, -3.f)));
  add_raw(g, "b", onnx::TensorProto::FLOAT, {4}, bytes_of(ramp(4, 1.f)));
  std::vector<int64_t> ints(1024);
  std::iota(ints.begin(), ints.end(), -500);
  add_raw(g, "I", onnx::TensorProto::INT64, {1024}, bytes_of(ints));
  add_raw(g, "Q", 22 /* INT4 */, {10000}, std::string(5000, '\x37'));
  add_raw(g, "Bad", onnx::TensorProto::FLOAT, {2000}, std::string(4096, '\x01'));
  add_node(g, "Add", {"x", "b"}, {"y"}, "add");
  return m;
}

TEST(MappedLoad, LargeInitializersAreReadBesideTheProtoByteForByte) {
  TempDir tmp;
  const onnx::ModelProto original = mixed_model();
  write_model(original, tmp / "m.onnx");
  const model::MappedModel loaded = model::load_model_mapped(tmp / "m.onnx").value();
  ASSERT_TRUE(loaded.proto && loaded.initializers);
  EXPECT_EQ(loaded.initializers->size(), 2u);
  for (int i = 0; i < original.graph().initializer_size(); ++i) {
    const onnx::TensorProto& before = original.graph().initializer(i);
    const onnx::TensorProto& after = loaded.proto->graph().initializer(i);
    SCOPED_TRACE(before.name());
    EXPECT_EQ(after.name(), before.name());
    EXPECT_EQ(after.data_type(), before.data_type());
    EXPECT_EQ(std::vector<int64_t>(after.dims().begin(), after.dims().end()),
              std::vector<int64_t>(before.dims().begin(), before.dims().end()));
    auto it = loaded.initializers->find(before.name());
    const bool beside = before.name() == "W" || before.name() == "I";
    ASSERT_EQ(it != loaded.initializers->end(), beside);
    if (beside) {
      EXPECT_FALSE(after.has_raw_data()) << "the proto still holds the bytes";
      const Tensor& t = it->second;
      EXPECT_EQ(t.dtype(), static_cast<DType>(before.data_type()));
      ASSERT_EQ(t.size_bytes(), before.raw_data().size());
      EXPECT_EQ(std::memcmp(t.raw_data(), before.raw_data().data(), t.size_bytes()), 0);
    } else {
      EXPECT_EQ(after.raw_data(), before.raw_data());  // small, int4 and malformed ones stay
    }
  }
  // Everything else of the model is unchanged.
  EXPECT_EQ(loaded.proto->graph().node_size(), 1);
  EXPECT_EQ(loaded.proto->opset_import(0).version(), original.opset_import(0).version());
}

TEST(MappedLoad, EveryInitializerByteIsAtAnyOffset) {
  // Tensors start wherever protobuf put them: shift W by one to seven bytes of name.
  for (int shift = 0; shift < 8; ++shift) {
    TempDir tmp;
    onnx::ModelProto m = empty_model();
    const std::vector<float> w = ramp(3000, static_cast<float>(shift));
    add_raw(m.mutable_graph(), std::string(static_cast<size_t>(shift) + 1, 'w'), onnx::TensorProto::FLOAT, {3000},
            bytes_of(w));
    write_model(m, tmp / "m.onnx");
    const model::MappedModel loaded = model::load_model_mapped(tmp / "m.onnx").value();
    ASSERT_EQ(loaded.initializers->size(), 1u);
    EXPECT_EQ(loaded.initializers->begin()->second.to_vector<float>(), w) << "shift " << shift;
  }
}

TEST(MappedLoad, BrokenFilesAreOneClearError) {
  TempDir tmp;
  std::string bytes;
  ASSERT_TRUE(mixed_model().SerializeToString(&bytes));
  // Cut inside W's raw data, a few bytes in, and garbage.
  for (size_t cut : {bytes.size() / 2, size_t{7}, bytes.size() - 1}) {
    const fs::path path = tmp / ("cut" + std::to_string(cut) + ".onnx");
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(cut));
    const auto r = model::load_model_mapped(path);
    ASSERT_FALSE(r.is_ok()) << "a model cut at " << cut << " of " << bytes.size() << " bytes loaded";
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidModel) << r.status().message();
    EXPECT_NE(r.status().message().find(path.string()), std::string::npos) << r.status().message();
  }
  std::ofstream(tmp / "garbage.onnx", std::ios::binary) << std::string(10000, '\xff');
  EXPECT_EQ(model::load_model_mapped(tmp / "garbage.onnx").error().code(), ErrorCode::kInvalidModel);
  EXPECT_EQ(model::load_model_mapped(tmp / "missing.onnx").error().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace parity::testing
