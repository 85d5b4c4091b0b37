// Spec: https://onnx.ai/onnx/operators/onnx__Einsum.html
// Einsum.
// Supports explicit ("ij,jk->ik") and implicit ("ij,jk": the labels that appear once, sorted, after
// the broadcast '...' dims) output, repeated labels within an operand (diagonals), and '...'
// broadcasting. The reference loop visits every combination of label values once, so its cost is
// the product of all label sizes, as for the equivalent nested sums.
#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/common/elementwise.h"

namespace parity::runtime::ops {
namespace {

constexpr int kLetterLabels = 52;  // a-z, A-Z; '...' dims get ids from 52 on

struct Term {
  std::vector<int> letters;  // label ids of the explicit letters, in order
  int ellipsis_at = -1;      // position of '...' among the letters, -1 if absent
};

int letter_id(char c) { return std::islower(static_cast<unsigned char>(c)) ? c - 'a' : 26 + (c - 'A'); }

std::string strip_spaces(const std::string& s) {
  std::string out;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  return out;
}

template <typename Where>
Term parse_term(const std::string& text, const Where& where) {
  Term term;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      if (term.ellipsis_at >= 0 || text.compare(i, 3, "...") != 0) where.fail("malformed '...' in equation term '", text, "'");
      term.ellipsis_at = static_cast<int>(term.letters.size());
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      term.letters.push_back(letter_id(c));
    } else {
      where.fail("unexpected character '", c, "' in equation term '", text, "'");
    }
  }
  return term;
}

class EinsumKernel final : public Kernel {
 public:
  explicit EinsumKernel(const KernelInit& init) {
    const std::string eq = strip_spaces(init.attr_string("equation"));
    const size_t arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    size_t start = 0;
    while (true) {
      const size_t comma = lhs.find(',', start);
      inputs_.push_back(parse_term(lhs.substr(start, comma - start), init));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (inputs_.size() != init.num_inputs())
      init.fail("equation '", eq, "' has ", inputs_.size(), " operand terms but the node has ", init.num_inputs(),
                " inputs");
    explicit_output_ = arrow != std::string::npos;
    if (explicit_output_) output_ = parse_term(eq.substr(arrow + 2), init);
  }

  void compute(KernelContext& ctx) const override {
    const size_t n_in = inputs_.size();
    // Number of '...' dims: the largest over operands (they broadcast right-aligned).
    int64_t ellipsis_rank = 0;
    std::vector<std::vector<int>> dim_labels(n_in);
    for (size_t t = 0; t < n_in; ++t) {
      const Tensor& x = ctx.input(t);
      const Term& term = inputs_[t];
      const int64_t extra = x.rank() - static_cast<int64_t>(term.letters.size());
      if (extra < 0 || (extra > 0 && term.ellipsis_at < 0))
        ctx.fail("input ", t, " of shape ", shape_to_string(x.shape()), " does not match its equation term");
      ellipsis_rank = std::max(ellipsis_rank, extra);
    }
    std::vector<int64_t> label_size(kLetterLabels + ellipsis_rank, -1);
    for (size_t t = 0; t < n_in; ++t) {
      const Tensor& x = ctx.input(t);
      const Term& term = inputs_[t];
      const int64_t extra = x.rank() - static_cast<int64_t>(term.letters.size());
      auto& labels = dim_labels[t];
      for (size_t i = 0; i <= term.letters.size(); ++i) {
        if (static_cast<int>(i) == term.ellipsis_at)
          for (int64_t e = 0; e < extra; ++e) labels.push_back(kLetterLabels + static_cast<int>(ellipsis_rank - extra + e));
        if (i < term.letters.size()) labels.push_back(term.letters[i]);
      }
      for (size_t d = 0; d < labels.size(); ++d) {
        int64_t& size = label_size[labels[d]];
        const int64_t dim = x.dim(static_cast<int64_t>(d));
        if (size == -1 || size == 1) size = dim;
        else if (dim != size && dim != 1)
          ctx.fail("label size mismatch in input ", t, ": dimension ", d, " is ", dim, ", expected ", size);
      }
    }
    // Output labels.
    std::vector<int> out_labels;
    if (explicit_output_) {
      for (size_t i = 0; i <= output_.letters.size(); ++i) {
        if (static_cast<int>(i) == output_.ellipsis_at)
          for (int64_t e = 0; e < ellipsis_rank; ++e) out_labels.push_back(kLetterLabels + static_cast<int>(e));
        if (i < output_.letters.size()) {
          const int l = output_.letters[i];
          if (label_size[l] < 0) ctx.fail("output label '", label_char(l), "' does not appear in any input");
          if (std::count(out_labels.begin(), out_labels.end(), l)) ctx.fail("output label '", label_char(l), "' repeats");
          out_labels.push_back(l);
        }
      }
      if (output_.ellipsis_at < 0 && ellipsis_rank > 0) {
        // Without '...' in the output, broadcast dims are summed over (as numpy does).
      }
    } else {
      for (int64_t e = 0; e < ellipsis_rank; ++e) out_labels.push_back(kLetterLabels + static_cast<int>(e));
      std::vector<int> count(kLetterLabels, 0);
      for (const auto& term : inputs_)
        for (int l : term.letters) ++count[l];
      // Sorted by character code: upper-case letters (ids 26..51) sort before lower-case ones.
      std::vector<int> singles;
      for (int l = 0; l < kLetterLabels; ++l)
        if (count[l] == 1) singles.push_back(l);
      std::sort(singles.begin(), singles.end(), [](int a, int b) { return label_char(a) < label_char(b); });
      out_labels.insert(out_labels.end(), singles.begin(), singles.end());
    }
    std::vector<int> all_labels = out_labels;
    for (int l = 0; l < static_cast<int>(label_size.size()); ++l)
      if (label_size[l] >= 0 && !std::count(out_labels.begin(), out_labels.end(), l)) all_labels.push_back(l);

    Shape out_shape;
    for (int l : out_labels) out_shape.push_back(label_size[l]);
    std::vector<int64_t> sizes;
    for (int l : all_labels) sizes.push_back(label_size[l]);
    // strides[t][j]: how far operand t's offset moves when label all_labels[j] increments.
    std::vector<std::vector<int64_t>> strides(n_in, std::vector<int64_t>(all_labels.size(), 0));
    const DType dtype = ctx.input(0).dtype();
    for (size_t t = 0; t < n_in; ++t) {
      const Tensor& x = ctx.input(t);
      if (x.dtype() != dtype) ctx.fail("input ", t, " has type ", dtype_name(x.dtype()), ", expected ", dtype_name(dtype));
      const auto st = shape_strides(x.shape());
      for (size_t d = 0; d < dim_labels[t].size(); ++d) {
        if (x.dim(static_cast<int64_t>(d)) == 1) continue;  // broadcast dim
        const auto j = std::find(all_labels.begin(), all_labels.end(), dim_labels[t][d]) - all_labels.begin();
        strides[t][j] += st[d];
      }
    }
    dispatch_dtype<NumericTypes>(dtype, ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = std::conditional_t<is_float_v<T>, double, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
      Tensor& out = ctx.allocate_output(0, dtype, out_shape);
      const int64_t n_out = out.numel();
      std::vector<A> acc(static_cast<size_t>(n_out), A(0));
      std::vector<const T*> data(n_in);
      for (size_t t = 0; t < n_in; ++t) data[t] = ctx.input(t).template data<T>();
      int64_t total = 1;
      for (int64_t s : sizes) total *= s;
      const int64_t n_sum = total / std::max<int64_t>(n_out, 1);
      std::vector<int64_t> counter(sizes.size(), 0);
      std::vector<int64_t> offset(n_in, 0);
      for (int64_t step = 0; step < total; ++step) {
        A product = A(1);
        for (size_t t = 0; t < n_in; ++t) product = wrap_mul(product, static_cast<A>(to_compute(data[t][offset[t]])));
        // Output labels come first, so the output index is step / n_sum.
        A& slot = acc[static_cast<size_t>(step / n_sum)];
        slot = wrap_add(slot, product);
        for (int64_t j = static_cast<int64_t>(sizes.size()) - 1; j >= 0; --j) {
          for (size_t t = 0; t < n_in; ++t) offset[t] += strides[t][j];
          if (++counter[j] < sizes[j]) break;
          for (size_t t = 0; t < n_in; ++t) offset[t] -= strides[t][j] * sizes[j];
          counter[j] = 0;
        }
      }
      T* po = out.data<T>();
      for (int64_t i = 0; i < n_out; ++i) po[i] = convert_scalar<T>(acc[i]);
    });
  }

 private:
  static char label_char(int l) { return l < 26 ? static_cast<char>('a' + l) : static_cast<char>('A' + l - 26); }

  std::vector<Term> inputs_;
  Term output_;
  bool explicit_output_ = false;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Einsum", 12, EinsumKernel);

}  // namespace parity::runtime::ops
