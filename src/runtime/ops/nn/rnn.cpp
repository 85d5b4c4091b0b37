// Spec: https://onnx.ai/onnx/operators/onnx__RNN.html, onnx__GRU.html, onnx__LSTM.html
// RNN, GRU, LSTM.
//
// One shared driver walks directions, time steps and batch rows (honouring sequence_lens and
// layout); each cell type supplies its gate math. Gate orders follow the spec: LSTM i,o,f,c;
// GRU z,r,h.
#include <cmath>

#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime::nn {
namespace {

enum class CellType { kRnn, kGru, kLstm };

int gate_count(CellType c) { return c == CellType::kRnn ? 1 : (c == CellType::kGru ? 3 : 4); }

/// A named activation with its alpha/beta.
struct Activation {
  enum class Kind { kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu,
                    kSoftsign, kSoftplus } kind;
  double alpha = 0, beta = 0;

  template <typename A>
  A operator()(A x) const {
    switch (kind) {
      case Kind::kRelu: return x > 0 ? x : A(0);
      case Kind::kTanh: return std::tanh(x);
      case Kind::kSigmoid: return A(1) / (A(1) + std::exp(-x));
      case Kind::kAffine: return static_cast<A>(alpha * x + beta);
      case Kind::kLeakyRelu: return x >= 0 ? x : static_cast<A>(alpha * x);
      case Kind::kThresholdedRelu: return x > alpha ? x : A(0);
      case Kind::kScaledTanh: return static_cast<A>(alpha * std::tanh(beta * x));
      case Kind::kHardSigmoid: return static_cast<A>(std::clamp(alpha * x + beta, 0.0, 1.0));
      case Kind::kElu: return x >= 0 ? x : static_cast<A>(alpha * (std::exp(x) - 1));
      case Kind::kSoftsign: return x / (A(1) + std::abs(x));
      case Kind::kSoftplus: return std::log1p(std::exp(x));
    }
    return x;
  }
};

/// Parses the activations list, consuming activation_alpha/beta in order by the functions that
/// take them.
std::vector<Activation> parse_activations(const KernelInit& init, const std::vector<std::string>& names) {
  const std::vector<float> alphas = init.attr_floats("activation_alpha", {});
  const std::vector<float> betas = init.attr_floats("activation_beta", {});
  size_t ai = 0, bi = 0;
  std::vector<Activation> out;
  for (const std::string& raw : names) {
    std::string n = raw;
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    using K = Activation::Kind;
    Activation a{K::kTanh};
    double def_alpha = 0, def_beta = 0;
    bool uses_alpha = false, uses_beta = false;
    if (n == "relu") a.kind = K::kRelu;
    else if (n == "tanh") a.kind = K::kTanh;
    else if (n == "sigmoid") a.kind = K::kSigmoid;
    else if (n == "affine") a.kind = K::kAffine, uses_alpha = uses_beta = true, def_alpha = 1.0;
    else if (n == "leakyrelu") a.kind = K::kLeakyRelu, uses_alpha = true, def_alpha = 0.01;
    else if (n == "thresholdedrelu") a.kind = K::kThresholdedRelu, uses_alpha = true, def_alpha = 1.0;
    else if (n == "scaledtanh") a.kind = K::kScaledTanh, uses_alpha = uses_beta = true, def_alpha = def_beta = 1.0;
    else if (n == "hardsigmoid") a.kind = K::kHardSigmoid, uses_alpha = uses_beta = true, def_alpha = 0.2, def_beta = 0.5;
    else if (n == "elu") a.kind = K::kElu, uses_alpha = true, def_alpha = 1.0;
    else if (n == "softsign") a.kind = K::kSoftsign;
    else if (n == "softplus") a.kind = K::kSoftplus;
    else init.fail("unsupported activation '", raw, "'");
    a.alpha = uses_alpha ? (ai < alphas.size() ? alphas[ai++] : def_alpha) : 0.0;
    a.beta = uses_beta ? (bi < betas.size() ? betas[bi++] : def_beta) : 0.0;
    out.push_back(a);
  }
  return out;
}

class RecurrentKernel : public Kernel {
 public:
  RecurrentKernel(const KernelInit& init, CellType cell) : cell_(cell) {
    const std::string dir = init.attr_string("direction", "forward");
    if (dir == "forward") directions_ = 1;
    else if (dir == "reverse") directions_ = 1, reverse_only_ = true;
    else if (dir == "bidirectional") directions_ = 2;
    else init.fail("unknown direction '", dir, "'");
    hidden_size_ = init.attr_int("hidden_size", 0);
    clip_ = init.has_attr("clip") ? std::optional<double>(init.attr_float("clip")) : std::nullopt;
    layout_ = init.opset() >= 14 ? init.attr_int("layout", 0) : 0;
    if (layout_ != 0 && layout_ != 1) init.fail("layout must be 0 or 1");
    linear_before_reset_ = init.attr_int("linear_before_reset", 0) != 0;
    input_forget_ = init.attr_int("input_forget", 0) != 0;
    const size_t per_dir = cell == CellType::kRnn ? 1 : (cell == CellType::kGru ? 2 : 3);
    std::vector<std::string> defaults = cell == CellType::kRnn   ? std::vector<std::string>{"Tanh"}
                                        : cell == CellType::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                 : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    std::vector<std::string> names = init.attr_strings("activations", {});
    if (names.empty()) {
      for (int d = 0; d < directions_; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
    } else if (names.size() == per_dir && directions_ == 2) {
      names.insert(names.end(), names.begin(), names.end());
    }
    if (names.size() != per_dir * directions_)
      init.fail("activations has ", names.size(), " entries, expected ", per_dir * directions_);
    activations_ = parse_activations(init, names);
  }

  void compute(KernelContext& ctx) const override {
    visit_float_compute(ctx.input(0).dtype(), ctx, [&](auto tag) { run<typename decltype(tag)::type>(ctx); });
  }

 private:
  template <typename A>
  void run(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor& r = ctx.input(2);
    if (x.rank() != 3 || w.rank() != 3 || r.rank() != 3) ctx.fail("X, W and R must be 3-D");
    const int64_t seq = layout_ == 0 ? x.dim(0) : x.dim(1);
    const int64_t batch = layout_ == 0 ? x.dim(1) : x.dim(0);
    const int64_t input = x.dim(2);
    const int64_t gates = gate_count(cell_);
    const int64_t hidden = hidden_size_ > 0 ? hidden_size_ : r.dim(2);
    const int64_t dirs = directions_;
    if (w.shape() != Shape{dirs, gates * hidden, input})
      ctx.fail("W has shape ", shape_to_string(w.shape()), ", expected ",
               shape_to_string(Shape{dirs, gates * hidden, input}));
    if (r.shape() != Shape{dirs, gates * hidden, hidden})
      ctx.fail("R has shape ", shape_to_string(r.shape()), ", expected ",
               shape_to_string(Shape{dirs, gates * hidden, hidden}));
    const std::vector<A> xv = load_as<A>(x), wv = load_as<A>(w), rv = load_as<A>(r);
    std::vector<A> bias(static_cast<size_t>(dirs * 2 * gates * hidden), A(0));
    if (ctx.has_input(3)) {
      bias = load_as<A>(ctx.input(3));
      if (static_cast<int64_t>(bias.size()) != dirs * 2 * gates * hidden) ctx.fail("B has ", bias.size(), " values");
    }
    std::vector<int64_t> lens(static_cast<size_t>(batch), seq);
    if (ctx.has_input(4)) {
      lens = read_int64s(ctx.input(4));
      if (static_cast<int64_t>(lens.size()) != batch) ctx.fail("sequence_lens has ", lens.size(), " values");
      for (int64_t l : lens)
        if (l < 0 || l > seq) ctx.fail("sequence length ", l, " is outside [0, ", seq, "]");
    }
    const int64_t state_size = dirs * batch * hidden;
    std::vector<A> h0(static_cast<size_t>(state_size), A(0)), c0(static_cast<size_t>(state_size), A(0));
    if (ctx.has_input(5)) {
      h0 = load_as<A>(ctx.input(5));
      if (static_cast<int64_t>(h0.size()) != state_size) ctx.fail("initial_h has ", h0.size(), " values");
    }
    std::vector<A> peep;
    if (cell_ == CellType::kLstm) {
      if (ctx.has_input(6)) {
        c0 = load_as<A>(ctx.input(6));
        if (static_cast<int64_t>(c0.size()) != state_size) ctx.fail("initial_c has ", c0.size(), " values");
      }
      if (ctx.has_input(7)) {
        peep = load_as<A>(ctx.input(7));
        if (static_cast<int64_t>(peep.size()) != dirs * 3 * hidden) ctx.fail("P has ", peep.size(), " values");
      }
    }
    // Index helpers for the two layouts.
    auto x_at = [&](int64_t t, int64_t b) { return (layout_ == 0 ? t * batch + b : b * seq + t) * input; };
    auto y_at = [&](int64_t t, int64_t d, int64_t b) {
      return (layout_ == 0 ? (t * dirs + d) * batch + b : (b * seq + t) * dirs + d) * hidden;
    };
    auto state_at = [&](int64_t d, int64_t b) { return (layout_ == 0 ? d * batch + b : b * dirs + d) * hidden; };

    std::vector<A> y(static_cast<size_t>(seq * dirs * batch * hidden), A(0));
    std::vector<A> y_h(static_cast<size_t>(state_size)), y_c(static_cast<size_t>(state_size));
    std::vector<A> xw(static_cast<size_t>(gates * hidden)), hr(static_cast<size_t>(gates * hidden));
    std::vector<A> h(static_cast<size_t>(hidden)), c(static_cast<size_t>(hidden)), hn(static_cast<size_t>(hidden));
    std::vector<A> zg(static_cast<size_t>(hidden)), rg(static_cast<size_t>(hidden));
    const size_t acts = activations_.size() / dirs;
    auto clip = [&](A v) { return clip_ ? std::clamp(v, static_cast<A>(-*clip_), static_cast<A>(*clip_)) : v; };

    for (int64_t d = 0; d < dirs; ++d) {
      const bool reverse = reverse_only_ || d == 1;
      const A* W = wv.data() + d * gates * hidden * input;
      const A* R = rv.data() + d * gates * hidden * hidden;
      const A* Wb = bias.data() + d * 2 * gates * hidden;
      const A* Rb = Wb + gates * hidden;
      const Activation& f = activations_[d * acts];
      const Activation& g = activations_[d * acts + (acts > 1 ? 1 : 0)];
      const Activation& hact = activations_[d * acts + (acts > 2 ? 2 : 0)];
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t s0 = state_at(d, b);
        // initial states are laid out like Y_h
        std::copy(h0.begin() + s0, h0.begin() + s0 + hidden, h.begin());
        std::copy(c0.begin() + s0, c0.begin() + s0 + hidden, c.begin());
        for (int64_t step = 0; step < lens[b]; ++step) {
          const int64_t t = reverse ? lens[b] - 1 - step : step;
          const A* xt = xv.data() + x_at(t, b);
          for (int64_t gi = 0; gi < gates * hidden; ++gi) {
            A sx = Wb[gi], sh = Rb[gi];
            const A* wrow = W + gi * input;
            for (int64_t k = 0; k < input; ++k) sx += wrow[k] * xt[k];
            const A* rrow = R + gi * hidden;
            for (int64_t k = 0; k < hidden; ++k) sh += rrow[k] * h[k];
            xw[gi] = sx;
            hr[gi] = sh;
          }
          switch (cell_) {
            case CellType::kRnn:
              for (int64_t j = 0; j < hidden; ++j) hn[j] = f(clip(xw[j] + hr[j]));
              break;
            case CellType::kGru: {
              for (int64_t j = 0; j < hidden; ++j) {
                zg[j] = f(clip(xw[j] + hr[j]));
                rg[j] = f(clip(xw[hidden + j] + hr[hidden + j]));
              }
              for (int64_t j = 0; j < hidden; ++j) {
                A pre;
                if (linear_before_reset_) {
                  pre = xw[2 * hidden + j] + rg[j] * hr[2 * hidden + j];
                } else {
                  // (r . H) * Rh + Rbh
                  const A* rrow = R + (2 * hidden + j) * hidden;
                  A s = Rb[2 * hidden + j];
                  for (int64_t k = 0; k < hidden; ++k) s += rrow[k] * (rg[k] * h[k]);
                  pre = xw[2 * hidden + j] + s;
                }
                hn[j] = (A(1) - zg[j]) * g(clip(pre)) + zg[j] * h[j];
              }
              break;
            }
            case CellType::kLstm: {
              const A* P = peep.empty() ? nullptr : peep.data() + d * 3 * hidden;
              for (int64_t j = 0; j < hidden; ++j) {
                const A pi = P ? P[j] : A(0), po = P ? P[hidden + j] : A(0), pf = P ? P[2 * hidden + j] : A(0);
                const A i_gate = f(clip(xw[j] + hr[j] + pi * c[j]));
                A f_gate = f(clip(xw[2 * hidden + j] + hr[2 * hidden + j] + pf * c[j]));
                if (input_forget_) f_gate = A(1) - i_gate;
                const A cand = g(clip(xw[3 * hidden + j] + hr[3 * hidden + j]));
                const A c_new = f_gate * c[j] + i_gate * cand;
                const A o_gate = f(clip(xw[hidden + j] + hr[hidden + j] + po * c_new));
                c[j] = c_new;
                hn[j] = o_gate * hact(c_new);
              }
              break;
            }
          }
          h = hn;
          std::copy(h.begin(), h.end(), y.begin() + y_at(t, d, b));
        }
        std::copy(h.begin(), h.end(), y_h.begin() + s0);
        std::copy(c.begin(), c.end(), y_c.begin() + s0);
      }
    }
    const DType dt = x.dtype();
    const Shape y_shape = layout_ == 0 ? Shape{seq, dirs, batch, hidden} : Shape{batch, seq, dirs, hidden};
    const Shape state_shape = layout_ == 0 ? Shape{dirs, batch, hidden} : Shape{batch, dirs, hidden};
    emit_output(ctx, 0, dt, y_shape, y);
    emit_output(ctx, 1, dt, state_shape, y_h);
    if (cell_ == CellType::kLstm) emit_output(ctx, 2, dt, state_shape, y_c);
  }

  CellType cell_;
  int directions_ = 1;
  bool reverse_only_ = false;
  int64_t hidden_size_ = 0;
  std::optional<double> clip_;
  int64_t layout_ = 0;
  bool linear_before_reset_ = false;
  bool input_forget_ = false;
  std::vector<Activation> activations_;
};

struct RnnKernel : RecurrentKernel {
  explicit RnnKernel(const KernelInit& init) : RecurrentKernel(init, CellType::kRnn) {}
};
struct GruKernel : RecurrentKernel {
  explicit GruKernel(const KernelInit& init) : RecurrentKernel(init, CellType::kGru) {}
};
struct LstmKernel : RecurrentKernel {
  explicit LstmKernel(const KernelInit& init) : RecurrentKernel(init, CellType::kLstm) {}
};

}  // namespace

PARITY_REGISTER_KERNEL("", "RNN", (1, 7, 14), RnnKernel);
PARITY_REGISTER_KERNEL("", "GRU", (1, 3, 7, 14), GruKernel);
PARITY_REGISTER_KERNEL("", "LSTM", (1, 7, 14), LstmKernel);

}  // namespace parity::runtime::nn
