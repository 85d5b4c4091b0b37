// Plan files: a saved and reloaded plan computes exactly what the planned ONNX model computes, and
// every damaged or foreign plan is refused with one line that says why and how to rebuild.
#include "runtime/plan/plan_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>

#if PARITY_HAVE_DNNL
#include <oneapi/dnnl/dnnl_types.h>

#include "runtime/dnnl/dnnl_support.h"
#endif

#include "support/model_builder.h"
#include "runtime/plan/plan.pb.h"
#include "runtime/subgraph.h"
#include "support/test_support.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using runtime::Session;
namespace plan = runtime::plan;

fs::path ocr_model(const std::string& file) { return testing::source_dir() / ".cache/npm/ocr-models/assets" / file; }
fs::path bench_model(const std::string& file) { return testing::source_dir() / ".cache/bench-models" / file; }

/// Seeded uniform feeds for every input, dynamic dims taken from `dims` in order.
TensorMap seeded_feed(const Session& session, std::vector<int64_t> dims) {
  TensorMap feed;
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  size_t next = 0;
  const TensorMetadata inputs = session.input_metadata();
  for (const auto& name : inputs.names()) {
    const TensorMeta& meta = inputs.at(name);
    Shape shape;
    for (const auto& d : meta.shape.dims) shape.push_back(d.value >= 0 ? d.value : dims.at(next++));
    Tensor t(DType::kFloat32, shape);
    for (float& v : t.values<float>()) v = dist(gen);
    feed.set(name, t);
  }
  return feed;
}

void expect_bit_identical(const TensorMap& a, const TensorMap& b) {
  ASSERT_EQ(a.names(), b.names());
  for (const auto& name : a.names()) {
    const Tensor& x = a.at(name);
    const Tensor& y = b.at(name);
    ASSERT_EQ(x.dtype(), y.dtype()) << name;
    ASSERT_EQ(x.shape(), y.shape()) << name;
    EXPECT_EQ(0, std::memcmp(x.raw_data(), y.raw_data(), x.size_bytes())) << name << " differs";
  }
}

/// Builds the model's plan, saves and reloads it, and checks the outputs match bit for bit.
void check_round_trip(const fs::path& model, std::vector<int64_t> dims, int min_fused) {
  ASSERT_TRUE(fs::exists(model)) << model << " is missing (scripts/setup.sh fetches it)";
  testing::TempDir dir;
  Session built = Session::create(model).value();
  EXPECT_GE(built.plan().fused_nodes_, min_fused);
  plan::save_plan(built, dir / "m.plan", model.filename().string());
  ASSERT_TRUE(plan::is_plan_file(dir / "m.plan"));
  Session loaded = plan::load_plan(dir / "m.plan").value();
  EXPECT_EQ(loaded.plan().nodes_.size(), built.plan().nodes_.size());
  for (size_t i = 0; i < built.plan().nodes_.size(); ++i) {
    EXPECT_EQ(loaded.plan().nodes_[i].tactic, built.plan().nodes_[i].tactic);
    EXPECT_EQ(loaded.plan().nodes_[i].label, built.plan().nodes_[i].label);
  }
  const TensorMap feed = seeded_feed(built, dims);
  const TensorMap want = built.run(feed);
  expect_bit_identical(want, loaded.run(feed));
  // Session::create recognizes a plan by its magic; the bytes load as well as the file.
  expect_bit_identical(want, Session::create(dir / "m.plan").value().run(feed));
  expect_bit_identical(want, plan::load_plan_bytes(plan::plan_to_bytes(built)).value().run(feed));
}

TEST(PlanFile, PpOcrDetRoundTripIsBitIdentical) {
  check_round_trip(ocr_model("ch_PP-OCRv4_det_infer.onnx"), {1, 160, 192}, 10);
}

TEST(PlanFile, PpOcrRecRoundTripIsBitIdentical) {
  check_round_trip(ocr_model("ch_PP-OCRv4_rec_infer.onnx"), {1, 160}, 10);
}

TEST(PlanFile, MobileNetRoundTripIsBitIdenticalWithChannelsLastAndWeightsPackedAgainOnLoad) {
  const fs::path model = bench_model("mobilenet_v2.onnx");
  check_round_trip(model, {}, 10);
  Session built = Session::create(model).value();
  EXPECT_GT(built.plan().channels_last_values_, 0);  // the hand-offs are replayed, not re-searched
  // The oneDNN convolutions pack at build time, but the plan holds each weight once (plain): the
  // bit-identical run above used weights packed again on load.
  testing::TempDir dir;
  plan::save_plan(built, dir / "m.plan");
  const plan::PlanSummary summary = plan::summarize_plan(dir / "m.plan");
  EXPECT_EQ(summary.packed_weights_bytes, 0);
  EXPECT_LE(static_cast<double>(fs::file_size(dir / "m.plan")), 1.05 * static_cast<double>(summary.weights_bytes));
  EXPECT_GT(summary.activation_bytes, 0);
  EXPECT_FALSE(summary.dnnl_isa.empty());
}

TEST(PlanFile, MatMulAndGemmWeightsArePackedAgainOnLoadFromThePlansOneCopy) {
  testing::ModelBuilder b;
  b.input("x", DType::kFloat32, {16, 64}).output("y", DType::kFloat32, {16, 24});
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto random = [&](const Shape& shape) {
    Tensor t(DType::kFloat32, shape);
    for (float& v : t.values<float>()) v = dist(gen);
    return t;
  };
  b.initializer("W", random({64, 32}));
  b.initializer("G", random({24, 32}));
  b.node("MatMul", {"x", "W"}, {"h"}, "mm");
  auto& gemm = b.node("Gemm", {"h", "G"}, {"y"}, "gemm");
  testing::add_int_attr(gemm, "transB", 1);
  Session built = Session::create(b.model()).value();
  testing::TempDir dir;
  plan::save_plan(built, dir / "mm.plan");
  const auto summary = plan::summarize_plan(dir / "mm.plan");
  // The weights once, as the model has them, not a second copy in the layouts oneDNN chose.
  const int64_t gemm_bytes = 24 * 32 * 4, matmul_bytes = 64 * 32 * 4;
  EXPECT_EQ(summary.packed_weights_bytes, 0);
  EXPECT_EQ(summary.weights_bytes, gemm_bytes + matmul_bytes);
  Session loaded = plan::load_plan(dir / "mm.plan").value();
  const TensorMap feed{{"x", random({16, 64})}};
  expect_bit_identical(built.run(feed), loaded.run(feed));
}

TEST(PlanFile, DemoModelRoundTrip) { check_round_trip(testing::source_dir() / "models/demo.onnx", {1}, 0); }

TEST(PlanFile, LoadedPlanRefusesIntermediateOutputs) {
  Session built = Session::create(ocr_model("ch_PP-OCRv4_det_infer.onnx")).value();
  Session loaded = plan::load_plan_bytes(plan::plan_to_bytes(built)).value();
  runtime::RunOptions options;
  options.outputs = {built.intermediate_names().front()};
  try {
    loaded.run(seeded_feed(built, {1, 64, 64}), options);
    FAIL() << "a loaded plan ran with an intermediate output";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("run the ONNX model"), std::string::npos) << e.what();
  }
}

// --- refusals ---

class PlanRefusal : public ::testing::Test {
 protected:
  void SetUp() override {
    Session built = Session::create(testing::source_dir() / "models/demo.onnx").value();
    bytes_ = plan::plan_to_bytes(built, "demo-model-for-the-refusal-tests.onnx");
  }

  /// The error of loading `bytes`, from the file API and the bytes API (they must agree).
  std::string refusal(const std::string& bytes) {
    testing::write_file(dir_ / "bad.plan", bytes);
    auto from_file = plan::load_plan(dir_ / "bad.plan");
    EXPECT_FALSE(from_file.is_ok());
    if (from_file.is_ok()) return {};
    const std::string message = from_file.error().what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
    EXPECT_NE(message.find("rebuild it with `parity convert"), std::string::npos) << message;
    EXPECT_NE(message.find("bad.plan"), std::string::npos) << message;
    auto from_bytes = plan::load_plan_bytes(bytes);
    EXPECT_FALSE(from_bytes.is_ok());
    return message;
  }

  static uint32_t crc32(const std::string& s) {  // the standard CRC-32 (zlib's), bit by bit
    uint32_t crc = 0xffffffffu;
    for (unsigned char c : s) {
      crc ^= c;
      for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
  }
  static void put_u32(std::string& s, size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
  }
  static uint32_t get_u32(const std::string& s, size_t at) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
    return v;
  }

  /// The plan with its header edited and re-checksummed (what another machine or parity writes).
  std::string with_header(const std::function<void(plan::PlanHeader&)>& edit) const {
    const uint32_t size = get_u32(bytes_, 12);
    plan::PlanHeader header;
    EXPECT_TRUE(header.ParseFromString(bytes_.substr(20, size)));
    edit(header);
    const std::string encoded = header.SerializeAsString();
    // Keep the sections where they were: the header must encode to the same size.
    EXPECT_EQ(encoded.size(), size) << "the edit changed the header size; choose a same-length value";
    std::string out = bytes_;
    out.replace(20, size, encoded);
    put_u32(out, 16, crc32(encoded));
    return out;
  }

  /// The plan rebuilt from its parsed header and graph after `edit`, checksums recomputed by
  /// reseal_plan_bytes: what a plan crafted to pass the checksums looks like.
  std::string resealed(const std::function<void(plan::PlanHeader&, plan::Plan&)>& edit,
                       size_t extra_weights_bytes = 0) const {
    const uint32_t header_size = get_u32(bytes_, 12);
    plan::PlanHeader header;
    EXPECT_TRUE(header.ParseFromString(bytes_.substr(20, header_size)));
    const size_t payload_at = (20 + header_size + 63) / 64 * 64;
    plan::Plan graph;
    EXPECT_TRUE(graph.ParseFromString(bytes_.substr(payload_at, header.payload_size())));
    const std::string weights = bytes_.substr((payload_at + header.payload_size() + 63) / 64 * 64);
    const uint64_t stored_payload_size = header.payload_size();
    edit(header, graph);
    std::string payload = graph.SerializeAsString();
    if (header.payload_size() == stored_payload_size) header.set_payload_size(payload.size());  // unless edited
    payload.resize((payload.size() + 63) / 64 * 64, '\0');
    const std::string encoded = header.SerializeAsString();
    std::string out = bytes_.substr(0, 12) + std::string(8, '\0');
    put_u32(out, 12, static_cast<uint32_t>(encoded.size()));
    out += encoded;
    out.resize((out.size() + 63) / 64 * 64, '\0');
    out += payload + weights + std::string(extra_weights_bytes, '\0');
    auto sealed = plan::reseal_plan_bytes(out);
    EXPECT_TRUE(sealed.has_value());
    return sealed.value_or("");
  }

  testing::TempDir dir_;
  std::string bytes_;
};

TEST_F(PlanRefusal, ResealingAnUneditedPlanKeepsItLoadable) {
  // The control for the crafted plans below: rebuilt and resealed unchanged, it loads.
  const std::string same = resealed([](plan::PlanHeader&, plan::Plan&) {});
  EXPECT_TRUE(plan::load_plan_bytes(same).is_ok());
  EXPECT_EQ(plan::reseal_plan_bytes(bytes_).value(), bytes_);
  EXPECT_FALSE(plan::reseal_plan_bytes("not a plan").has_value());
}

TEST_F(PlanRefusal, SectionSizesThatWrapAroundTheFileEnd) {
  // A graph section of 2^64 - 64 bytes: the weights would start at (its offset + size) mod 2^64,
  // 64 bytes before the graph, and a weights size chosen so that the sum equals the file size
  // once made the loader checksum 2^64 bytes.
  const std::string sections = resealed([](plan::PlanHeader&, plan::Plan&) {});
  const size_t sections_bytes = sections.size() - (20 + get_u32(sections, 12) + 63) / 64 * 64;
  const std::string message = refusal(resealed([&](plan::PlanHeader& h, plan::Plan&) {
    h.set_payload_size(~uint64_t{63});
    h.set_weights_size(sections_bytes + 64);
  }));
  EXPECT_NE(message.find("is truncated"), std::string::npos) << message;
}

TEST_F(PlanRefusal, ConstantOutsideTheWeightsSection) {
  // An offset that wraps offset + size around to 64 bytes, which once passed the bounds check.
  const std::string message = refusal(resealed([](plan::PlanHeader&, plan::Plan& p) {
    ASSERT_GT(p.graph().constants_size(), 0);
    plan::PlanTensor* t = p.mutable_graph()->mutable_constants(0)->mutable_tensor();
    ASSERT_GT(t->size_bytes(), 0u);
    t->set_offset(uint64_t{0} - t->size_bytes() + 64);
  }));
  EXPECT_NE(message.find("lies outside the weights section"), std::string::npos) << message;
}

TEST_F(PlanRefusal, ConstantNotAlignedInTheWeightsSection) {
  // Found by fuzz_plan_graph: a constant one byte off its 64-byte boundary was read in place as
  // floats at a misaligned address (UBSan, MatMul's weight transposition at plan load).
  const std::string message = refusal(resealed([](plan::PlanHeader&, plan::Plan& p) {
    ASSERT_GT(p.graph().constants_size(), 0);
    plan::PlanTensor* t = p.mutable_graph()->mutable_constants(0)->mutable_tensor();
    ASSERT_GT(t->size_bytes(), 0u);
    t->set_offset(t->offset() + 1);
  }));
  EXPECT_NE(message.find("is not aligned to 64 bytes"), std::string::npos) << message;
}

TEST_F(PlanRefusal, ChannelsLastFlagsTheKernelsRefuse) {
  // Found by fuzz_plan_graph: a Tanh whose plan said it read its input channels-last (which its
  // kernel only accepts for a per-channel Mul/Add/Sub/Div map) reached a fast path's internal
  // "not a 4-D float map" error at run time. The loader now asks each kernel, as the planner did.
  const std::string read_weights = refusal(resealed([](plan::PlanHeader&, plan::Plan& p) {
    for (auto& node : *p.mutable_graph()->mutable_nodes())
      if (node.spec().op_type() == "Conv") {
        node.add_reads_channels_last(1);  // its weights
        return;
      }
    FAIL() << "the demo plan has no Conv";
  }));
  EXPECT_NE(read_weights.find("reads input 1 channels-last, which its kernel cannot"), std::string::npos)
      << read_weights;
  const std::string pool_write = refusal(resealed([](plan::PlanHeader&, plan::Plan& p) {
    // A window pool writes channels-last only when it reads so.
    for (auto& node : *p.mutable_graph()->mutable_nodes())
      if (node.spec().op_type() == "MaxPool") {
        node.clear_reads_channels_last();
        node.set_writes_channels_last(true);
        return;
      }
    FAIL() << "the demo plan has no MaxPool";
  }));
  EXPECT_NE(pool_write.find("writes channels-last, which its kernel cannot"), std::string::npos) << pool_write;
}

TEST_F(PlanRefusal, ChannelsLastValueReadAsNchw) {
  // A producer writing channels-last to a reader that takes NCHW (or the reverse) would have the
  // reader take one layout's bytes for the other's.
  bool edited = false;
  const std::string message = refusal(resealed([&](plan::PlanHeader&, plan::Plan& p) {
    for (auto& node : *p.mutable_graph()->mutable_nodes())
      if (node.spec().op_type() == "Conv" && node.reads_channels_last_size() > 0) {
        node.clear_reads_channels_last();
        edited = true;
        return;
      }
  }));
  ASSERT_TRUE(edited) << "the demo plan hands no value over channels-last";
  EXPECT_NE(message.find("as NCHW, which its producer writes channels-last"), std::string::npos) << message;
}

TEST_F(PlanRefusal, ConstantSizeOverflowingItsShape) {
  // 2^62 float elements: their byte count (2^64) wraps to 0, the size_bytes stored.
  const std::string message = refusal(resealed([](plan::PlanHeader&, plan::Plan& p) {
    ASSERT_GT(p.graph().constants_size(), 0);
    plan::PlanTensor* t = p.mutable_graph()->mutable_constants(0)->mutable_tensor();
    t->set_dtype(static_cast<int>(DType::kFloat32));
    t->clear_shape();
    t->add_shape(int64_t{1} << 62);
    t->set_size_bytes(0);
  }));
  EXPECT_NE(message.find("does not match its shape"), std::string::npos) << message;
}


TEST_F(PlanRefusal, Truncated) {
  EXPECT_NE(refusal(bytes_.substr(0, bytes_.size() / 2)).find("is truncated"), std::string::npos);
  EXPECT_NE(refusal(bytes_.substr(0, 12)).find("is truncated"), std::string::npos);
  EXPECT_NE(refusal(bytes_.substr(0, bytes_.size() - 1)).find("is truncated"), std::string::npos);
}

TEST_F(PlanRefusal, CorruptedWeightsGraphOrHeader) {
  std::string weights = bytes_;
  weights[weights.size() - 3] ^= 0x10;  // the last bytes are weights
  EXPECT_NE(refusal(weights).find("weights checksum"), std::string::npos);
  std::string graph = bytes_;
  const size_t payload_at = (20 + get_u32(bytes_, 12) + 63) / 64 * 64;
  graph[payload_at + 5] ^= 0x01;
  EXPECT_NE(refusal(graph).find("graph section checksum"), std::string::npos);
  std::string header = bytes_;
  header[22] ^= 0x40;
  EXPECT_NE(refusal(header).find("header checksum"), std::string::npos);
  EXPECT_NE(refusal(bytes_ + "extra").find("is corrupted"), std::string::npos);
}

TEST_F(PlanRefusal, WrongFormatVersion) {
  std::string other = bytes_;
  put_u32(other, 8, plan::kPlanFormatVersion + 1);
  const std::string message = refusal(other);
  EXPECT_NE(message.find("plan format version " + std::to_string(plan::kPlanFormatVersion + 1)), std::string::npos)
      << message;
}

TEST_F(PlanRefusal, OtherParityVersion) {
  const std::string message = refusal(with_header([](plan::PlanHeader& h) {
    std::string v = h.parity_version();
    v[0] = v[0] == '9' ? '8' : '9';
    h.set_parity_version(v);
  }));
  EXPECT_NE(message.find("was built by parity 9"), std::string::npos) << message;
}

TEST_F(PlanRefusal, OtherMachine) {
  // A feature name no CPU reports, in place of the dnnl ISA string of the same length, so the
  // header keeps its size.
  const std::string message = refusal(with_header([](plan::PlanHeader& h) {
    h.mutable_machine()->add_cpu_features("amx-future");
    h.set_source_model(h.source_model().size() >= 12 ? h.source_model().substr(12) : "");
  }));
  EXPECT_NE(message.find("was built on another machine"), std::string::npos) << message;
  EXPECT_NE(message.find("amx-future"), std::string::npos) << message;
}

TEST_F(PlanRefusal, KernelIsaThisCpuLacksOrThisParityDoesNotKnow) {
  const std::string here = runtime::kernel_isa_name(runtime::cpu_kernel_isa());
  const std::string message =
      refusal(resealed([](plan::PlanHeader& h, plan::Plan&) { h.mutable_machine()->set_kernel_isa("avx1024"); }));
  EXPECT_NE(message.find("kernel ISA 'avx1024'"), std::string::npos) << message;
  EXPECT_NE(message.find("this CPU runs " + here), std::string::npos) << message;
  EXPECT_NE(message.find("parity convert MODEL --isa " + here + " -o PLAN"), std::string::npos) << message;
  // The same check on an AVX2-only CPU, for a plan built for AVX-512.
  const Status refused = plan::check_plan_kernel_isa("avx512", runtime::KernelIsa::kAvx2);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.message().find("kernel ISA avx512, which this CPU lacks (it runs avx2)"), std::string::npos)
      << refused.message();
  EXPECT_NE(refused.message().find("parity convert MODEL --isa avx2 -o PLAN"), std::string::npos) << refused.message();
  EXPECT_TRUE(plan::check_plan_kernel_isa("avx2", runtime::KernelIsa::kAvx512).is_ok());
  EXPECT_TRUE(plan::check_plan_kernel_isa("", runtime::KernelIsa::kBaseline).is_ok());
}

TEST_F(PlanRefusal, UnknownKernelSwitch) {
  const std::string message = refusal(resealed(
      [](plan::PlanHeader&, plan::Plan& p) { (*p.mutable_kernel_switches())["conv_future_direct"] = "on"; }));
  EXPECT_NE(message.find("unknown kernel switch 'conv_future_direct'"), std::string::npos) << message;
}

TEST_F(PlanRefusal, PlanWithoutKernelOptionsLoadsWithTheDefaults) {
  // Plans written before the options were recorded.
  const std::string old = resealed([](plan::PlanHeader& h, plan::Plan& p) {
    p.clear_kernel_switches();
    h.mutable_machine()->clear_kernel_isa();
  });
  auto loaded = plan::load_plan_bytes(old);
  ASSERT_TRUE(loaded.is_ok()) << loaded.error().what();
  EXPECT_TRUE(loaded.value().options().kernel_options == runtime::KernelOptions{});
}

TEST(PlanFile, RecordsTheKernelOptionsAndTheCappedIsa) {
  runtime::SessionOptions options;
  options.kernel_options.isa_cap = runtime::KernelIsa::kAvx2;
  options.kernel_options.conv_stem_direct = false;
  options.kernel_options.conv_channel_split = runtime::ChannelSplitPolicy::kAlways;
  options.kernel_options.conv_layout = runtime::ConvActivationLayout::kPointwisePlain;
  Session built = Session::create(testing::source_dir() / "models/demo.onnx", options).value();
  testing::TempDir dir;
  plan::save_plan(built, dir / "capped.plan", "demo.onnx");
  const plan::PlanSummary summary = plan::summarize_plan(dir / "capped.plan");
  const runtime::KernelIsa tier = runtime::min_isa(runtime::cpu_kernel_isa(), runtime::KernelIsa::kAvx2);
  EXPECT_EQ(summary.kernel_isa, runtime::kernel_isa_name(tier));
  for (const auto& feature : summary.cpu_features) EXPECT_EQ(feature.rfind("avx512", 0), std::string::npos) << feature;
  Session loaded = plan::load_plan(dir / "capped.plan").value();
  runtime::KernelOptions want = options.kernel_options;
  want.isa_cap = tier;
  EXPECT_TRUE(loaded.options().kernel_options == want);
}

TEST_F(PlanRefusal, NotAPlan) {
  EXPECT_NE(refusal("ir_version: 7 and not a plan at all").find("is not a parity plan"), std::string::npos);
}

}  // namespace
}  // namespace parity
