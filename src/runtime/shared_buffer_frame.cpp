#include "runtime/shared_buffer_frame.h"

#include <cstring>

#include "runtime/buffer_pool.h"

namespace parity::runtime {

SharedBufferFrame::SharedBufferFrame(const Subgraph& graph) : graph_(graph), buffers_(graph.shared_buffers_.size()) {}

std::optional<Tensor> SharedBufferFrame::view_of(int slot) {
  auto it = graph_.placed_values_.find(slot);
  if (it == graph_.placed_values_.end()) return std::nullopt;
  const PlacedValue& placed = it->second;
  const SharedBuffer& shared = graph_.shared_buffers_[placed.buffer];
  std::shared_ptr<Storage>& storage = buffers_[placed.buffer];
  if (!storage) storage = BufferPool::instance().acquire(static_cast<size_t>(shape_numel(shared.shape)) * dtype_size(shared.dtype));
  return Tensor(shared.dtype, placed.shape, storage, placed.byte_offset);
}

bool SharedBufferFrame::in_place(const Value& value, int slot) const {
  auto it = graph_.placed_values_.find(slot);
  if (it == graph_.placed_values_.end() || !value.is_tensor()) return false;
  const PlacedValue& placed = it->second;
  const std::shared_ptr<Storage>& storage = buffers_[placed.buffer];
  const Tensor& t = value.tensor();
  return storage && t.dtype() == graph_.shared_buffers_[placed.buffer].dtype && t.shape() == placed.shape &&
         t.raw_data() == storage->data() + placed.byte_offset;
}

bool SharedBufferFrame::join_in_place(const PlannedNode& node, std::vector<Value>& frame) {
  for (int s : node.inputs)
    if (s < 0 || !in_place(frame[s], s)) return false;
  std::optional<Tensor> joined = view_of(node.outputs[0]);
  if (!joined) return false;
  frame[node.outputs[0]] = Value(std::move(*joined));
  return true;
}

void SharedBufferFrame::settle_outputs(const PlannedNode& node, std::vector<Value>& frame) {
  if (node.placed_concat) return;  // a Concat that ran wrote its own output (its inputs were not all in place)
  for (int s : node.outputs) {
    if (s < 0 || !frame[s].is_tensor() || in_place(frame[s], s)) continue;
    std::optional<Tensor> slice = view_of(s);
    const Tensor& written = frame[s].tensor();
    if (!slice || written.dtype() != slice->dtype() || written.shape() != slice->shape()) continue;
    if (slice->size_bytes()) std::memcpy(slice->raw_data(), written.raw_data(), slice->size_bytes());
    frame[s] = Value(std::move(*slice));
  }
}

void SharedBufferFrame::release_after(int node_index) {
  for (size_t b = 0; b < buffers_.size(); ++b)
    if (graph_.shared_buffers_[b].last_node == node_index) buffers_[b].reset();
}

}  // namespace parity::runtime
