// Spec: none (parity's plan-time lowering of float16/bfloat16 graphs onto the float32 kernels)
// The rewrite alone on a hand-made graph (edges, Casts, cancelling pairs, weights, dtype
// attributes, what it declines), then whole models in float16 and bfloat16 (models/demo.onnx, the
// bench set's MobileNetV2, a transformer block) run lowered on the optimized tier against the
// reference tier, which computes every layer in the model's type (the oracle), on random and
// edge-case inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "model/model.h"
#include "model/proto_convert.h"
#include "model/transforms/extract.h"
#include "model/transforms/fp16.h"
#include "runtime/ops/op_tester.h"
#include "runtime/plan/plan_file.h"
#include "runtime/rewrites/reduced_float_lowering.h"
#include "runtime/session.h"
#include "runtime/subgraph.h"
#include "support/model_builder.h"
#include "support/test_support.h"

namespace parity::runtime {
namespace {

using testing::ModelBuilder;
namespace fs = std::filesystem;

constexpr int kF16 = onnx::TensorProto::FLOAT16;
constexpr int kF32 = onnx::TensorProto::FLOAT;

onnx::TypeProto tensor_type(int elem) {
  onnx::TypeProto t;
  t.mutable_tensor_type()->set_elem_type(elem);
  return t;
}

onnx::NodeProto node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(op + "_" + outputs[0]);
  for (const auto& i : inputs) n.add_input(i);
  for (const auto& o : outputs) n.add_output(o);
  return n;
}

void set_int(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

int64_t int_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return -1;
}

/// x (fp16 input) and w (fp16 weight) -> MatMul a; a -> Cast float -> Relu -> Cast fp16 d;
/// a -> Cast float e -> Cast fp16 f (a pair that cancels); y = d + f (fp16 output);
/// EyeLike(dtype fp16) and a fp16 Constant beside.
struct SmallGraph {
  std::vector<onnx::NodeProto> nodes;
  Tensor w = Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}).cast(DType::kFloat16);
  ReducedFloatGraph g;

  SmallGraph() {
    nodes.push_back(node("MatMul", {"x", "w"}, {"a"}));
    nodes.push_back(node("Cast", {"a"}, {"b"}));
    set_int(nodes.back(), "to", kF32);
    nodes.push_back(node("Relu", {"b"}, {"c"}));
    nodes.push_back(node("Cast", {"c"}, {"d"}));
    set_int(nodes.back(), "to", kF16);
    nodes.push_back(node("Cast", {"a"}, {"e"}));
    set_int(nodes.back(), "to", kF32);
    nodes.push_back(node("Cast", {"e"}, {"f"}));
    set_int(nodes.back(), "to", kF16);
    nodes.push_back(node("Add", {"d", "f"}, {"y"}));
    nodes.push_back(node("EyeLike", {"a"}, {"eye"}));
    set_int(nodes.back(), "dtype", kF16);
    nodes.push_back(node("Constant", {}, {"k"}));
    auto* value = nodes.back().add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    model::tensor_to_proto(Tensor::from_vector<float>({1}, {0.5f}).cast(DType::kFloat16), value->mutable_t());
    for (auto& n : nodes) g.nodes.push_back(&n);
    g.inputs = {"x"};
    g.outputs = {"y", "eye"};
    g.initializers = {{"w", &w}};
    for (const char* name : {"x", "w", "a", "d", "f", "y", "eye", "k"}) g.types[name] = tensor_type(kF16);
    for (const char* name : {"b", "c", "e"}) g.types[name] = tensor_type(kF32);
  }
};

TEST(ReducedFloatLowering, CarriesValuesAsFloat32WithConversionsAtEdgesAndCasts) {
  SmallGraph s;
  ASSERT_GT(lower_reduced_floats(s.g), 0);
  const auto& g = s.g;
  // The input is widened on entry; both outputs are computed under a carried name and narrowed.
  ASSERT_EQ(g.entry_nodes.size(), 1u);
  EXPECT_EQ(g.entry_nodes[0].input(0), "x");
  EXPECT_EQ(int_attr(g.entry_nodes[0], "to"), kF32);
  const std::string x_carried = g.entry_nodes[0].output(0);
  ASSERT_EQ(g.exit_nodes.size(), 2u);
  for (const auto& exit : g.exit_nodes) EXPECT_EQ(int_attr(exit, "to"), kF16);
  EXPECT_EQ(g.exit_nodes[0].output(0), "y");
  EXPECT_EQ(g.exit_nodes[1].output(0), "eye");
  // MatMul reads the carried input and the widened weight.
  EXPECT_EQ(s.nodes[0].input(0), x_carried);
  EXPECT_EQ(s.w.dtype(), DType::kFloat32);
  EXPECT_EQ(s.w.data<float>()[3], 4.0f);
  // fp16 -> fp32 Casts vanish (Relu reads a), the fp32 -> fp16 Cast rounds, the pair cancels.
  EXPECT_TRUE(g.removed[1]);
  EXPECT_EQ(s.nodes[2].input(0), "a");
  EXPECT_FALSE(g.removed[3]);
  EXPECT_EQ(s.nodes[3].op_type(), "RoundToReducedFloat");
  EXPECT_EQ(s.nodes[3].domain(), "ai.parity");
  EXPECT_EQ(int_attr(s.nodes[3], "to"), kF16);
  EXPECT_TRUE(g.removed[4]);
  EXPECT_TRUE(g.removed[5]);
  EXPECT_EQ(s.nodes[6].input(0), "d");
  EXPECT_EQ(s.nodes[6].input(1), "a");
  EXPECT_EQ(g.exit_nodes[0].input(0), s.nodes[6].output(0));
  EXPECT_NE(s.nodes[6].output(0), "y");
  // dtype attributes and constants ask for float32.
  EXPECT_EQ(int_attr(s.nodes[7], "dtype"), kF32);
  EXPECT_EQ(s.nodes[8].attribute(0).t().data_type(), kF32);
  // Kernels see float32 inside; the graph's edges keep float16.
  EXPECT_EQ(g.types.at("a").tensor_type().elem_type(), kF32);
  EXPECT_EQ(g.types.at("d").tensor_type().elem_type(), kF32);
  EXPECT_EQ(g.types.at(x_carried).tensor_type().elem_type(), kF32);
  EXPECT_EQ(g.types.at("x").tensor_type().elem_type(), kF16);
  EXPECT_EQ(g.types.at("y").tensor_type().elem_type(), kF16);
}

TEST(ReducedFloatLowering, AGraphThatChangesOnlyAtItsEdgesCountsAsLowered) {
  // Cast(float16 input) -> float32 output: nothing inside, but the input is widened on entry.
  ReducedFloatGraph g;
  onnx::NodeProto cast = node("Cast", {"x"}, {"y"});
  set_int(cast, "to", kF32);
  g.nodes = {&cast};
  g.inputs = {"x"};
  g.outputs = {"y"};
  g.types = {{"x", tensor_type(kF16)}, {"y", tensor_type(kF32)}};
  EXPECT_GT(lower_reduced_floats(g), 0);
  ASSERT_EQ(g.entry_nodes.size(), 1u);
  EXPECT_FALSE(g.removed[0]);  // it produces a graph output
  EXPECT_EQ(cast.input(0), g.entry_nodes[0].output(0));
}

TEST(ReducedFloatLowering, DeclinesGraphsItCannotLowerAndLeavesFloat32GraphsAlone) {
  {
    SmallGraph s;
    s.nodes.push_back(node("If", {"cond"}, {"z"}));
    auto* branch = s.nodes.back().add_attribute();
    branch->set_name("then_branch");
    branch->set_type(onnx::AttributeProto::GRAPH);
    branch->mutable_g()->set_name("then");
    s.g.nodes.push_back(&s.nodes.back());
    const std::string before = s.nodes[3].SerializeAsString();
    EXPECT_EQ(lower_reduced_floats(s.g), 0);
    EXPECT_EQ(s.nodes[3].SerializeAsString(), before);
    EXPECT_EQ(s.w.dtype(), DType::kFloat16);
    EXPECT_TRUE(s.g.entry_nodes.empty());
  }
  {
    SmallGraph s;
    s.nodes[2].set_domain("com.example");
    EXPECT_EQ(lower_reduced_floats(s.g), 0);
  }
  {
    ReducedFloatGraph g;
    onnx::NodeProto relu = node("Relu", {"x"}, {"y"});
    g.nodes = {&relu};
    g.inputs = {"x"};
    g.outputs = {"y"};
    g.types = {{"x", tensor_type(kF32)}, {"y", tensor_type(kF32)}};
    EXPECT_EQ(lower_reduced_floats(g), 0);
    EXPECT_EQ(relu.input(0), "x");
  }
}

// --- whole models ---

onnx::ModelProto load(const fs::path& path) {
  auto m = model::load_model(path);
  if (!m) throw m.error();
  return m.value().proto();
}

onnx::ModelProto to_float16(const onnx::ModelProto& fp32, bool keep_io_types) {
  model::Model m(std::make_unique<onnx::ModelProto>(fp32));
  auto g = model::transforms::graph_with_inferred_types(m);
  model::transforms::Fp16Options options;
  options.keep_io_types = keep_io_types;
  model::transforms::convert_to_fp16(*g, options);
  return g->to_model().proto();
}

/// The float16 model with bfloat16 in place of every float16 (values, types, Casts).
onnx::ModelProto float16_to_bfloat16(onnx::ModelProto m) {
  auto retype = [](onnx::TypeProto* t) {
    if (t->has_tensor_type() && t->tensor_type().elem_type() == kF16)
      t->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BFLOAT16);
  };
  auto retensor = [](onnx::TensorProto* t) {
    if (t->data_type() != kF16) return;
    const Tensor bf = model::tensor_from_proto(*t).cast(DType::kBFloat16);
    const std::string name = t->name();
    t->Clear();
    model::tensor_to_proto(bf, t, name);
  };
  auto* g = m.mutable_graph();
  for (auto& v : *g->mutable_input()) retype(v.mutable_type());
  for (auto& v : *g->mutable_output()) retype(v.mutable_type());
  g->clear_value_info();
  for (auto& t : *g->mutable_initializer()) retensor(&t);
  for (auto& n : *g->mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (a.type() == onnx::AttributeProto::TENSOR) retensor(a.mutable_t());
      if (a.type() == onnx::AttributeProto::INT && (a.name() == "to" || a.name() == "dtype") && a.i() == kF16)
        a.set_i(onnx::TensorProto::BFLOAT16);
    }
  return m;
}

Session make_session(const onnx::ModelProto& m, KernelTier tier, ReducedFloatCompute mode = ReducedFloatCompute::kCarryFloat32,
                     int threads = 1) {
  SessionOptions options;
  options.kernels = tier;
  options.reduced_floats = mode;
  options.threads = threads;
  auto s = Session::create(m, options);
  if (!s) throw s.error();
  return std::move(s).value();
}

enum class Inputs { kRandom, kNaNAndInf, kOverflowRange, kSubnormal };

/// Feeds for every input at its declared shape (dynamic dims 1), in the declared dtype.
TensorMap feeds(const Session& s, Inputs kind, uint32_t seed) {
  TensorMap feed;
  for (const auto& meta : s.input_metadata()) {
    Shape shape;
    for (const auto& d : meta.shape.dims) shape.push_back(d.is_static() ? d.value : 1);
    Tensor t = testing::random_uniform(shape, seed++, -1, 1);
    float* v = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (kind == Inputs::kNaNAndInf && i % 97 == 0) v[i] = (i / 97) % 3 == 0 ? NAN : (i / 97) % 3 == 1 ? INFINITY : -INFINITY;
      if (kind == Inputs::kOverflowRange) v[i] *= 60000.0f;  // float16's largest finite value is 65504
      if (kind == Inputs::kSubnormal) v[i] *= 1e-6f;         // float16's subnormals are below 6.1e-5
    }
    feed.set(meta.name, t.cast(meta.dtype));
  }
  return feed;
}

struct Gap {
  double worst = 0;       // max |lowered - reference| over finite reference values
  double scale = 0;       // max |reference| over finite values
  int64_t mismatched_specials = 0;  // NaN/Inf in one and not the same in the other
};

Gap gap(const Tensor& lowered, const Tensor& reference) {
  Gap g;
  for (int64_t i = 0; i < reference.numel(); ++i) {
    const double a = lowered.value_as_double(i), e = reference.value_as_double(i);
    if (!std::isfinite(e) || !std::isfinite(a)) {
      g.mismatched_specials += !(std::isnan(a) && std::isnan(e)) && a != e;
      continue;
    }
    g.worst = std::max(g.worst, std::fabs(a - e));
    g.scale = std::max(g.scale, std::fabs(e));
  }
  return g;
}

/// Runs `m` lowered (optimized tier) and strict (reference tier) on `kind` inputs: the lowered
/// plan runs optimized kernels, keeps the declared output dtypes, and stays within `rtol` of the
/// largest reference magnitude (plus one float16 step at that magnitude) where the reference is
/// finite. Returns the special values (NaN/Inf) on which the two differ.
int64_t expect_close_to_reference(const onnx::ModelProto& m, Inputs kind, double rtol, const std::string& what) {
  const Session lowered = make_session(m, KernelTier::kOptimized);
  const Session strict = make_session(m, KernelTier::kReference);
  EXPECT_GT(lowered.plan().reduced_float_values_, 0) << what;
  int optimized = 0;
  for (const auto& n : lowered.plan().nodes_) optimized += n.tactic.rfind("optimized:", 0) == 0;
  EXPECT_GT(optimized, 0) << what << ": no optimized kernel in the lowered plan";
  const TensorMap feed = feeds(lowered, kind, 7);
  const TensorMap a = lowered.run(feed), e = strict.run(feed);
  int64_t specials = 0;
  for (const auto& name : strict.output_names()) {
    EXPECT_EQ(a.at(name).dtype(), e.at(name).dtype()) << what << " output " << name;
    const Gap g = gap(a.at(name).cast(DType::kFloat32), e.at(name).cast(DType::kFloat32));
    EXPECT_LE(g.worst, rtol * g.scale + std::ldexp(g.scale, -10) + 1e-6)
        << what << " output " << name << ": worst " << g.worst << " at scale " << g.scale;
    specials += g.mismatched_specials;
  }
  return specials;
}

fs::path demo_model() { return testing::source_dir() / "models/demo.onnx"; }
fs::path mobilenet_model() { return testing::source_dir() / ".cache/bench-models/mobilenet_v2.onnx"; }

/// A transformer encoder block: LayerNormalization, single-head attention (MatMul, Softmax),
/// exact GELU (as torch exports it: x * (erf(x / sqrt2) + 1) * 0.5) and a residual Add.
onnx::ModelProto transformer_block() {
  ModelBuilder b(17);
  const int64_t seq = 8, dim = 16, hidden = 32;
  b.input("x", DType::kFloat32, {1, seq, dim});
  uint32_t seed = 40;
  auto weight = [&](const std::string& name, const Shape& shape) {
    b.initializer(name, testing::random_uniform(shape, seed++, -0.5f, 0.5f));
  };
  weight("gamma", {dim});
  weight("beta", {dim});
  for (const char* w : {"wq", "wk", "wv"}) weight(w, {dim, dim});
  weight("w1", {dim, hidden});
  weight("b1", {hidden});
  weight("w2", {hidden, dim});
  b.initializer("scale", Tensor::from_vector<float>({1}, {0.25f}));
  b.initializer("sqrt2", Tensor::from_vector<float>({1}, {1.41421356f}));
  b.initializer("one", Tensor::from_vector<float>({1}, {1.0f}));
  b.initializer("half", Tensor::from_vector<float>({1}, {0.5f}));
  b.initializer("perm_shape", Tensor::from_vector<int64_t>({3}, {1, dim, seq}));
  auto& ln = b.node("LayerNormalization", {"x", "gamma", "beta"}, {"n"}, "ln");
  testing::add_int_attr(ln, "axis", -1);
  b.node("MatMul", {"n", "wq"}, {"q"}, "q");
  b.node("MatMul", {"n", "wk"}, {"k"}, "k");
  b.node("MatMul", {"n", "wv"}, {"v"}, "v");
  auto& kt = b.node("Transpose", {"k"}, {"kt"}, "kt");
  testing::add_ints_attr(kt, "perm", {0, 2, 1});
  b.node("MatMul", {"q", "kt"}, {"s"}, "scores");
  b.node("Mul", {"s", "scale"}, {"ss"}, "scaled");
  auto& sm = b.node("Softmax", {"ss"}, {"p"}, "softmax");
  testing::add_int_attr(sm, "axis", -1);
  b.node("MatMul", {"p", "v"}, {"att"}, "context");
  b.node("Add", {"x", "att"}, {"r"}, "residual");
  b.node("MatMul", {"r", "w1"}, {"h0"}, "fc1");
  b.node("Add", {"h0", "b1"}, {"h"}, "fc1_bias");
  b.node("Div", {"h", "sqrt2"}, {"g0"}, "gelu_div");
  b.node("Erf", {"g0"}, {"g1"}, "gelu_erf");
  b.node("Add", {"g1", "one"}, {"g2"}, "gelu_add");
  b.node("Mul", {"h", "g2"}, {"g3"}, "gelu_mul");
  b.node("Mul", {"g3", "half"}, {"g"}, "gelu_half");
  b.node("MatMul", {"g", "w2"}, {"f"}, "fc2");
  b.node("Add", {"r", "f"}, {"y"}, "out");
  b.output("y", DType::kFloat32, {1, seq, dim});
  return b.model();
}

struct ModelCase {
  std::string name;
  std::function<onnx::ModelProto()> fp32;
  double rtol;
};

std::vector<ModelCase> model_cases() {
  return {{"demo", [] { return load(demo_model()); }, 1e-2},
          {"mobilenet_v2", [] { return load(mobilenet_model()); }, 2e-2},
          {"transformer_block", transformer_block, 1e-2}};
}

TEST(ReducedFloatLowering, Float16AndBfloat16ModelsMatchTheReferenceTierOnRandomInputs) {
  for (const auto& c : model_cases()) {
    const onnx::ModelProto fp32 = c.fp32();
    for (bool keep_io : {true, false}) {
      const onnx::ModelProto fp16 = to_float16(fp32, keep_io);
      const std::string io = keep_io ? " (float32 inputs/outputs)" : " (float16 inputs/outputs)";
      EXPECT_EQ(expect_close_to_reference(fp16, Inputs::kRandom, c.rtol, c.name + " fp16" + io), 0);
      // bfloat16 keeps 8 significant bits: its per-layer rounding moves outputs 8x further.
      EXPECT_EQ(expect_close_to_reference(float16_to_bfloat16(fp16), Inputs::kRandom, 8 * c.rtol,
                                          c.name + " bf16" + io), 0);
    }
  }
}

TEST(ReducedFloatLowering, EdgeCaseInputsKeepTheReferenceSpecialValues) {
  for (const auto& c : model_cases()) {
    const onnx::ModelProto fp16 = to_float16(c.fp32(), /*keep_io_types=*/false);
    // Subnormal float16 inputs: the carried values are float32, so nothing flushes.
    EXPECT_EQ(expect_close_to_reference(fp16, Inputs::kSubnormal, c.rtol, c.name + " subnormal"), 0);
    // NaN and +-Inf inputs: the lowered plan's special values differ from the reference's no more
    // than the optimized float32 kernels' do on the float32 model (their Relu and max pooling
    // drop a NaN as the ONNX spec allows).
    const int64_t lowered = expect_close_to_reference(fp16, Inputs::kNaNAndInf, c.rtol, c.name + " NaN/Inf");
    const onnx::ModelProto fp32 = c.fp32();
    const Session optimized = make_session(fp32, KernelTier::kOptimized), reference = make_session(fp32, KernelTier::kReference);
    const TensorMap feed = feeds(optimized, Inputs::kNaNAndInf, 7);
    const TensorMap a = optimized.run(feed), e = reference.run(feed);
    int64_t fp32_specials = 0;
    for (const auto& name : reference.output_names()) fp32_specials += gap(a.at(name), e.at(name)).mismatched_specials;
    EXPECT_LE(lowered, fp32_specials) << c.name;
    // Inputs near float16's largest value: where the reference's per-layer float16 overflows to
    // Inf (or Inf - Inf to NaN) and the carried float32 does not, the lowered output is the one
    // exact arithmetic gives (the fp64 oracle, its outputs narrowed to float16 as declared).
    if (expect_close_to_reference(fp16, Inputs::kOverflowRange, c.rtol, c.name + " overflow") == 0) continue;
    SessionOptions exact;
    exact.precision = Precision::kFloat64;
    auto oracle = Session::create(fp16, exact);
    ASSERT_TRUE(oracle) << oracle.error().what();
    const Session lowered_session = make_session(fp16, KernelTier::kOptimized);
    const TensorMap big = feeds(lowered_session, Inputs::kOverflowRange, 7);
    const TensorMap got = lowered_session.run(big), want = oracle.value().run(big);
    for (const auto& name : oracle.value().output_names())
      EXPECT_EQ(gap(got.at(name).cast(DType::kFloat32), want.at(name).cast(DType::kFloat32)).mismatched_specials, 0)
          << c.name << " output " << name;
  }
}

TEST(ReducedFloatLowering, StrictOptionKeepsPerLayerRoundingAndObserversSeeTheModelTypes) {
  const onnx::ModelProto fp16 = to_float16(load(demo_model()), /*keep_io_types=*/false);
  const Session strict_optimized = make_session(fp16, KernelTier::kOptimized, ReducedFloatCompute::kStrict);
  const Session strict_reference = make_session(fp16, KernelTier::kReference);
  EXPECT_EQ(strict_optimized.plan().reduced_float_values_, 0);
  const TensorMap feed = feeds(strict_reference, Inputs::kRandom, 3);
  const TensorMap a = strict_optimized.run(feed), e = strict_reference.run(feed);
  for (const auto& name : strict_reference.output_names())
    EXPECT_TRUE(testing::tensors_close(a.at(name), e.at(name), 1e-3, 1e-2)) << name;
  // A hook sees every value in its declared dtype, as the strict plan computes it.
  const Session lowered = make_session(fp16, KernelTier::kOptimized);
  RunOptions options;
  int seen = 0, float16 = 0;
  options.hook = [&](const std::string&, const Value& v) {
    if (!v.is_tensor() || !is_floating(v.tensor().dtype())) return;
    ++seen;
    float16 += v.tensor().dtype() == DType::kFloat16;
  };
  lowered.run(feed, options);
  EXPECT_GT(seen, 0);
  EXPECT_EQ(float16, seen);
}

TEST(ReducedFloatLowering, APlanOfAFloat16ModelKeepsTheLoweringAndItsNumbers) {
  const onnx::ModelProto fp16 = to_float16(load(demo_model()), /*keep_io_types=*/false);
  const Session lowered = make_session(fp16, KernelTier::kOptimized);
  auto reloaded = plan::load_plan_bytes(plan::plan_to_bytes(lowered));
  ASSERT_TRUE(reloaded) << reloaded.error().what();
  const Session& plan = reloaded.value();
  int optimized = 0;
  for (const auto& n : plan.plan().nodes_) optimized += n.tactic.rfind("optimized:", 0) == 0;
  EXPECT_GT(optimized, 0);
  const TensorMap feed = feeds(lowered, Inputs::kRandom, 11);
  const TensorMap a = lowered.run(feed), b = plan.run(feed);
  for (const auto& name : lowered.output_names()) {
    EXPECT_EQ(b.at(name).dtype(), DType::kFloat16);
    EXPECT_TRUE(a.at(name).bit_equal(b.at(name))) << name;
  }
}

TEST(ReducedFloatLowering, TwoThreadsGiveTheOneThreadNumbers) {
  const onnx::ModelProto fp16 = to_float16(load(mobilenet_model()), /*keep_io_types=*/true);
  const Session one = make_session(fp16, KernelTier::kOptimized, ReducedFloatCompute::kCarryFloat32, 1);
  const Session two = make_session(fp16, KernelTier::kOptimized, ReducedFloatCompute::kCarryFloat32, 2);
  const TensorMap feed = feeds(one, Inputs::kRandom, 5);
  const TensorMap a = one.run(feed), b = two.run(feed);
  for (const auto& name : one.output_names())
    EXPECT_TRUE(testing::tensors_close(a.at(name), b.at(name), 1e-5, 1e-4)) << name;
}

}  // namespace
}  // namespace parity::runtime
