// Spec: https://onnx.ai/onnx/operators/onnx__StringConcat.html, onnx__StringSplit.html,
//       onnx__RegexFullMatch.html
// String operators of opset 20: StringConcat, StringSplit and RegexFullMatch (RE2 syntax, matched
// with the RE2 library itself).
#include <re2/re2.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/ops/common/broadcast.h"

namespace parity::runtime {
namespace {

const std::string* strings(const Tensor& t, const KernelContext& ctx, const char* what) {
  if (t.dtype() != DType::kString) ctx.fail(what, " must be a string tensor, got ", dtype_name(t.dtype()));
  return t.data<std::string>();
}

/// Element-wise x + y with numpy broadcasting.
class StringConcatKernel final : public Kernel {
 public:
  explicit StringConcatKernel(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& y = ctx.input(1);
    const std::string* px = strings(x, ctx, "X");
    const std::string* py = strings(y, ctx, "Y");
    const Shape shape = ops::broadcast_shapes(ctx, {x.shape(), y.shape()});
    Tensor& out = ctx.allocate_output(0, DType::kString, shape);
    std::string* po = out.data<std::string>();
    ops::for_each_broadcast(shape, std::array<Shape, 2>{x.shape(), y.shape()},
                            [&](int64_t i, const std::array<int64_t, 2>& off) { po[i] = px[off[0]] + py[off[1]]; });
  }
};

/// Splits each string like Python's str.split: on `delimiter` exactly (empty fields kept), or,
/// without one, on runs of whitespace (leading/trailing whitespace ignored); at most `maxsplit`
/// splits. Outputs the fields padded with "" to the longest row, and each row's field count.
class StringSplitKernel final : public Kernel {
 public:
  explicit StringSplitKernel(const KernelInit& init)
      : delimiter_(init.attr_string("delimiter", "")), maxsplit_(init.attr_int("maxsplit", -1)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const std::string* px = strings(x, ctx, "X");
    std::vector<std::vector<std::string>> rows(static_cast<size_t>(x.numel()));
    size_t widest = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      rows[i] = delimiter_.empty() ? split_whitespace(px[i]) : split_exact(px[i]);
      widest = std::max(widest, rows[i].size());
    }
    Shape shape = x.shape();
    shape.push_back(static_cast<int64_t>(widest));
    Tensor& out = ctx.allocate_output(0, DType::kString, shape);
    std::string* po = out.data<std::string>();
    for (size_t i = 0; i < rows.size(); ++i)
      std::copy(rows[i].begin(), rows[i].end(), po + i * widest);
    if (ctx.has_output(1)) {
      Tensor& lengths = ctx.allocate_output(1, DType::kInt64, x.shape());
      for (size_t i = 0; i < rows.size(); ++i) lengths.data<int64_t>()[i] = static_cast<int64_t>(rows[i].size());
    }
  }

 private:
  bool may_split(size_t done) const { return maxsplit_ < 0 || static_cast<int64_t>(done) < maxsplit_; }

  std::vector<std::string> split_exact(const std::string& s) const {
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t hit; may_split(parts.size()) && (hit = s.find(delimiter_, start)) != std::string::npos;) {
      parts.push_back(s.substr(start, hit - start));
      start = hit + delimiter_.size();
    }
    parts.push_back(s.substr(start));
    return parts;
  }

  std::vector<std::string> split_whitespace(const std::string& s) const {
    static const char* kSpace = " \t\n\r\f\v";
    std::vector<std::string> parts;
    size_t pos = s.find_first_not_of(kSpace);
    while (pos != std::string::npos) {
      if (!may_split(parts.size())) {
        // The rest, without its trailing whitespace, is the last field.
        parts.push_back(s.substr(pos, s.find_last_not_of(kSpace) + 1 - pos));
        break;
      }
      const size_t end = s.find_first_of(kSpace, pos);
      parts.push_back(s.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
      pos = end == std::string::npos ? end : s.find_first_not_of(kSpace, end);
    }
    return parts;
  }

  std::string delimiter_;
  int64_t maxsplit_;
};

/// True where the whole string matches `pattern` (RE2 syntax).
class RegexFullMatchKernel final : public Kernel {
 public:
  explicit RegexFullMatchKernel(const KernelInit& init)
      : regex_(std::make_unique<RE2>(init.attr_string("pattern"), RE2::Quiet)) {
    if (!regex_->ok()) init.fail("attribute 'pattern' is not a valid RE2 expression: ", regex_->error());
  }
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const std::string* px = strings(x, ctx, "X");
    Tensor& out = ctx.allocate_output(0, DType::kBool, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) out.data<bool>()[i] = RE2::FullMatch(px[i], *regex_);
  }

 private:
  std::unique_ptr<RE2> regex_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "StringConcat", 20, StringConcatKernel);
PARITY_REGISTER_KERNEL("", "StringSplit", 20, StringSplitKernel);
PARITY_REGISTER_KERNEL("", "RegexFullMatch", 20, RegexFullMatchKernel);

}  // namespace parity::runtime
