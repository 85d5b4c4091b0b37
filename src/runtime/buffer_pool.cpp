#include "runtime/buffer_pool.h"

#include <map>
#include <mutex>
#include <new>
#include <vector>

#include "core/allocation_limit.h"

namespace parity::runtime {

struct BufferPool::State {
  size_t capacity;
  mutable std::mutex mutex;
  std::multimap<size_t, std::byte*> free_blocks;  // size class -> buffers
  size_t cached = 0;
  uint64_t hits = 0;
};

namespace {
constexpr std::align_val_t kAlignment{64};

std::byte* allocate_block(size_t bytes) { return static_cast<std::byte*>(::operator new[](bytes, kAlignment)); }
void free_block(std::byte* p) { ::operator delete[](p, kAlignment); }
}  // namespace

class PooledStorage final : public Storage {
 public:
  PooledStorage(BufferPool& pool, std::byte* data, size_t size, size_t capacity)
      : pool_(pool), data_(data), size_(size), capacity_(capacity) {}
  ~PooledStorage() override { pool_.give_back(data_, capacity_); }
  std::byte* data() override { return data_; }
  size_t size_bytes() const override { return size_; }

 private:
  BufferPool& pool_;
  std::byte* data_;
  size_t size_;
  size_t capacity_;
};

BufferPool& BufferPool::instance() {
  static BufferPool* pool = new BufferPool();  // leaked on purpose: tensors may outlive static destruction
  return *pool;
}

BufferPool::BufferPool(size_t capacity_bytes) : state_(std::make_unique<State>()) { state_->capacity = capacity_bytes; }

BufferPool::~BufferPool() { release_cached(); }

size_t BufferPool::size_class(size_t bytes) {
  if (bytes <= 4096) return 4096;
  size_t power = 4096;
  while (power * 2 < bytes) power *= 2;  // power < bytes <= 2 * power
  const size_t step = power / 8;
  return (bytes + step - 1) / step * step;
}

std::shared_ptr<Storage> BufferPool::acquire(size_t bytes) {
  const size_t capacity = size_class(bytes);
  std::byte* data = nullptr;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    auto it = state_->free_blocks.find(capacity);
    if (it != state_->free_blocks.end()) {
      data = it->second;
      state_->free_blocks.erase(it);
      state_->cached -= capacity;
      ++state_->hits;
    }
  }
  if (!data) data = allocate_block(capacity);
  return std::make_shared<PooledStorage>(*this, data, bytes, capacity);
}

void BufferPool::give_back(std::byte* data, size_t capacity) {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->cached + capacity <= state_->capacity) {
      state_->free_blocks.emplace(capacity, data);
      state_->cached += capacity;
      return;
    }
  }
  free_block(data);
}

void BufferPool::release_cached() {
  std::multimap<size_t, std::byte*> blocks;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    blocks.swap(state_->free_blocks);
    state_->cached = 0;
  }
  for (auto& [size, p] : blocks) free_block(p);
}

size_t BufferPool::cached_bytes() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->cached;
}

uint64_t BufferPool::hits() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->hits;
}

Tensor pooled_uninitialized_tensor(DType dtype, const Shape& shape) {
  if (dtype == DType::kString || !is_valid_dtype(dtype)) return Tensor::uninitialized(dtype, shape);
  const size_t bytes = checked_tensor_bytes(dtype, shape);  // the pool allocates outside Tensor
  if (bytes < BufferPool::kMinPooledBytes) return Tensor::uninitialized(dtype, shape);
  return Tensor(dtype, shape, BufferPool::instance().acquire(bytes));
}

}  // namespace parity::runtime
