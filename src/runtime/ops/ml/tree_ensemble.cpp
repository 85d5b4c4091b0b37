// Spec: https://onnx.ai/onnx/operators/onnx_aionnxml_TreeEnsembleRegressor.html,
//       onnx_aionnxml_TreeEnsembleClassifier.html, onnx_aionnxml_TreeEnsemble.html
// ai.onnx.ml TreeEnsembleRegressor and TreeEnsembleClassifier. Aggregation, the binary-classifier
// score layout and the transforms follow ONNX Runtime (the spec leaves them open). TreeEnsemble
// (ai.onnx.ml 5) is their successor with tensor attributes, separate leaf arrays and set-membership
// splits.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "runtime/ops/ml/ml_util.h"
#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime {
namespace {

using ml::PostTransform;

enum class NodeMode { kLeq, kLt, kGte, kGt, kEq, kNeq, kLeaf };

struct TreeNode {
  NodeMode mode = NodeMode::kLeaf;
  int64_t feature = 0;
  double threshold = 0.0;
  int64_t true_child = -1;   // index into the node array
  int64_t false_child = -1;
  bool missing_goes_true = false;
  std::vector<std::pair<int64_t, double>> leaf_weights;  // (target or class id, weight)
};

/// Parsed forest: nodes of all trees and the root index of each tree.
class Forest {
 public:
  /// `prefix` is "target" (regressor) or "class" (classifier) for the leaf-weight attributes.
  Forest(const KernelInit& init, const std::string& prefix) {
    const auto tree_ids = init.attr_ints("nodes_treeids");
    const auto node_ids = init.attr_ints("nodes_nodeids");
    const auto features = init.attr_ints("nodes_featureids");
    const auto values = init.attr_floats("nodes_values", {});
    const auto modes = init.attr_strings("nodes_modes");
    const auto true_ids = init.attr_ints("nodes_truenodeids");
    const auto false_ids = init.attr_ints("nodes_falsenodeids");
    const auto missing = init.attr_ints("nodes_missing_value_tracks_true", {});
    const size_t n = tree_ids.size();
    if (node_ids.size() != n || features.size() != n || modes.size() != n || true_ids.size() != n ||
        false_ids.size() != n || (!values.empty() && values.size() != n) || (!missing.empty() && missing.size() != n))
      init.fail("the nodes_* attributes must all have ", n, " entries");
    std::map<std::pair<int64_t, int64_t>, int64_t> index;
    std::set<int64_t> trees;
    nodes_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      if (!index.emplace(std::make_pair(tree_ids[i], node_ids[i]), static_cast<int64_t>(i)).second)
        init.fail("node ", node_ids[i], " of tree ", tree_ids[i], " is defined twice");
      if (trees.insert(tree_ids[i]).second) roots_.push_back(static_cast<int64_t>(i));  // first node = root
      TreeNode& node = nodes_[i];
      node.mode = parse_mode(init, modes[i]);
      node.feature = features[i];
      node.threshold = values.empty() ? 0.0 : values[i];
      node.missing_goes_true = !missing.empty() && missing[i] != 0;
    }
    for (size_t i = 0; i < n; ++i) {
      if (nodes_[i].mode == NodeMode::kLeaf) continue;
      auto t = index.find({tree_ids[i], true_ids[i]});
      auto f = index.find({tree_ids[i], false_ids[i]});
      if (t == index.end() || f == index.end()) init.fail("node ", node_ids[i], " of tree ", tree_ids[i], " has a missing child");
      nodes_[i].true_child = t->second;
      nodes_[i].false_child = f->second;
    }
    const auto w_trees = init.attr_ints(prefix + "_treeids");
    const auto w_nodes = init.attr_ints(prefix + "_nodeids");
    const auto w_ids = init.attr_ints(prefix + "_ids");
    const auto weights = init.attr_floats(prefix + "_weights");
    if (w_nodes.size() != w_trees.size() || w_ids.size() != w_trees.size() || weights.size() != w_trees.size())
      init.fail("the ", prefix, "_* attributes must all have ", w_trees.size(), " entries");
    for (size_t i = 0; i < w_trees.size(); ++i) {
      auto it = index.find({w_trees[i], w_nodes[i]});
      if (it == index.end()) init.fail(prefix, " weight ", i, " refers to a missing node");
      if (w_ids[i] < 0) init.fail(prefix, "_ids holds the negative id ", w_ids[i]);
      nodes_[it->second].leaf_weights.emplace_back(w_ids[i], weights[i]);
      max_id_ = std::max(max_id_, w_ids[i]);
    }
  }

  /// Leaf reached by row x in the tree rooted at `root`.
  const TreeNode& leaf(const double* x, int64_t features, int64_t root, const KernelContext& ctx) const {
    int64_t i = root;
    for (size_t steps = 0; steps <= nodes_.size(); ++steps) {
      const TreeNode& node = nodes_[i];
      if (node.mode == NodeMode::kLeaf) return node;
      if (node.feature < 0 || node.feature >= features)
        ctx.fail("a tree node reads feature ", node.feature, " but X has ", features, " features");
      const double v = x[node.feature];
      bool go_true = false;
      if (std::isnan(v) && node.missing_goes_true) {
        go_true = true;
      } else {
        switch (node.mode) {
          case NodeMode::kLeq: go_true = v <= node.threshold; break;
          case NodeMode::kLt: go_true = v < node.threshold; break;
          case NodeMode::kGte: go_true = v >= node.threshold; break;
          case NodeMode::kGt: go_true = v > node.threshold; break;
          case NodeMode::kEq: go_true = v == node.threshold; break;
          case NodeMode::kNeq: go_true = v != node.threshold; break;
          case NodeMode::kLeaf: break;
        }
      }
      i = go_true ? node.true_child : node.false_child;
    }
    ctx.fail("the tree ensemble has a cycle");
  }

  const std::vector<int64_t>& roots() const { return roots_; }
  int64_t max_id() const { return max_id_; }

 private:
  static NodeMode parse_mode(const KernelInit& init, const std::string& m) {
    if (m == "BRANCH_LEQ") return NodeMode::kLeq;
    if (m == "BRANCH_LT") return NodeMode::kLt;
    if (m == "BRANCH_GTE") return NodeMode::kGte;
    if (m == "BRANCH_GT") return NodeMode::kGt;
    if (m == "BRANCH_EQ") return NodeMode::kEq;
    if (m == "BRANCH_NEQ") return NodeMode::kNeq;
    if (m == "LEAF") return NodeMode::kLeaf;
    init.fail("unknown node mode '", m, "'");
  }

  std::vector<TreeNode> nodes_;
  std::vector<int64_t> roots_;
  int64_t max_id_ = -1;
};

/// X as [N, F] doubles.
std::vector<double> rows_of(const KernelContext& ctx, const Tensor& x, int64_t& rows, int64_t& features) {
  if (x.rank() != 1 && x.rank() != 2) ctx.fail("X must be [F] or [N, F], got ", shape_to_string(x.shape()));
  rows = x.rank() == 1 ? 1 : x.shape()[0];
  features = x.shape().back();
  return ml::numeric_values(x, ctx, "X");
}

enum class Aggregate { kSum, kAverage, kMin, kMax };

class TreeEnsembleRegressorKernel final : public Kernel {
 public:
  explicit TreeEnsembleRegressorKernel(const KernelInit& init)
      : forest_(init, "target"),
        targets_(init.attr_int("n_targets", 1)),
        base_values_(init.attr_floats("base_values", {})),
        transform_(ml::parse_post_transform(init)) {
    const std::string agg = init.attr_string("aggregate_function", "SUM");
    if (agg == "SUM") {
      aggregate_ = Aggregate::kSum;
    } else if (agg == "AVERAGE") {
      aggregate_ = Aggregate::kAverage;
    } else if (agg == "MIN") {
      aggregate_ = Aggregate::kMin;
    } else if (agg == "MAX") {
      aggregate_ = Aggregate::kMax;
    } else {
      init.fail("unknown aggregate_function '", agg, "'");
    }
    if (targets_ < 1 || forest_.max_id() >= targets_) init.fail("target ids must lie in [0, n_targets = ", targets_, ")");
    if (!base_values_.empty() && static_cast<int64_t>(base_values_.size()) != targets_)
      init.fail(base_values_.size(), " base_values for ", targets_, " targets");
  }

  void compute(KernelContext& ctx) const override {
    int64_t rows = 0, features = 0;
    const std::vector<double> x = rows_of(ctx, ctx.input(0), rows, features);
    std::vector<double> out(static_cast<size_t>(rows * targets_), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      double* y = out.data() + r * targets_;
      std::vector<bool> seen(static_cast<size_t>(targets_), false);
      for (int64_t root : forest_.roots()) {
        for (const auto& [target, weight] : forest_.leaf(x.data() + r * features, features, root, ctx).leaf_weights) {
          if (aggregate_ == Aggregate::kMin) {
            y[target] = seen[target] ? std::min(y[target], weight) : weight;
          } else if (aggregate_ == Aggregate::kMax) {
            y[target] = seen[target] ? std::max(y[target], weight) : weight;
          } else {
            y[target] += weight;
          }
          seen[target] = true;
        }
      }
      for (int64_t t = 0; t < targets_; ++t) {
        if (aggregate_ == Aggregate::kAverage) y[t] /= static_cast<double>(forest_.roots().size());
        if (!base_values_.empty()) y[t] += base_values_[t];
      }
      if (targets_ > 1) {
        ml::transform_row(y, targets_, transform_);
      } else if (transform_ == PostTransform::kProbit) {
        y[0] = ml::probit(y[0]);
      }
    }
    ml::write_float_output(ctx.allocate_output(0, compute_dtype(DType::kFloat32, ctx.precision()), {rows, targets_}), out);
  }

 private:
  Forest forest_;
  int64_t targets_;
  std::vector<float> base_values_;
  PostTransform transform_;
  Aggregate aggregate_ = Aggregate::kSum;
};

class TreeEnsembleClassifierKernel final : public Kernel {
 public:
  explicit TreeEnsembleClassifierKernel(const KernelInit& init)
      : forest_(init, "class"),
        base_values_(init.attr_floats("base_values", {})),
        transform_(ml::parse_post_transform(init)),
        label_strings_(init.attr_strings("classlabels_strings", {})),
        label_ints_(init.attr_ints("classlabels_int64s", {})) {
    using_strings_ = !label_strings_.empty();
    if (using_strings_ == !label_ints_.empty())
      init.fail("exactly one of classlabels_strings and classlabels_int64s must be set");
    classes_ = static_cast<int64_t>(using_strings_ ? label_strings_.size() : label_ints_.size());
    if (forest_.max_id() >= classes_) init.fail("class ids must lie in [0, ", classes_, ")");
    // Binary case: two labels and every leaf weight goes to one class id (ONNX Runtime).
    const auto ids = init.attr_ints("class_ids");
    binary_ = classes_ == 2 && !ids.empty() && std::all_of(ids.begin(), ids.end(), [&](int64_t i) { return i == ids[0]; });
    if (binary_) binary_class_ = ids[0];
    const auto weights = init.attr_floats("class_weights");
    all_positive_ = std::all_of(weights.begin(), weights.end(), [](float w) { return w >= 0; });
  }

  void compute(KernelContext& ctx) const override {
    int64_t rows = 0, features = 0;
    const std::vector<double> x = rows_of(ctx, ctx.input(0), rows, features);
    Tensor& labels = ctx.allocate_output(0, using_strings_ ? DType::kString : DType::kInt64, {rows});
    std::vector<double> z(static_cast<size_t>(rows * classes_), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<double> scores(static_cast<size_t>(classes_), 0.0);
      for (int64_t root : forest_.roots())
        for (const auto& [cls, weight] : forest_.leaf(x.data() + r * features, features, root, ctx).leaf_weights)
          scores[cls] += weight;
      for (size_t c = 0; c < base_values_.size() && c < scores.size(); ++c) scores[c] += base_values_[c];
      int64_t cls = 0;
      double* zr = z.data() + r * classes_;
      if (binary_) {
        // The single score s decides: s > 0.5 with only positive weights, s > 0 otherwise.
        const double s = scores[binary_class_];
        cls = all_positive_ ? (s > 0.5 ? 1 : 0) : (s > 0 ? 1 : 0);
        if (transform_ == PostTransform::kProbit) {
          zr[0] = ml::probit(s);
          zr[1] = 0.0;
        } else if (all_positive_) {
          zr[0] = 1.0 - s;
          zr[1] = s;
        } else if (transform_ == PostTransform::kLogistic) {
          zr[0] = ml::logistic(-s);
          zr[1] = ml::logistic(s);
        } else {
          zr[0] = -s;
          zr[1] = s;
        }
      } else {
        for (int64_t c = 1; c < classes_; ++c)
          if (scores[c] > scores[cls]) cls = c;
        std::copy(scores.begin(), scores.end(), zr);
        if (classes_ > 1) ml::transform_row(zr, classes_, transform_);
      }
      if (using_strings_) {
        labels.data<std::string>()[r] = label_strings_[cls];
      } else {
        labels.data<int64_t>()[r] = label_ints_[cls];
      }
    }
    if (ctx.has_output(1))
      ml::write_float_output(ctx.allocate_output(1, compute_dtype(DType::kFloat32, ctx.precision()), {rows, classes_}), z);
  }

 private:
  Forest forest_;
  std::vector<float> base_values_;
  PostTransform transform_;
  std::vector<std::string> label_strings_;
  std::vector<int64_t> label_ints_;
  bool using_strings_ = false;
  int64_t classes_ = 0;
  bool binary_ = false;
  int64_t binary_class_ = 0;
  bool all_positive_ = true;
};

/// TreeEnsemble-5: interior nodes (nodes_*) point to further nodes or, when nodes_*leafs says so,
/// into the leaf arrays (leaf_weights, leaf_targetids). Mode 6 (BRANCH_MEMBER) tests membership
/// in the next NaN-terminated run of membership_values, the runs taken in depth-first order (true
/// branch first) from each root.
class TreeEnsembleKernel final : public Kernel {
 public:
  explicit TreeEnsembleKernel(const KernelInit& init)
      : splits_(doubles(init.attr_tensor("nodes_splits"))),
        features_(init.attr_ints("nodes_featureids")),
        modes_(ints(init.attr_tensor("nodes_modes"))),
        true_ids_(init.attr_ints("nodes_truenodeids")),
        false_ids_(init.attr_ints("nodes_falsenodeids")),
        true_leafs_(init.attr_ints("nodes_trueleafs")),
        false_leafs_(init.attr_ints("nodes_falseleafs")),
        leaf_targets_(init.attr_ints("leaf_targetids")),
        leaf_weights_(doubles(init.attr_tensor("leaf_weights"))),
        roots_(init.attr_ints("tree_roots")),
        missing_true_(init.attr_ints("nodes_missing_value_tracks_true", {})),
        aggregate_(init.attr_int("aggregate_function", 1)),
        post_(static_cast<PostTransform>(init.attr_int("post_transform", 0))),
        targets_(init.attr_int("n_targets")) {
    const size_t n = splits_.size();
    for (size_t size : {features_.size(), modes_.size(), true_ids_.size(), false_ids_.size(), true_leafs_.size(),
                        false_leafs_.size()})
      if (size != n) init.fail("the nodes_* attributes must all have ", n, " entries");
    if (leaf_targets_.size() != leaf_weights_.size()) init.fail("leaf_targetids and leaf_weights differ in length");
    if (aggregate_ < 0 || aggregate_ > 3) init.fail("aggregate_function must be 0-3, got ", aggregate_);
    if (init.attr_int("post_transform", 0) < 0 || init.attr_int("post_transform", 0) > 4)
      init.fail("post_transform must be 0-4");
    for (size_t i = 0; i < n; ++i) {
      if (modes_[i] < 0 || modes_[i] > 6) init.fail("nodes_modes[", i, "] = ", modes_[i], " is not a mode 0-6");
      for (int64_t id : {true_ids_[i], false_ids_[i]})
        if (id < 0) init.fail("negative node or leaf index at node ", i);
    }
    members_.resize(n);
    if (init.has_attr("membership_values")) {
      const std::vector<double> values = doubles(init.attr_tensor("membership_values"));
      size_t next = 0;
      for (int64_t root : roots_) assign_members(init, root, values, next);
    }
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() != 2) ctx.fail("X must be 2-D [N, features], got ", shape_to_string(x.shape()));
    const int64_t rows = x.dim(0), cols = x.dim(1);
    const std::vector<double> xv = nn::load_as<double>(x);
    const double init_value = aggregate_ == 2 ? std::numeric_limits<double>::max()
                              : aggregate_ == 3 ? std::numeric_limits<double>::lowest() : 0.0;
    std::vector<double> out(static_cast<size_t>(rows * targets_), init_value);
    for (int64_t r = 0; r < rows; ++r) {
      double* scores = out.data() + r * targets_;
      for (int64_t root : roots_) {
        const int64_t leaf = find_leaf(ctx, root, xv.data() + r * cols, cols);
        const int64_t t = leaf_targets_[leaf];
        if (t < 0 || t >= targets_) ctx.fail("leaf target ", t, " is outside n_targets ", targets_);
        const double w = leaf_weights_[leaf];
        switch (aggregate_) {
          case 0: scores[t] += w / static_cast<double>(roots_.size()); break;
          case 1: scores[t] += w; break;
          case 2: scores[t] = std::min(scores[t], w); break;
          default: scores[t] = std::max(scores[t], w); break;
        }
      }
      ml::transform_row(scores, targets_, post_);
    }
    nn::emit_output(ctx, 0, x.dtype(), Shape{rows, targets_}, out);
  }

 private:
  static std::vector<double> doubles(const Tensor& t) { return nn::load_as<double>(t); }
  static std::vector<int64_t> ints(const Tensor& t) { return nn::load_as<int64_t>(t); }

  /// A degenerate tree is one leaf reached both ways from its root.
  bool is_leaf_root(int64_t root) const {
    return true_leafs_[root] && false_leafs_[root] && true_ids_[root] == false_ids_[root];
  }

  void assign_members(const KernelInit& init, int64_t node, const std::vector<double>& values, size_t& next) {
    if (node < 0 || node >= static_cast<int64_t>(modes_.size())) init.fail("node index ", node, " is out of range");
    if (modes_[node] == 6) {
      for (; next < values.size() && !std::isnan(values[next]); ++next) members_[node].insert(values[next]);
      if (next >= values.size()) init.fail("membership_values ends before the set of node ", node);
      ++next;  // the NaN terminating this set
    }
    if (!true_leafs_[node]) assign_members(init, true_ids_[node], values, next);
    if (!false_leafs_[node]) assign_members(init, false_ids_[node], values, next);
  }

  bool goes_true(int64_t node, double v) const {
    if (std::isnan(v) && !missing_true_.empty() && missing_true_[node] != 0) return true;
    const double s = splits_[node];
    switch (modes_[node]) {
      case 0: return v <= s;
      case 1: return v < s;
      case 2: return v >= s;
      case 3: return v > s;
      case 4: return v == s;
      case 5: return v != s;
      default: return members_[node].count(v) > 0;
    }
  }

  int64_t find_leaf(const KernelContext& ctx, int64_t root, const double* row, int64_t cols) const {
    if (is_leaf_root(root)) return true_ids_[root];
    int64_t node = root;
    for (size_t steps = 0; steps <= modes_.size(); ++steps) {
      const int64_t f = features_[node];
      if (f < 0 || f >= cols) ctx.fail("node ", node, " reads feature ", f, " of ", cols);
      const bool t = goes_true(node, row[f]);
      const int64_t next = t ? true_ids_[node] : false_ids_[node];
      if (t ? true_leafs_[node] : false_leafs_[node]) {
        if (next >= static_cast<int64_t>(leaf_weights_.size())) ctx.fail("leaf index ", next, " is out of range");
        return next;
      }
      if (next >= static_cast<int64_t>(modes_.size())) ctx.fail("node index ", next, " is out of range");
      node = next;
    }
    ctx.fail("the tree from root ", root, " has a cycle");
  }

  std::vector<double> splits_;
  std::vector<int64_t> features_, modes_, true_ids_, false_ids_, true_leafs_, false_leafs_, leaf_targets_;
  std::vector<double> leaf_weights_;
  std::vector<int64_t> roots_, missing_true_;
  int64_t aggregate_;
  PostTransform post_;
  int64_t targets_;
  std::vector<std::set<double>> members_;  // per BRANCH_MEMBER node
};

}  // namespace

PARITY_REGISTER_KERNEL("ai.onnx.ml", "TreeEnsembleRegressor", 1, TreeEnsembleRegressorKernel);
PARITY_REGISTER_KERNEL("ai.onnx.ml", "TreeEnsembleClassifier", 1, TreeEnsembleClassifierKernel);
PARITY_REGISTER_KERNEL("ai.onnx.ml", "TreeEnsemble", 5, TreeEnsembleKernel);

}  // namespace parity::runtime
