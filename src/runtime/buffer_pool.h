// A process-wide cache of large tensor buffers for kernel outputs.
//
// Running a model allocates the same large outputs on every run; fresh multi-megabyte
// allocations come from mmap and cost a page fault per 4 KiB on first touch, and glibc hands
// them back to the kernel when freed. Measured on PP-OCRv4 det shapes (1x32x320x320 fp32), an
// elementwise node spent about half its time in page faults. The pool keeps freed buffers of at
// least kMinPooledBytes (rounded up to size classes 1/8 apart) and hands them out again, so a
// second run touches memory that is already mapped and often still in cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/tensor.h"

namespace parity::runtime {

class BufferPool {
 public:
  /// Smaller buffers go straight to the allocator (its bins already reuse them cheaply).
  static constexpr size_t kMinPooledBytes = size_t{256} << 10;
  /// Freed buffers are cached up to this many bytes in total; beyond it they are released.
  static constexpr size_t kDefaultCapacityBytes = size_t{1} << 30;

  /// The process-wide pool (never destroyed, so tensors may outlive every session).
  static BufferPool& instance();

  explicit BufferPool(size_t capacity_bytes = kDefaultCapacityBytes);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  /// Storage of at least `bytes` bytes, 64-byte aligned, contents unspecified; it returns its
  /// buffer to this pool when the last tensor using it goes away.
  std::shared_ptr<Storage> acquire(size_t bytes);

  /// Frees every cached buffer.
  void release_cached();
  /// Bytes currently cached (not in use).
  size_t cached_bytes() const;
  /// Acquisitions served from the cache since the pool was created (for tests).
  uint64_t hits() const;

  /// The size class a request of `bytes` is rounded up to (1/8 steps between powers of two).
  static size_t size_class(size_t bytes);

 private:
  friend class PooledStorage;
  void give_back(std::byte* data, size_t capacity);

  struct State;
  std::unique_ptr<State> state_;
};

/// An uninitialized tensor whose buffer comes from BufferPool::instance() when it is large
/// (non-string dtypes); like Tensor::uninitialized otherwise.
Tensor pooled_uninitialized_tensor(DType dtype, const Shape& shape);

}  // namespace parity::runtime
