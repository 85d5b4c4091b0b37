// Splits an optimized kernel's rows over the session's threads, each chunk running oneDNN
// single-threaded on one of parity's threads.
//
// Why not oneDNN's own OpenMP parallelism: libgomp's idle workers spin after every parallel
// region (OMP_WAIT_POLICY defaults to spinning and is only read at process start), and on a
// loaded machine those spinning threads starve everything else: ViT-Tiny at 2 threads measured
// 10x slower than at 1 (2.4 s against 0.2 s; 0.2 s with OMP_WAIT_POLICY=passive). parity's
// ThreadPool polls for at most 200 us (yielding its core) before it waits on a condition
// variable, so its idle threads cost next to nothing.
#pragma once

#if PARITY_HAVE_DNNL

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

#include "runtime/dnnl/dnnl_support.h"
#include "runtime/kernel.h"

namespace parity::runtime::dnnl_support {

/// How many row ranges to split `rows` into: 1 when the session has one thread or `work` (any
/// measure of the total cost, e.g. multiply-adds) is below `min_parallel_work`, else up to
/// ctx.num_threads() ranges of at least `min_rows` rows.
inline int64_t row_chunk_count(const KernelContext& ctx, int64_t rows, int64_t min_rows, int64_t work,
                               int64_t min_parallel_work) {
  if (work < min_parallel_work) return 1;
  return std::max<int64_t>(1, std::min<int64_t>(ctx.num_threads(), rows / std::max<int64_t>(min_rows, 1)));
}

/// Runs `rows` as `chunks` row ranges, chunk c covering [rows*c/chunks, rows*(c+1)/chunks), in
/// parallel on the session's threads, each with one primitive that runs oneDNN single-threaded:
/// `primitive_for(chunk_rows)` returns a std::shared_ptr<const P> (built once per size and cached
/// by the caller; nullptr when oneDNN cannot run that size) and `run(const P&, begin)` runs the
/// chunk starting at row `begin`. Chunk sizes are rows / chunks or one more, so at most two
/// primitives are looked up. Returns
/// false, having run nothing, when a size has no primitive. (Templates, not std::function: this
/// runs on every call, and wrapping capturing lambdas allocates.)
template <typename PrimitiveFor, typename Run>
bool run_chunks_with_primitives(KernelContext& ctx, int64_t rows, int64_t chunks, const PrimitiveFor& primitive_for,
                                const Run& run) {
  if (chunks <= 1) {
    const auto p = primitive_for(rows);
    if (!p) return false;
    run(*p, int64_t{0});
    return true;
  }
  const int64_t small = rows / chunks;
  const auto small_p = primitive_for(small);
  const auto large_p = rows % chunks != 0 ? primitive_for(small + 1) : small_p;
  if (!small_p || !large_p) return false;
  ctx.parallel_for(chunks, [&](int64_t first, int64_t last) {
    for (int64_t c = first; c < last; ++c) {
      const int64_t begin = rows * c / chunks, end = rows * (c + 1) / chunks;
      run(end - begin == small ? *small_p : *large_p, begin);
    }
  });
  return true;
}

/// Primitives run on whichever thread picks up their chunk, but oneDNN's default (library)
/// scratchpad requires each primitive to run on the thread that created it. Chunked kernels
/// therefore create primitives with this attribute and pass a scratchpad from
/// `thread_scratchpad` (DNNL_ARG_SCRATCHPAD), which also makes concurrent runs of one primitive
/// safe.
inline dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

/// A scratchpad for one primitive execution on the calling thread, reused across calls.
inline dnnl::memory thread_scratchpad(const dnnl::memory::desc& desc) {
  thread_local std::unique_ptr<char[]> buffer;
  thread_local size_t capacity = 0;
  const size_t size = desc.get_size();
  if (size > capacity) {
    buffer.reset(new char[size]);
    capacity = size;
  }
  return dnnl::memory(desc, cpu_engine(), buffer.get());
}

/// What a thread_buffer holds; buffers of different slots may be in use at the same time.
enum class BufferSlot { kSource = 0, kDestination = 1 };

/// A buffer for `desc` on the calling thread, reused across calls: a primitive's input or output
/// in the layout it chose, between the reorders from and to parity's tensors. A fresh allocation
/// per call was mmapped and page-faulted every time (MobileNetV2's 1x3x224x224 input conversion
/// took 0.26 ms instead of 0.02 ms).
inline dnnl::memory thread_buffer(const dnnl::memory::desc& desc, BufferSlot slot) {
  struct Buffer {
    void* data = nullptr;
    size_t capacity = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffers[2];
  Buffer& b = buffers[static_cast<int>(slot)];
  const size_t size = desc.get_size();
  if (size > b.capacity) {
    std::free(b.data);
    const size_t rounded = (size + 63) / 64 * 64;
    b.data = std::aligned_alloc(64, rounded);
    if (!b.data) throw std::bad_alloc();
    b.capacity = rounded;
  }
  return dnnl::memory(desc, cpu_engine(), b.data);
}

}  // namespace parity::runtime::dnnl_support

#endif  // PARITY_HAVE_DNNL
