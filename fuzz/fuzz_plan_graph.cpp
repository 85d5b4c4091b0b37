// Plan files whose checksums are recomputed after mutation (reseal_plan_bytes), so the mutated
// header sizes, planned graph and weights reach the loader's consistency checks and the kernels
// it rebuilds; a plan that loads is then run once on zero inputs of its declared shapes.
#include <cstdint>
#include <optional>
#include <string>

#include "core/tensor_map.h"
#include "fuzz_common.h"
#include "runtime/plan/plan_file.h"

namespace {

// Feeds of zeros when every input has a small static shape; otherwise no run.
std::optional<parity::TensorMap> zero_feed(const parity::runtime::Session& session) {
  parity::TensorMap feed;
  for (const auto& meta : session.input_metadata()) {
    if (meta.shape.unknown_rank || !meta.shape.is_static()) return std::nullopt;
    parity::Shape shape = meta.shape.to_static();
    if (parity::shape_numel(shape) > (1 << 16)) return std::nullopt;
    feed.set(meta.name, parity::Tensor(meta.dtype, std::move(shape)));
  }
  return feed;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The run may legitimately make many large intermediates (Expand, Tile, ... to constant shapes):
  // 16 MiB per tensor keeps their sum under the 2 GB RSS limit (a 60 s run found a plan whose
  // intermediates of up to 256 MiB each summed past it: an out-of-memory, not a bug).
  parity::fuzz::limit_allocations(size_t{16} << 20);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto sealed = parity::runtime::plan::reseal_plan_bytes(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!sealed) return 0;
  parity::fuzz::expect_clean([&] {
    auto loaded = parity::runtime::plan::load_plan_bytes(*sealed);
    if (!loaded.is_ok()) return;
    const parity::runtime::Session& session = loaded.value();
    if (auto feed = zero_feed(session)) session.run(*feed);
  });
  return 0;
}
