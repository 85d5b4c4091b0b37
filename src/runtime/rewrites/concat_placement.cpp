#include "runtime/rewrites/concat_placement.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace parity::runtime {

namespace {

/// Dtypes whose elements are whole bytes, so a slice starts at a byte offset.
bool byte_sized_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: case DType::kFloat64: case DType::kFloat16: case DType::kBFloat16:
    case DType::kInt8: case DType::kUInt8: case DType::kInt16: case DType::kUInt16:
    case DType::kInt32: case DType::kUInt32: case DType::kInt64: case DType::kUInt64: case DType::kBool:
      return true;
    default:
      return false;
  }
}

size_t byte_size(const StaticType& t) { return static_cast<size_t>(shape_numel(t.shape)) * dtype_size(t.dtype); }

/// byte_size of a type read from a plan file, whose dimensions may be anything: nullopt when a
/// dimension is negative or the product overflows.
std::optional<size_t> checked_byte_size(DType dtype, const Shape& shape) {
  size_t bytes = dtype_size(dtype);
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(bytes, static_cast<size_t>(d), &bytes)) return std::nullopt;
  return bytes;
}

/// A Concat that could be a view of its inputs laid back to back.
struct Candidate {
  size_t node = 0;          // index in g.nodes_
  std::vector<int> inputs;  // slots, in order
  StaticType output;
};

/// Finds the Concats whose inputs could be written in place, and groups them by shared buffer.
class PlacementPlanner {
 public:
  /// A buffer is shared only by two Concats or more (a dense block). A lone Concat between
  /// oneDNN convolutions is cheaper as it was: its inputs and output stay channels-last, and
  /// placed NCHW slices would cost the convolutions around it a reorder each, more than the copy
  /// saves (SqueezeNet's fire modules). In a dense block every Concat copied the block's earlier
  /// maps again; placed, each is written once.
  static constexpr size_t kMinSharers = 2;

  PlacementPlanner(Subgraph& g, const StaticTypeOf& type_of)
      : g_(g), type_of_(type_of), producer_(g.slot_names_.size(), -1), is_graph_output_(g.slot_names_.size(), false) {
    for (size_t n = 0; n < g.nodes_.size(); ++n)
      for (int s : g.nodes_[n].outputs)
        if (s >= 0) producer_[s] = static_cast<int>(n);
    for (int s : g.output_slots_) is_graph_output_[s] = true;
  }

  int place() {
    std::vector<Candidate> candidates;
    for (size_t n = 0; n < g_.nodes_.size(); ++n)
      if (auto c = candidate(n)) candidates.push_back(std::move(*c));
    // Longest first: a dense block's last Concat fixes the order of the block's buffer, and the
    // earlier ones join it as prefixes.
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.inputs.size() > b.inputs.size(); });
    for (const Candidate& c : candidates) join_or_start_group(c);
    int placed = 0;
    for (const Group& group : groups_)
      if (group.members.size() >= kMinSharers) placed += record(group);
    return placed;
  }

 private:
  struct Group {
    std::vector<int> values;      // the longest member's inputs, in buffer order
    StaticType buffer;            // the longest member's output
    std::vector<const Candidate*> members;
  };

  std::optional<Candidate> candidate(size_t n) const {
    const PlannedNode& node = g_.nodes_[n];
    if (node.folded || node.spec.op_type != "Concat" || !node.spec.domain.empty()) return std::nullopt;
    if (node.outputs.size() != 1 || node.outputs[0] < 0 || is_graph_output_[node.outputs[0]]) return std::nullopt;
    if (node.inputs.empty()) return std::nullopt;
    Candidate c;
    c.node = n;
    c.inputs = node.inputs;
    const std::optional<StaticType> out = type_of_(node.outputs[0]);
    if (!out || !byte_sized_dtype(out->dtype) || out->shape.empty()) return std::nullopt;
    c.output = *out;
    const std::optional<int64_t> axis = concat_axis(node, static_cast<int64_t>(out->shape.size()));
    if (!axis) return std::nullopt;
    // The output is its inputs back to back only when nothing varies before the axis.
    for (int64_t d = 0; d < *axis; ++d)
      if (out->shape[d] != 1) return std::nullopt;
    std::unordered_set<int> seen;
    int64_t joined = 0;
    for (int s : c.inputs) {
      if (!placeable_value(s) || !seen.insert(s).second) return std::nullopt;
      const std::optional<StaticType> in = type_of_(s);
      if (!in || in->dtype != out->dtype || in->shape.size() != out->shape.size() || shape_numel(in->shape) == 0)
        return std::nullopt;
      for (size_t d = 0; d < in->shape.size(); ++d)
        if (static_cast<int64_t>(d) != *axis && in->shape[d] != out->shape[d]) return std::nullopt;
      joined += in->shape[*axis];
    }
    if (joined != out->shape[*axis]) return std::nullopt;
    return c;
  }

  static std::optional<int64_t> concat_axis(const PlannedNode& node, int64_t rank) {
    auto it = node.spec.attributes.find("axis");
    int64_t axis = 1;  // Concat-1's default
    if (it != node.spec.attributes.end()) {
      if (it->second.type != model::AttrType::kInt) return std::nullopt;
      axis = it->second.i;
    } else if (node.spec.opset >= 4) {
      return std::nullopt;  // required since Concat-4: the kernel reports it
    }
    if (axis < -rank || axis >= rank) return std::nullopt;
    return axis < 0 ? axis + rank : axis;
  }

  /// A value some node of this graph produces into memory of its own: not a graph input,
  /// initializer, capture or folded constant (their memory is not the executor's to place), not
  /// a graph output (handed to the caller), not a Concat's output (that may be a view itself).
  bool placeable_value(int s) const {
    if (s < 0 || producer_[s] < 0 || is_graph_output_[s]) return false;
    const PlannedNode& producer = g_.nodes_[producer_[s]];
    return !producer.folded && !(producer.spec.op_type == "Concat" && producer.spec.domain.empty());
  }

  void join_or_start_group(const Candidate& c) {
    if (auto it = group_of_value_.find(c.inputs[0]); it != group_of_value_.end()) {
      Group& group = groups_[it->second];
      if (c.inputs.size() <= group.values.size() && std::equal(c.inputs.begin(), c.inputs.end(), group.values.begin()))
        group.members.push_back(&c);
      return;  // else a value read by two unrelated Concats: this one copies
    }
    for (int s : c.inputs)
      if (group_of_value_.count(s)) return;
    for (int s : c.inputs) group_of_value_[s] = groups_.size();
    groups_.push_back({c.inputs, c.output, {&c}});
  }

  /// Writes the group's buffer and placements into the plan; returns its member count.
  int record(const Group& group) {
    const int buffer = static_cast<int>(g_.shared_buffers_.size());
    SharedBuffer shared{group.buffer.dtype, group.buffer.shape, -1};
    size_t offset = 0;
    for (int s : group.values) {
      const StaticType type = *type_of_(s);
      g_.placed_values_[s] = {buffer, offset, type.shape};
      offset += byte_size(type);
      shared.last_node = std::max(shared.last_node, producer_[s]);
    }
    for (const Candidate* member : group.members) {
      PlannedNode& node = g_.nodes_[member->node];
      node.placed_concat = true;
      g_.placed_values_[node.outputs[0]] = {buffer, 0, member->output.shape};
      shared.last_node = std::max(shared.last_node, static_cast<int>(member->node));
    }
    g_.shared_buffers_.push_back(std::move(shared));
    return static_cast<int>(group.members.size());
  }

  Subgraph& g_;
  const StaticTypeOf& type_of_;
  std::vector<int> producer_;  // per slot: index in g.nodes_ or -1
  std::vector<bool> is_graph_output_;
  std::vector<Group> groups_;
  std::unordered_map<int, size_t> group_of_value_;
};

}  // namespace

int place_concat_inputs(Subgraph& g, const StaticTypeOf& type_of) {
  return PlacementPlanner(g, type_of).place();
}

std::string placement_inconsistency(const Subgraph& g) {
  const auto num_slots = static_cast<int>(g.slot_names_.size());
  std::vector<size_t> buffer_bytes;
  for (const SharedBuffer& b : g.shared_buffers_) {
    if (!byte_sized_dtype(b.dtype)) return "a shared buffer has an unsupported dtype";
    const std::optional<size_t> bytes = checked_byte_size(b.dtype, b.shape);
    if (!bytes) return "a shared buffer has a bad shape";
    if (b.last_node < 0 || b.last_node >= static_cast<int>(g.nodes_.size())) return "a shared buffer names no node";
    buffer_bytes.push_back(*bytes);
  }
  for (const auto& [slot, placed] : g.placed_values_) {
    if (slot < 0 || slot >= num_slots) return "a placed value names no slot";
    if (placed.buffer < 0 || placed.buffer >= static_cast<int>(buffer_bytes.size())) return "a placed value names no buffer";
    const std::optional<size_t> bytes = checked_byte_size(g.shared_buffers_[placed.buffer].dtype, placed.shape);
    const size_t capacity = buffer_bytes[placed.buffer];
    if (!bytes || *bytes > capacity || placed.byte_offset > capacity - *bytes) return "a placed value lies outside its buffer";
  }
  // A placed Concat's output is its inputs back to back from the start of their common buffer.
  for (const PlannedNode& node : g.nodes_) {
    if (!node.placed_concat) continue;
    if (node.outputs.size() != 1 || !g.placed_values_.count(node.outputs[0]))
      return node.label + " is placed without its output";
    const PlacedValue& out = g.placed_values_.at(node.outputs[0]);
    const DType dtype = g.shared_buffers_[out.buffer].dtype;
    size_t offset = 0;
    for (int s : node.inputs) {
      auto it = g.placed_values_.find(s);
      if (it == g.placed_values_.end() || it->second.buffer != out.buffer || it->second.byte_offset != offset)
        return node.label + " is placed but its inputs are not back to back";
      offset += byte_size({dtype, it->second.shape});
    }
    if (out.byte_offset != 0 || offset != byte_size({dtype, out.shape}))
      return node.label + " is placed but its output is not its inputs";
  }
  return {};
}

}  // namespace parity::runtime
