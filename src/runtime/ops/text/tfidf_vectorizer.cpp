// Spec: https://onnx.ai/onnx/operators/onnx__TfIdfVectorizer.html
// TfIdfVectorizer.
// Every (start, n, skip) combination is looked up once; unigrams ignore the skip (counted once per
// start). IDF/TFIDF weights are indexed by output coordinate, as ONNX Runtime does.
#include <algorithm>
#include <map>

#include "runtime/kernel.h"

namespace parity::runtime {
namespace {

enum class WeightMode { kTF, kIDF, kTFIDF };

/// N-gram tables for tokens of type Token (int64_t or std::string): per length n, n-gram -> output index.
template <typename Token>
using NgramTables = std::vector<std::map<std::vector<Token>, int64_t>>;

class TfIdfVectorizerKernel final : public Kernel {
 public:
  explicit TfIdfVectorizerKernel(const KernelInit& init)
      : min_gram_(init.attr_int("min_gram_length")),
        max_gram_(init.attr_int("max_gram_length")),
        max_skip_(init.attr_int("max_skip_count")),
        weights_(init.attr_floats("weights", {})) {
    const std::string mode = init.attr_string("mode");
    if (mode == "TF") {
      mode_ = WeightMode::kTF;
    } else if (mode == "IDF") {
      mode_ = WeightMode::kIDF;
    } else if (mode == "TFIDF") {
      mode_ = WeightMode::kTFIDF;
    } else {
      init.fail("mode must be TF, IDF or TFIDF, got '", mode, "'");
    }
    if (min_gram_ < 1 || max_gram_ < min_gram_)
      init.fail("gram lengths must satisfy 1 <= min_gram_length <= max_gram_length, got ", min_gram_, " and ", max_gram_);
    if (max_skip_ < 0) init.fail("max_skip_count must be >= 0, got ", max_skip_);
    const std::vector<int64_t> counts = init.attr_ints("ngram_counts");
    const std::vector<int64_t> indexes = init.attr_ints("ngram_indexes");
    strings_ = init.has_attr("pool_strings");
    if (strings_ == init.has_attr("pool_int64s")) init.fail("exactly one of pool_strings and pool_int64s must be set");
    if (strings_) {
      build_tables(init, init.attr_strings("pool_strings"), counts, indexes, string_tables_);
    } else {
      build_tables(init, init.attr_ints("pool_int64s"), counts, indexes, int_tables_);
    }
    for (int64_t i : indexes) output_size_ = std::max(output_size_, i + 1);
    if (!weights_.empty() && static_cast<int64_t>(weights_.size()) < output_size_)
      init.fail("weights has ", weights_.size(), " entries, fewer than the ", output_size_, " outputs");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() != 1 && x.rank() != 2) ctx.fail("input must be [C] or [N, C], got ", shape_to_string(x.shape()));
    const int64_t rows = x.rank() == 2 ? x.shape()[0] : 1;
    const int64_t cols = x.shape().back();
    std::vector<double> counts(static_cast<size_t>(rows * output_size_), 0.0);
    if (strings_) {
      if (x.dtype() != DType::kString) ctx.fail("the pool holds strings but the input is ", dtype_name(x.dtype()));
      count_ngrams(x.data<std::string>(), rows, cols, string_tables_, counts);
    } else if (x.dtype() == DType::kInt32 || x.dtype() == DType::kInt64) {
      std::vector<int64_t> tokens(static_cast<size_t>(x.numel()));
      for (int64_t i = 0; i < x.numel(); ++i)
        tokens[i] = x.dtype() == DType::kInt32 ? x.data<int32_t>()[i] : x.data<int64_t>()[i];
      count_ngrams(tokens.data(), rows, cols, int_tables_, counts);
    } else {
      ctx.fail("the pool holds integers but the input is ", dtype_name(x.dtype()));
    }
    const DType out_dtype = compute_dtype(DType::kFloat32, ctx.precision());
    Tensor& out = ctx.allocate_output(0, out_dtype, x.rank() == 2 ? Shape{rows, output_size_} : Shape{output_size_});
    for (size_t i = 0; i < counts.size(); ++i) {
      const double weight = weights_.empty() ? 1.0 : weights_[i % static_cast<size_t>(output_size_)];
      double v = counts[i];
      if (mode_ == WeightMode::kIDF) v = v > 0 ? weight : 0.0;
      if (mode_ == WeightMode::kTFIDF) v *= weight;
      if (out_dtype == DType::kFloat64) {
        out.data<double>()[i] = v;
      } else {
        out.data<float>()[i] = static_cast<float>(v);
      }
    }
  }

 private:
  template <typename Token>
  void build_tables(const KernelInit& init, const std::vector<Token>& pool, const std::vector<int64_t>& counts,
                    const std::vector<int64_t>& indexes, NgramTables<Token>& tables) const {
    tables.resize(static_cast<size_t>(max_gram_) + 1);
    size_t ngram_id = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      const int64_t n = static_cast<int64_t>(i) + 1;
      const int64_t begin = counts[i];
      const int64_t end = i + 1 < counts.size() ? counts[i + 1] : static_cast<int64_t>(pool.size());
      if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) || (end - begin) % n != 0)
        init.fail("ngram_counts ", i, " (", begin, "..", end, ") does not describe whole ", n, "-grams of the pool");
      for (int64_t p = begin; p < end; p += n, ++ngram_id) {
        if (ngram_id >= indexes.size()) init.fail("ngram_indexes has fewer entries than the pool has n-grams");
        if (indexes[ngram_id] < 0) init.fail("ngram_indexes holds the negative index ", indexes[ngram_id]);
        if (n <= max_gram_) tables[n][std::vector<Token>(pool.begin() + p, pool.begin() + p + n)] = indexes[ngram_id];
      }
    }
  }

  template <typename Token>
  void count_ngrams(const Token* tokens, int64_t rows, int64_t cols, const NgramTables<Token>& tables,
                    std::vector<double>& counts) const {
    std::vector<Token> key;
    for (int64_t r = 0; r < rows; ++r) {
      const Token* row = tokens + r * cols;
      double* row_counts = counts.data() + r * output_size_;
      for (int64_t start = 0; start < cols; ++start)
        for (int64_t n = min_gram_; n <= max_gram_; ++n) {
          if (tables[n].empty()) continue;
          for (int64_t skip = 0; skip <= (n == 1 ? 0 : max_skip_); ++skip) {
            const int64_t step = skip + 1;
            if (start + (n - 1) * step >= cols) break;
            key.clear();
            for (int64_t k = 0; k < n; ++k) key.push_back(row[start + k * step]);
            auto it = tables[n].find(key);
            if (it != tables[n].end()) row_counts[it->second] += 1.0;
          }
        }
    }
  }

  int64_t min_gram_;
  int64_t max_gram_;
  int64_t max_skip_;
  std::vector<float> weights_;
  WeightMode mode_ = WeightMode::kTF;
  bool strings_ = false;
  NgramTables<int64_t> int_tables_;
  NgramTables<std::string> string_tables_;
  int64_t output_size_ = 0;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "TfIdfVectorizer", 9, TfIdfVectorizerKernel);

}  // namespace parity::runtime
