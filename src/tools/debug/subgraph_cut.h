// Cutting a model down to any subset of its nodes: the candidates of `parity debug reduce`.
// Values the subset consumes but does not produce become graph inputs (or, with the model's own
// inputs kept, constants holding their recorded values); values it produces that the rest of the
// model (or the model's outputs) use become graph outputs. Any subset is a valid model this way,
// so branches and multi-output graphs need no special handling.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor_map.h"
#include "model/graph.h"
#include "model/model.h"

namespace parity::tools::debug {

/// A subset of a model's nodes as a model of its own.
struct Cut {
  model::Model model;
  std::vector<std::string> inputs;   // graph inputs, in first-use order
  std::vector<std::string> outputs;  // graph outputs, in production order
  std::vector<std::string> frozen;   // values of cut-away nodes held as constants (CutBoundary::kModelInputs)
};

/// How a cut meets the rest of the model.
enum class CutBoundary {
  /// Every value crossing the cut is exposed: those it consumes become graph inputs, those it
  /// produces for the rest of the model become graph outputs (what a caller that feeds each cut
  /// itself, or partitions the model, needs).
  kExposed,
  /// Polygraphy's: the model's own inputs stay the only inputs (so a check that loads the
  /// model's inputs fits every cut), values of cut-away nodes become constants holding their
  /// recorded values, and the outputs are the values no kept node consumes (plus model outputs).
  kModelInputs,
};

/// Numbers the nodes of a (topologically sorted) model and cuts it to node subsets. Cut models
/// take value types from the base model, so give it typed values (see with_observed_types).
class GraphCutter {
 public:
  explicit GraphCutter(model::Model base);
  /// With CutBoundary::kModelInputs, `frozen_values` holds the value of every node output.
  GraphCutter(model::Model base, CutBoundary boundary, TensorMap frozen_values);

  size_t node_count() const { return nodes_.size(); }
  /// "name (Op)" of node i, for messages.
  std::string node_label(size_t i) const;
  const std::string& op_type(size_t i) const { return nodes_[i].op_type; }

  /// The model made of nodes `keep` (ascending indices); nullopt when it would have no outputs.
  std::optional<Cut> cut(const std::vector<size_t>& keep) const;
  /// Indices of the nodes node `index` depends on (transitively), plus `index`, ascending.
  std::vector<size_t> ancestors(size_t index) const;

 private:
  struct NodeInfo {
    std::string label;
    std::string op_type;
    std::vector<std::string> uses;      // inputs and outer references of subgraphs (variables only)
    std::vector<std::string> produces;  // non-empty outputs
  };
  model::Model cut_model(const std::vector<size_t>& keep, const Cut& cut) const;

  model::Model base_;
  CutBoundary boundary_ = CutBoundary::kExposed;
  TensorMap frozen_values_;
  std::vector<NodeInfo> nodes_;
  std::vector<std::string> graph_inputs_;
  std::vector<std::string> graph_outputs_;
};

/// Runs `model` on parity's runtime for each feed and returns, per feed, every graph input and
/// every value a main-graph node produces (deep copies).
std::vector<TensorMap> record_all_values(const model::Model& model, const std::vector<TensorMap>& feeds);

/// The model with every graph input and node output typed by the values observed in `values`
/// (dtype and static shape), so cuts anywhere have typed inputs and outputs.
model::Model with_observed_types(const model::Model& model, const TensorMap& values);

/// The feeds of a cut: for each iteration, the values of the cut's inputs taken from `values`.
std::vector<TensorMap> feeds_for(const Cut& cut, const std::vector<TensorMap>& values);

}  // namespace parity::tools::debug
