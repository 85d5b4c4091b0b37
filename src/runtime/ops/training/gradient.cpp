// Spec: https://onnx.ai/onnx/operators/onnx_aionnxpreviewtraining_Gradient.html
// Gradient (ai.onnx.preview.training).
//
// Reverse-mode differentiation of the part of the enclosing graph that computes `y` from `xs`.
// Reference tier: the differentiated ops are the elementwise Add, Sub, Mul, Div, Neg and Identity
// on tensors of equal shape (or scalars), computed in double; anything else is reported as
// unsupported with the op's name.
#include <onnx/onnx_pb.h>

#include <map>
#include <set>

#include "runtime/kernel.h"
#include "runtime/subgraph.h"

namespace parity::runtime {
namespace {

using Vec = std::vector<double>;

struct Step {
  std::string op;
  std::vector<std::string> inputs;
  std::string output;
};

Vec read(const Tensor& t) {
  Vec v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.value_as_double(i);
  return v;
}

double at(const Vec& v, size_t i) { return v.size() == 1 ? v[0] : v[i]; }

class Gradient : public Kernel {
 public:
  explicit Gradient(const KernelInit& init) {
    xs_ = init.attr_strings("xs");
    y_ = init.attr_string("y");
    if (init.has_attr("zs")) init.fail("the 'zs' attribute is not supported");
    const auto* access = dynamic_cast<const GraphAccess*>(&init);
    if (!access) init.fail("needs the enclosing graph (only available inside the executor)");
    const onnx::GraphProto* graph = &access->graph_proto();
    std::map<std::string, const onnx::NodeProto*> producer;
    for (const auto& n : graph->node())
      for (const auto& o : n.output()) producer[o] = &n;
    // Nodes between xs and y, in dependency order.
    std::set<std::string> leaves(xs_.begin(), xs_.end()), visited;
    std::function<void(const std::string&)> visit = [&](const std::string& name) {
      if (leaves.count(name) || visited.count(name)) return;
      visited.insert(name);
      auto it = producer.find(name);
      if (it == producer.end()) init.fail("value '", name, "' on the path to '", y_, "' is not computed from xs");
      const auto& n = *it->second;
      static const std::set<std::string> kSupported = {"Add", "Sub", "Mul", "Div", "Neg", "Identity"};
      if (!kSupported.count(n.op_type()))
        fail_at({.node = init.node_error_name()}, ErrorCode::kUnsupported, init.node_label(), ": differentiating op '", n.op_type(),
             "' is not supported (supported: Add, Sub, Mul, Div, Neg, Identity)");
      for (const auto& in : n.input()) visit(in);
      steps_.push_back({n.op_type(), {n.input().begin(), n.input().end()}, name});
    };
    visit(y_);
  }

  void compute(KernelContext& ctx) const override {
    std::map<std::string, Vec> value;
    Shape shape;
    DType dtype = DType::kFloat32;
    for (size_t i = 0; i < xs_.size(); ++i) {
      const Tensor& x = ctx.input(i);
      value[xs_[i]] = read(x);
      if (x.numel() > 1) shape = x.shape();
      dtype = x.dtype();
    }
    auto size_of = [](const Vec& a, const Vec& b) { return std::max(a.size(), b.size()); };
    for (const auto& s : steps_) {
      const Vec& a = value.at(s.inputs[0]);
      Vec out;
      if (s.op == "Neg" || s.op == "Identity") {
        out = a;
        if (s.op == "Neg")
          for (auto& v : out) v = -v;
      } else {
        const Vec& b = value.at(s.inputs[1]);
        if (a.size() != b.size() && a.size() != 1 && b.size() != 1) ctx.fail("only equal shapes or scalars are supported");
        out.resize(size_of(a, b));
        for (size_t i = 0; i < out.size(); ++i) {
          const double x = at(a, i), y = at(b, i);
          out[i] = s.op == "Add" ? x + y : s.op == "Sub" ? x - y : s.op == "Mul" ? x * y : x / y;
        }
      }
      value[s.output] = std::move(out);
    }
    // Backward pass.
    std::map<std::string, Vec> grad;
    grad[y_] = Vec(value.at(y_).size(), 1.0);
    auto accumulate = [&](const std::string& name, const Vec& g) {
      Vec& dst = grad[name];
      const size_t n = value.at(name).size();
      if (dst.empty()) dst.assign(n, 0.0);
      for (size_t i = 0; i < g.size(); ++i) dst[n == 1 ? 0 : i] += g[i];
    };
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
      auto g_it = grad.find(it->output);
      if (g_it == grad.end()) continue;
      const Vec g = g_it->second;
      const Vec& a = value.at(it->inputs[0]);
      if (it->op == "Identity" || it->op == "Neg") {
        Vec d = g;
        if (it->op == "Neg")
          for (auto& v : d) v = -v;
        accumulate(it->inputs[0], d);
        continue;
      }
      const Vec& b = value.at(it->inputs[1]);
      Vec da(g.size()), db(g.size());
      for (size_t i = 0; i < g.size(); ++i) {
        const double x = at(a, i), y = at(b, i);
        if (it->op == "Add") da[i] = g[i], db[i] = g[i];
        else if (it->op == "Sub") da[i] = g[i], db[i] = -g[i];
        else if (it->op == "Mul") da[i] = g[i] * y, db[i] = g[i] * x;
        else da[i] = g[i] / y, db[i] = -g[i] * x / (y * y);
      }
      accumulate(it->inputs[0], da);
      accumulate(it->inputs[1], db);
    }
    for (size_t i = 0; i < xs_.size() && i < ctx.num_outputs(); ++i) {
      if (!ctx.has_output(i)) continue;
      const Tensor& x = ctx.input(i);
      auto git = grad.find(xs_[i]);
      Tensor d(DType::kFloat64, x.shape());
      if (git != grad.end())
        for (int64_t k = 0; k < d.numel(); ++k) d.data<double>()[k] = git->second[k];
      ctx.set_output(i, Value(d.cast(x.dtype())));
    }
  }

 private:
  std::vector<std::string> xs_;
  std::string y_;
  std::vector<Step> steps_;
};

}  // namespace

PARITY_REGISTER_KERNEL("ai.onnx.preview.training", "Gradient", 1, Gradient);

}  // namespace parity::runtime
