// The two kernel tiers: optimized kernels are chosen beside the reference ones, may decline a
// node, never serve the fp64 oracle, and may fuse the elementwise node that consumes their output
// while hooks and intermediate outputs still see every value. The kernels here live in a private
// test domain so the tests do not depend on which real ops have optimized kernels.
#include <gtest/gtest.h>

#include <atomic>

#include "support/model_builder.h"
#include "runtime/session.h"

namespace parity::runtime {
namespace {

using testing::ModelBuilder;
using testing::add_int_attr;

constexpr const char* kDomain = "test.tier";

std::atomic<int> optimized_runs{0};
std::atomic<int> reference_add_one_runs{0};

/// y = 2x in both tiers; the optimized one counts its runs.
class DoubleReference : public Kernel {
 public:
  explicit DoubleReference(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.allocate_output(0, x.dtype(), x.shape());
    visit_dtype(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_arithmetic_v<T>)
        for (int64_t i = 0; i < x.numel(); ++i) y.data<T>()[i] = static_cast<T>(2 * x.data<T>()[i]);
    });
  }
};

/// Optimized Double: float32 only (delegates the rest), declines nodes with decline=1, and fuses
/// AddOne (x+1) and Add (x+z) tails.
class DoubleOptimized : public Kernel, public FusableKernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    if (init.attr_int("decline", 0)) return nullptr;
    return std::unique_ptr<Kernel>(new DoubleOptimized(init));
  }
  bool fuse_tail(const KernelInit& tail, size_t first_extra_input) override {
    if (tail.spec().domain == kDomain && tail.op_type() == "AddOne") {
      plus_ones_ += 1;
      return true;
    }
    if (tail.spec().domain.empty() && tail.op_type() == "Add" && tail.num_inputs() == 2 && extra_input_ < 0) {
      extra_input_ = static_cast<int>(first_extra_input);
      return true;
    }
    return false;
  }
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::kFloat32) return reference_->compute(ctx);
    ++optimized_runs;
    Tensor& y = ctx.allocate_output_uninitialized(0, x.dtype(), x.shape());
    const Tensor* z = extra_input_ >= 0 ? &ctx.input(extra_input_) : nullptr;
    if (z && z->shape() != x.shape()) ctx.fail("test kernel only fuses same-shape Add");
    for (int64_t i = 0; i < x.numel(); ++i)
      y.data<float>()[i] = 2 * x.data<float>()[i] + plus_ones_ + (z ? z->data<float>()[i] : 0.f);
  }

 private:
  explicit DoubleOptimized(const KernelInit& init) : reference_(init.create_reference_kernel()) {}
  std::unique_ptr<Kernel> reference_;
  float plus_ones_ = 0;
  int extra_input_ = -1;
};

class AddOneReference : public Kernel {
 public:
  explicit AddOneReference(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    ++reference_add_one_runs;
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.allocate_output(0, DType::kFloat32, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = x.data<float>()[i] + 1;
  }
};

/// Scale has different semantics from version 13 on; only version 1 has an optimized kernel.
class ScaleV1 : public DoubleReference {
  using DoubleReference::DoubleReference;
};
class ScaleV13 : public DoubleReference {
  using DoubleReference::DoubleReference;
};
class ScaleV1Optimized : public DoubleOptimized {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) { return DoubleOptimized::create(init); }
};

PARITY_REGISTER_KERNEL("test.tier", "Double", 1, DoubleReference);
PARITY_REGISTER_OPTIMIZED_KERNEL("test.tier", "Double", 1, DoubleOptimized);
PARITY_REGISTER_KERNEL("test.tier", "AddOne", 1, AddOneReference);
PARITY_REGISTER_KERNEL("test.tier", "Scale", 1, ScaleV1);
PARITY_REGISTER_KERNEL("test.tier", "Scale", 13, ScaleV13);
PARITY_REGISTER_OPTIMIZED_KERNEL("test.tier", "Scale", 1, ScaleV1Optimized);


onnx::ModelProto with_domain(ModelBuilder& b, int domain_opset = 1) {
  onnx::ModelProto m = b.model();
  auto* o = m.add_opset_import();
  o->set_domain(kDomain);
  o->set_version(domain_opset);
  return m;
}

onnx::NodeProto& domain_node(ModelBuilder& b, const std::string& op, std::initializer_list<std::string> in,
                             std::initializer_list<std::string> out, const std::string& name) {
  auto& n = b.node(op, in, out, name);
  n.set_domain(kDomain);
  return n;
}

Tensor input_tensor() { return Tensor::from_vector<float>({4}, {1, -2, 3.5f, 0}); }

std::vector<float> values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

Session make_session(const onnx::ModelProto& m, SessionOptions options = {}) {
  auto s = Session::create(m, options);
  if (!s) throw s.error();
  return std::move(s).value();
}

TEST(KernelTier, RegistryPicksOptimizedOnlyWhereItCoversTheReferenceSemantics) {
  const auto& registry = KernelRegistry::instance();
  const KernelDef* double_ref = registry.resolve(kDomain, "Double", 5);
  ASSERT_NE(double_ref, nullptr);
  EXPECT_EQ(double_ref->tier, KernelTier::kReference);
  const KernelDef* double_opt = registry.resolve_optimized(*double_ref, 5);
  ASSERT_NE(double_opt, nullptr);
  EXPECT_EQ(double_opt->tier, KernelTier::kOptimized);

  const KernelDef* scale_old = registry.resolve(kDomain, "Scale", 12);
  ASSERT_NE(scale_old, nullptr);
  EXPECT_NE(registry.resolve_optimized(*scale_old, 12), nullptr);
  const KernelDef* scale_new = registry.resolve(kDomain, "Scale", 13);
  ASSERT_NE(scale_new, nullptr);
  EXPECT_EQ(scale_new->since_version, 13);
  EXPECT_EQ(registry.resolve_optimized(*scale_new, 13), nullptr) << "an optimized v1 kernel must not serve v13";
  EXPECT_EQ(registry.versions(kDomain, "Scale"), (std::vector<int>{1, 13}));
}

TEST(KernelTier, SessionUsesOptimizedKernelsByDefaultAndReferenceOnRequest) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {4}).output("y", DType::kFloat32, {4});
  domain_node(b, "Double", {"x"}, {"y"}, "double");
  const auto model = with_domain(b);
  TensorMap feed;
  feed.set("x", input_tensor());

  optimized_runs = 0;
  EXPECT_EQ(values(make_session(model).run(feed).at("y")), (std::vector<float>{2, -4, 7, 0}));
  EXPECT_EQ(optimized_runs, 1);

  SessionOptions reference;
  reference.kernels = KernelTier::kReference;
  optimized_runs = 0;
  EXPECT_EQ(values(make_session(model, reference).run(feed).at("y")), (std::vector<float>{2, -4, 7, 0}));
  EXPECT_EQ(optimized_runs, 0);

  SessionOptions oracle;
  oracle.precision = Precision::kFloat64;
  optimized_runs = 0;
  EXPECT_EQ(values(make_session(model, oracle).run(feed).at("y")), (std::vector<float>{2, -4, 7, 0}));
  EXPECT_EQ(optimized_runs, 0) << "the fp64 oracle must use the reference kernels";
}

TEST(KernelTier, DeclinedNodesAndUnsupportedDtypesRunTheReferenceKernel) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {4}).output("y", DType::kFloat32, {4});
  add_int_attr(domain_node(b, "Double", {"x"}, {"y"}, "declined"), "decline", 1);
  TensorMap feed;
  feed.set("x", input_tensor());
  optimized_runs = 0;
  EXPECT_EQ(values(make_session(with_domain(b)).run(feed).at("y")), (std::vector<float>{2, -4, 7, 0}));
  EXPECT_EQ(optimized_runs, 0);

  ModelBuilder ints;
  ints.input("x", DType::kInt32, {2}).output("y", DType::kInt32, {2});
  domain_node(ints, "Double", {"x"}, {"y"}, "int_double");
  TensorMap int_feed;
  int_feed.set("x", Tensor::from_vector<int32_t>({2}, {3, -5}));
  optimized_runs = 0;
  const Tensor y = make_session(with_domain(ints)).run(int_feed).at("y");
  EXPECT_EQ(y.data<int32_t>()[0], 6);
  EXPECT_EQ(y.data<int32_t>()[1], -10);
  EXPECT_EQ(optimized_runs, 0) << "int32 is delegated to the reference kernel at run time";
}

/// x -> Double -> t -> AddOne -> u -> Add(u, z) -> y
onnx::ModelProto chain_model() {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {4}).input("z", DType::kFloat32, {4}).output("y", DType::kFloat32, {4});
  domain_node(b, "Double", {"x"}, {"t"}, "double");
  domain_node(b, "AddOne", {"t"}, {"u"}, "add_one");
  b.node("Add", {"u", "z"}, {"y"}, "residual");
  return with_domain(b);
}

TensorMap chain_feed() {
  TensorMap feed;
  feed.set("x", input_tensor());
  feed.set("z", Tensor::from_vector<float>({4}, {10, 20, 30, 40}));
  return feed;
}

const std::vector<float> kChainExpected{13, 17, 38, 41};  // 2x + 1 + z

TEST(KernelTier, FusionAbsorbsTailsIncludingOnesWithExtraInputs) {
  const Session session = make_session(chain_model());
  reference_add_one_runs = 0;
  EXPECT_EQ(values(session.run(chain_feed()).at("y")), kChainExpected);
  EXPECT_EQ(reference_add_one_runs, 0) << "AddOne should have been fused into Double";

  SessionOptions unfused;
  unfused.fuse = false;
  reference_add_one_runs = 0;
  EXPECT_EQ(values(make_session(chain_model(), unfused).run(chain_feed()).at("y")), kChainExpected);
  EXPECT_EQ(reference_add_one_runs, 1);
}

TEST(KernelTier, HooksAndIntermediateOutputsSeeEveryValueOfAFusedModel) {
  const Session session = make_session(chain_model());
  std::vector<std::string> seen;
  RunOptions observe;
  observe.hook = [&](const std::string& name, const Value&) { seen.push_back(name); };
  EXPECT_EQ(values(session.run(chain_feed(), observe).at("y")), kChainExpected);
  EXPECT_EQ(seen, (std::vector<std::string>{"t", "u", "y"}));
  EXPECT_EQ(session.intermediate_names(), (std::vector<std::string>{"t", "u", "y"}));

  RunOptions intermediates;
  intermediates.outputs = {"t", "u"};
  const TensorMap out = session.run(chain_feed(), intermediates);
  EXPECT_EQ(values(out.at("t")), (std::vector<float>{2, -4, 7, 0}));
  EXPECT_EQ(values(out.at("u")), (std::vector<float>{3, -3, 8, 1}));

  // And the fused plan is still used for plain runs afterwards.
  reference_add_one_runs = 0;
  EXPECT_EQ(values(session.run(chain_feed()).at("y")), kChainExpected);
  EXPECT_EQ(reference_add_one_runs, 0);
}

TEST(KernelTier, NoFusionAcrossAValueWithTwoConsumersOrAGraphOutput) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {4}).output("y", DType::kFloat32, {4}).output("t", DType::kFloat32, {4});
  domain_node(b, "Double", {"x"}, {"t"}, "double");
  domain_node(b, "AddOne", {"t"}, {"y"}, "add_one");
  TensorMap feed;
  feed.set("x", input_tensor());
  reference_add_one_runs = 0;
  const TensorMap out = make_session(with_domain(b)).run(feed);
  EXPECT_EQ(values(out.at("t")), (std::vector<float>{2, -4, 7, 0}));
  EXPECT_EQ(values(out.at("y")), (std::vector<float>{3, -3, 8, 1}));
  EXPECT_EQ(reference_add_one_runs, 1) << "t is a graph output, so AddOne must not be fused";

  ModelBuilder two;
  two.input("x", DType::kFloat32, {4}).output("y", DType::kFloat32, {4}).output("w", DType::kFloat32, {4});
  domain_node(two, "Double", {"x"}, {"t"}, "double");
  domain_node(two, "AddOne", {"t"}, {"y"}, "add_one");
  domain_node(two, "Double", {"t"}, {"w"}, "second_consumer");
  reference_add_one_runs = 0;
  const TensorMap out2 = make_session(with_domain(two)).run(feed);
  EXPECT_EQ(values(out2.at("y")), (std::vector<float>{3, -3, 8, 1}));
  EXPECT_EQ(values(out2.at("w")), (std::vector<float>{4, -8, 14, 0}));
  EXPECT_EQ(reference_add_one_runs, 1);
}

TEST(KernelTier, ATailWhoseOtherInputIsProducedLaterIsNotFused) {
  // z2 = Double(z) is computed after t = Double(x) in plan order, so y = Add(t, z2) cannot move up.
  ModelBuilder b;
  b.input("x", DType::kFloat32, {4}).input("z", DType::kFloat32, {4}).output("y", DType::kFloat32, {4});
  domain_node(b, "Double", {"x"}, {"t"}, "first");
  domain_node(b, "Double", {"z"}, {"z2"}, "second");
  b.node("Add", {"t", "z2"}, {"y"}, "late_add");
  TensorMap feed = chain_feed();
  EXPECT_EQ(values(make_session(with_domain(b)).run(feed).at("y")), (std::vector<float>{22, 36, 67, 80}));
}

}  // namespace
}  // namespace parity::runtime
