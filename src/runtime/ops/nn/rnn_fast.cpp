// Spec: https://onnx.ai/onnx/operators/onnx__GRU.html, onnx__LSTM.html, onnx__RNN.html
// Optimized RNN, GRU and LSTM (fp32, constant weights, default activations), beside the reference
// kernels in rnn.cpp.
//
// The reference walks every step with scalar dot products. Here the input projection of every
// step is one matrix product up front (X [steps*batch, I] times W^T, with W's bias added; on
// oneDNN's matmul with W packed once per row count into the layout the primitive asks for, as the
// MatMul kernel packs constant weights: the 2-layer bidirectional GRU tagger's second layer,
// 64 x 512 by 512 x 768 per direction, took 1.18 ms a run on sgemm reading W as stored and
// 0.65 ms packed, at 1 thread), so
// the recurrence itself only multiplies the hidden state by R: a matrix-vector product per step
// and direction on the weights as ONNX stores them ([gates*H, H] rows, the layout the direct
// small-GEMM loop reads), followed by vectorized gate activations (the fast elementwise loops'
// Sigmoid and Tanh). The two directions of a bidirectional layer, and the batch rows, are
// independent chains and run on separate threads.
//
// Cases this path does not cover run the reference kernel: other dtypes, sequence_lens, clip,
// non-default activations, LSTM peepholes or input_forget, weights that are not constant.
#include <algorithm>
#include <cstring>
#include <functional>
#include <unordered_map>

#include "runtime/kernel_preferences.h"
#include "runtime/ops/common/elementwise_fast.h"
#include "runtime/ops/math/matmul_fast.h"
#if PARITY_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>

#include "runtime/dnnl/dnnl_support.h"
#include "runtime/dnnl/row_chunks.h"
#endif

namespace parity::runtime::nn {
namespace {

namespace fast = ops::fast;

enum class Cell { kRnn, kGru, kLstm };

int64_t gate_count(Cell c) { return c == Cell::kRnn ? 1 : c == Cell::kGru ? 3 : 4; }

/// The activations the spec gives each cell by default (the only ones this path computes).
std::vector<std::string> default_activations(Cell c) {
  if (c == Cell::kRnn) return {"tanh"};
  if (c == Cell::kGru) return {"sigmoid", "tanh"};
  return {"sigmoid", "tanh", "tanh"};
}

bool has_default_activations(const KernelInit& init, Cell cell, int64_t directions) {
  std::vector<std::string> names = init.attr_strings("activations", {});
  if (names.empty()) return true;
  const std::vector<std::string> defaults = default_activations(cell);
  if (names.size() != defaults.size() * static_cast<size_t>(directions) && names.size() != defaults.size())
    return false;
  for (size_t i = 0; i < names.size(); ++i) {
    std::string n = names[i];
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (n != defaults[i % defaults.size()]) return false;
  }
  return true;
}

/// y[rows, n] = x[rows, k] * w[n, k]^T + bias[n] (bias may be null).
void project(const float* x, int64_t rows, int64_t k, const float* w, int64_t n, const float* bias, float* y,
             KernelIsa isa) {
#if PARITY_HAVE_DNNL
  if (rows > ops::small_gemm::kMaxRows) {
    dnnl_support::ThreadScope one_thread(1);  // the caller splits the rows between threads
    dnnl_sgemm('N', 'T', rows, n, k, 1.0f, x, k, w, k, 0.0f, y, n);
  } else {
    ops::small_gemm::multiply(x, k, w, n, k, y, n, rows, isa);
  }
#else
  ops::small_gemm::multiply(x, k, w, n, k, y, n, rows, isa);
#endif
  if (bias)
    for (int64_t r = 0; r < rows; ++r) {
      float* row = y + r * n;
      for (int64_t j = 0; j < n; ++j) row[j] += bias[j];
    }
}

#if PARITY_HAVE_DNNL
namespace ds = dnnl_support;

/// The input projections of every direction on oneDNN's matmul: y[rows, n] = x[rows, k] * W^T +
/// bias with each direction's W ([n, k] as ONNX stores it) packed once per row count, where the
/// sgemm call in project() would repack it on every run.
class PackedProjections {
 public:
  /// `w`: [directions, n, k]; `bias`: [directions, 2 * n] (W's bias first), or empty.
  PackedProjections(const Tensor& w, const std::vector<float>& bias) : w_(w), bias_(bias) {}

  /// Rows [0, rows) of x times direction d's weights into y; false (nothing written) when oneDNN
  /// has no matmul for this geometry, so the caller takes project().
  bool run(int64_t d, const float* x, int64_t rows, float* y) const {
    std::shared_ptr<const Entry> entry = cache_.get({rows}, [&] { return make(rows); });
    if (!entry->ok) return false;
    const auto raw = [](const memory::desc& desc, const float* data) {
      return memory(desc, ds::cpu_engine(), const_cast<float*>(data));
    };
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, raw(entry->src, x)},
                                         {DNNL_ARG_WEIGHTS, entry->packed[static_cast<size_t>(d)]},
                                         {DNNL_ARG_DST, raw(entry->dst, y)},
                                         {DNNL_ARG_BIAS, raw(entry->bias, bias_.data() + d * 2 * n())}};
    if (entry->scratchpad.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, ds::thread_scratchpad(entry->scratchpad));
    ds::execute(entry->prim, args, 1);
    return true;
  }

 private:
  using memory = dnnl::memory;
  struct Entry {
    bool ok = false;
    dnnl::matmul prim;
    memory::desc src, dst, bias, scratchpad;
    std::vector<memory> packed;  // per direction, in the primitive's weights layout
  };

  int64_t n() const { return w_.dim(1); }
  int64_t k() const { return w_.dim(2); }

  Entry make(int64_t rows) const {
    Entry e;
    ds::ThreadScope one_thread(1);  // the caller splits the rows between threads
    try {
      const memory::data_type f32 = memory::data_type::f32;
      e.src = memory::desc({rows, k()}, f32, memory::format_tag::ab);
      e.dst = memory::desc({rows, n()}, f32, memory::format_tag::ab);
      e.bias = memory::desc({1, n()}, f32, memory::format_tag::ab);
      const memory::desc as_stored({k(), n()}, f32, memory::format_tag::ba);  // W^T of W [n, k]
      const memory::desc wanted({k(), n()}, f32, memory::format_tag::any);
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(e.src, wanted, e.bias, e.dst), ds::user_scratchpad_attr(),
                                            ds::cpu_engine());
      e.prim = dnnl::matmul(pd);
      e.scratchpad = pd.scratchpad_desc();
      dnnl::stream stream(ds::cpu_engine());
      for (int64_t d = 0; d < w_.dim(0); ++d) {
        memory source(as_stored, ds::cpu_engine(), const_cast<float*>(w_.data<float>()) + d * n() * k());
        memory packed(pd.weights_desc(), ds::cpu_engine());
        dnnl::reorder(source, packed).execute(stream, source, packed);
        e.packed.push_back(packed);
      }
      stream.wait();
      e.ok = true;
    } catch (const dnnl::error&) {
      e.ok = false;
    }
    return e;
  }

  Tensor w_;
  const std::vector<float>& bias_;  // the kernel's, which outlives this
  ds::ShapeCache<Entry> cache_;
};
#endif

/// Below this many multiply-adds in a step's recurrent product (gates*H x H), splitting a step
/// between threads costs more in hand-offs than it saves (a 2048x512 LSTM step is ~70 us).
constexpr int64_t kMinSplitProduct = 64 * 1024;
/// Hidden units are split between threads in blocks of this many (whole SIMD vectors).
constexpr int64_t kUnitBlock = 16;

class FastRecurrentKernel : public Kernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init, Cell cell) {
    auto reference = init.create_reference_kernel();  // validates the attributes first
    if (init.precision() != Precision::kFloat32) return nullptr;
    const DType x_type = init.input_dtype(0);
    if (x_type != DType::kFloat32 && x_type != DType::kUndefined) return nullptr;
    const std::string direction = init.attr_string("direction", "forward");
    const int64_t directions = direction == "bidirectional" ? 2 : 1;
    if (init.has_attr("clip") || !has_default_activations(init, cell, directions)) return nullptr;
    if (cell == Cell::kLstm && (init.attr_int("input_forget", 0) != 0 || init.has_input(7))) return nullptr;
    std::optional<Tensor> w = init.has_input(1) ? init.constant_input(1) : std::nullopt;
    std::optional<Tensor> r = init.has_input(2) ? init.constant_input(2) : std::nullopt;
    if (!w || !r || w->dtype() != DType::kFloat32 || r->dtype() != DType::kFloat32 || w->rank() != 3 || r->rank() != 3)
      return nullptr;
    const int64_t gates = gate_count(cell);
    const int64_t hidden = r->dim(2);
    if (w->dim(0) != directions || r->dim(0) != directions || w->dim(1) != gates * hidden ||
        r->dim(1) != gates * hidden || hidden <= 0 || init.attr_int("hidden_size", hidden) != hidden)
      return nullptr;
    std::optional<Tensor> b;
    if (init.has_input(3)) {
      b = init.constant_input(3);
      if (!b || b->dtype() != DType::kFloat32 || b->numel() != directions * 2 * gates * hidden) return nullptr;
    }
    auto kernel = std::unique_ptr<FastRecurrentKernel>(new FastRecurrentKernel(std::move(reference)));
    kernel->cell_ = cell;
    kernel->isa_ = kernel_isa(init);
    kernel->directions_ = directions;
    kernel->reverse_only_ = direction == "reverse";
    kernel->hidden_ = hidden;
    kernel->input_size_ = w->dim(2);
    kernel->layout_ = init.opset() >= 14 ? init.attr_int("layout", 0) : 0;
    kernel->linear_before_reset_ = init.attr_int("linear_before_reset", 0) != 0;
    kernel->w_ = *w;
    kernel->r_ = *r;
    kernel->bias_ = b ? b->to_vector<float>()
                      : std::vector<float>(static_cast<size_t>(directions * 2 * gates * hidden), 0.0f);
#if PARITY_HAVE_DNNL
    kernel->projections_ = std::make_unique<PackedProjections>(kernel->w_, kernel->bias_);
#endif
    return kernel;
  }

  void compute(KernelContext& ctx) const override {
    if (!fast_path_applies(ctx)) {
      reference_->compute(ctx);
      return;
    }
    const Tensor& x = ctx.input(0);
    const int64_t steps = layout_ == 0 ? x.dim(0) : x.dim(1);
    const int64_t batch = layout_ == 0 ? x.dim(1) : x.dim(0);
    const int64_t gates = gate_count(cell_), hidden = hidden_, width = gates * hidden;
    const int64_t rows = steps * batch;
    const Tensor& xc = x;

    // Input projections of every step and direction: xw[d][row, gates*H], row as X's rows.
    std::vector<float> xw(static_cast<size_t>(directions_ * rows * width));
    const int64_t chunk_rows = std::max<int64_t>(1, (rows + ctx.num_threads() - 1) / ctx.num_threads());
    const int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
    ctx.parallel_for(directions_ * chunks, [&](int64_t first, int64_t last) {
      for (int64_t job = first; job < last; ++job) {
        const int64_t d = job / chunks, begin = (job % chunks) * chunk_rows, n = std::min(chunk_rows, rows - begin);
        if (n <= 0) continue;
        float* out = xw.data() + (d * rows + begin) * width;
#if PARITY_HAVE_DNNL
        if (n > ops::small_gemm::kMaxRows && projections_->run(d, xc.data<float>() + begin * input_size_, n, out))
          continue;
#endif
        project(xc.data<float>() + begin * input_size_, n, input_size_, w_.data<float>() + d * width * input_size_,
                width, bias_.data() + d * 2 * width, out, isa_);
      }
    });

    Tensor* y = ctx.has_output(0) ? &ctx.allocate_output_uninitialized(
                                        0, DType::kFloat32,
                                        layout_ == 0 ? Shape{steps, directions_, batch, hidden}
                                                     : Shape{batch, steps, directions_, hidden})
                                  : nullptr;
    const Shape state_shape = layout_ == 0 ? Shape{directions_, batch, hidden} : Shape{batch, directions_, hidden};
    std::vector<float> final_h(static_cast<size_t>(directions_ * batch * hidden));
    std::vector<float> final_c(final_h.size());
    const Tensor* h0 = ctx.has_input(5) ? &ctx.input(5) : nullptr;
    const Tensor* c0 = cell_ == Cell::kLstm && ctx.has_input(6) ? &ctx.input(6) : nullptr;

    // Every (direction, batch row) is an independent chain of steps. With fewer chains than
    // threads (a batch-1 forward layer), the chains run one after the other and each step's
    // recurrent product and gate math are split between the threads by hidden unit instead.
    const int64_t chains = directions_ * batch;
    const bool split_steps = chains < ctx.num_threads() && width * hidden >= kMinSplitProduct;
    auto run_one = [&](int64_t chain, std::vector<float>& scratch, const UnitRunner& for_units) {
      const int64_t d = chain / batch, b = chain % batch;
      const int64_t state = (layout_ == 0 ? d * batch + b : b * directions_ + d) * hidden;
      float* h = scratch.data() + 2 * width;
      float* c = h + 2 * hidden;
      if (h0) std::memcpy(h, h0->data<float>() + state, sizeof(float) * hidden);
      else std::fill_n(h, hidden, 0.0f);
      if (c0) std::memcpy(c, c0->data<float>() + state, sizeof(float) * hidden);
      else std::fill_n(c, hidden, 0.0f);
      const float* h_final = run_chain(d, b, steps, batch, xw.data() + d * rows * width, scratch.data(), y, for_units);
      std::memcpy(final_h.data() + state, h_final, sizeof(float) * hidden);
      std::memcpy(final_c.data() + state, c, sizeof(float) * hidden);
    };
    const size_t scratch_size = static_cast<size_t>(2 * width + 4 * hidden);
    if (split_steps) {
      std::vector<float> scratch(scratch_size);
      const int64_t blocks = (hidden + kUnitBlock - 1) / kUnitBlock;
      const UnitRunner split = [&](const std::function<void(int64_t, int64_t)>& units) {
        ctx.parallel_for(blocks, [&](int64_t first, int64_t last) {
          units(first * kUnitBlock, std::min(hidden, last * kUnitBlock));
        });
      };
      for (int64_t chain = 0; chain < chains; ++chain) run_one(chain, scratch, split);
    } else {
      const UnitRunner inline_units = [hidden](const std::function<void(int64_t, int64_t)>& units) { units(0, hidden); };
      ctx.parallel_for(chains, [&](int64_t first, int64_t last) {
        std::vector<float> scratch(scratch_size);
        for (int64_t chain = first; chain < last; ++chain) run_one(chain, scratch, inline_units);
      });
    }
    if (ctx.has_output(1))
      std::memcpy(ctx.allocate_output_uninitialized(1, DType::kFloat32, state_shape).data<float>(), final_h.data(),
                  sizeof(float) * final_h.size());
    if (cell_ == Cell::kLstm && ctx.has_output(2))
      std::memcpy(ctx.allocate_output_uninitialized(2, DType::kFloat32, state_shape).data<float>(), final_c.data(),
                  sizeof(float) * final_c.size());
  }

 private:
  explicit FastRecurrentKernel(std::unique_ptr<Kernel> reference) : reference_(std::move(reference)) {}

  bool fast_path_applies(const KernelContext& ctx) const {
    if (ctx.has_input(4)) return false;  // sequence_lens: the reference handles ragged batches
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::kFloat32 || x.rank() != 3 || x.dim(2) != input_size_ || x.numel() == 0) return false;
    const int64_t batch = layout_ == 0 ? x.dim(1) : x.dim(0);
    const Shape state = layout_ == 0 ? Shape{directions_, batch, hidden_} : Shape{batch, directions_, hidden_};
    for (size_t i : {size_t{5}, size_t{6}})
      if (ctx.has_input(i) && (ctx.input(i).dtype() != DType::kFloat32 || ctx.input(i).shape() != state)) return false;
    return true;
  }

  /// Runs units(begin, end) over hidden units [0, hidden): inline, or split between threads.
  using UnitRunner = std::function<void(const std::function<void(int64_t, int64_t)>&)>;

  /// One direction of one batch row through every step. `scratch` holds [R h + Rb | gates | h | h'
  /// | c | r . h]: h (the state in) and c are read and updated; returns where the final h is.
  /// `xw` is this direction's input projections ([rows, gates*H], W's bias included). Each step
  /// computes hidden unit j from its own rows of R and writes the new state to the other h
  /// buffer, so `for_units` may split the units between threads; GRU without
  /// linear_before_reset needs all of r . h before its candidate product, so it takes two passes.
  const float* run_chain(int64_t d, int64_t b, int64_t steps, int64_t batch, const float* xw, float* scratch,
                         Tensor* y, const UnitRunner& for_units) const {
    const int64_t hidden = hidden_, width = gate_count(cell_) * hidden;
    const float* r = r_.data<float>() + d * width * hidden;
    const float* rb = bias_.data() + d * 2 * width + width;
    float* hr = scratch;            // [width]: R h + Rb
    float* gate = scratch + width;  // [width]: the gates' pre-activations, then activations
    float* h = scratch + 2 * width;
    float* h_next = h + hidden;
    float* c = h + 2 * hidden;
    float* rh = h + 3 * hidden;  // [hidden]: GRU without linear_before_reset: r . h
    const fast::EwLoops& loops = fast::loops(isa_);
    const fast::EwUnary sigmoid{fast::EwOp::kSigmoid, 0, 0}, tanh{fast::EwOp::kTanh, 0, 0};
    const bool reverse = reverse_only_ || d == 1;
    // Rows [g*H + j0, g*H + j1) of R times h (or r . h) into hr.
    auto recurrent = [&](const float* state, int64_t g, int64_t j0, int64_t j1) {
      ops::small_gemm::multiply(state, hidden, r + (g * hidden + j0) * hidden, j1 - j0, hidden, hr + g * hidden + j0,
                                width, 1, isa_);
    };
    for (int64_t step = 0; step < steps; ++step) {
      const int64_t t = reverse ? steps - 1 - step : step;
      const float* xt = xw + (layout_ == 0 ? t * batch + b : b * steps + t) * width;
      switch (cell_) {
        case Cell::kRnn:
          for_units([&](int64_t j0, int64_t j1) {
            recurrent(h, 0, j0, j1);
            for (int64_t j = j0; j < j1; ++j) gate[j] = xt[j] + (hr[j] + rb[j]);
            loops.unary(tanh, gate + j0, h_next + j0, j1 - j0);
          });
          break;
        case Cell::kGru: {
          // Gates z, r, h. z and r: f(Xw + Wb + Rh + Rb).
          auto update_and_reset = [&](int64_t j0, int64_t j1) {
            for (int64_t g : {0, 1}) {
              recurrent(h, g, j0, j1);
              for (int64_t j = g * hidden + j0; j < g * hidden + j1; ++j) gate[j] = xt[j] + (hr[j] + rb[j]);
              loops.unary(sigmoid, gate + g * hidden + j0, gate + g * hidden + j0, j1 - j0);
            }
          };
          auto new_state = [&](int64_t j0, int64_t j1) {
            const float* z = gate;
            float* candidate = gate + 2 * hidden;
            loops.unary(tanh, candidate + j0, candidate + j0, j1 - j0);
            for (int64_t j = j0; j < j1; ++j) h_next[j] = (1.0f - z[j]) * candidate[j] + z[j] * h[j];
          };
          const float* reset = gate + hidden;
          float* candidate = gate + 2 * hidden;
          if (linear_before_reset_) {
            for_units([&](int64_t j0, int64_t j1) {
              update_and_reset(j0, j1);
              recurrent(h, 2, j0, j1);
              for (int64_t j = j0; j < j1; ++j)
                candidate[j] = xt[2 * hidden + j] + reset[j] * (hr[2 * hidden + j] + rb[2 * hidden + j]);
              new_state(j0, j1);
            });
          } else {
            for_units([&](int64_t j0, int64_t j1) {
              update_and_reset(j0, j1);
              for (int64_t j = j0; j < j1; ++j) rh[j] = reset[j] * h[j];
            });
            for_units([&](int64_t j0, int64_t j1) {
              recurrent(rh, 2, j0, j1);
              for (int64_t j = j0; j < j1; ++j)
                candidate[j] = xt[2 * hidden + j] + (hr[2 * hidden + j] + rb[2 * hidden + j]);
              new_state(j0, j1);
            });
          }
          break;
        }
        case Cell::kLstm:
          // Gates i, o, f, c.
          for_units([&](int64_t j0, int64_t j1) {
            const int64_t n = j1 - j0;
            for (int64_t g = 0; g < 4; ++g) {
              recurrent(h, g, j0, j1);
              for (int64_t j = g * hidden + j0; j < g * hidden + j1; ++j) gate[j] = xt[j] + (hr[j] + rb[j]);
              if (g < 3) loops.unary(sigmoid, gate + g * hidden + j0, gate + g * hidden + j0, n);
              else loops.unary(tanh, gate + g * hidden + j0, gate + g * hidden + j0, n);
            }
            const float* in = gate;
            const float* out = gate + hidden;
            const float* forget = gate + 2 * hidden;
            const float* cand = gate + 3 * hidden;
            for (int64_t j = j0; j < j1; ++j) c[j] = forget[j] * c[j] + in[j] * cand[j];
            loops.unary(tanh, c + j0, h_next + j0, n);
            for (int64_t j = j0; j < j1; ++j) h_next[j] *= out[j];
          });
          break;
      }
      std::swap(h, h_next);
      if (y) {
        float* dst = y->data<float>() + (layout_ == 0 ? (t * directions_ + d) * batch + b : (b * steps + t) * directions_ + d) * hidden;
        std::memcpy(dst, h, sizeof(float) * hidden);
      }
    }
    return h;
  }

  std::unique_ptr<Kernel> reference_;
  Cell cell_ = Cell::kRnn;
  KernelIsa isa_ = KernelIsa::kBaseline;  // the vector tier of the products and elementwise loops
  int64_t directions_ = 1;
  bool reverse_only_ = false;
  int64_t hidden_ = 0, input_size_ = 0, layout_ = 0;
  bool linear_before_reset_ = false;
  Tensor w_, r_;
  std::vector<float> bias_;  // [directions, 2, gates*H]: Wb then Rb
#if PARITY_HAVE_DNNL
  std::unique_ptr<PackedProjections> projections_;
#endif
};

struct FastRnn {
  static std::unique_ptr<Kernel> create(const KernelInit& init) { return FastRecurrentKernel::create(init, Cell::kRnn); }
};
struct FastGru {
  static std::unique_ptr<Kernel> create(const KernelInit& init) { return FastRecurrentKernel::create(init, Cell::kGru); }
};
struct FastLstm {
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    return FastRecurrentKernel::create(init, Cell::kLstm);
  }
};

}  // namespace

// The same since_versions as the reference registrations in rnn.cpp.
PARITY_REGISTER_OPTIMIZED_KERNEL("", "RNN", (1, 7, 14), FastRnn);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "GRU", (1, 3, 7, 14), FastGru);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "LSTM", (1, 7, 14), FastLstm);

}  // namespace parity::runtime::nn
