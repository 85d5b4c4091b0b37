#include "tools/verify.h"

#include <onnx/onnx_pb.h>

#include <cmath>

#include "compare/data_loader.h"
#include "core/stats.h"
#include "core/text.h"
#include "runtime/session.h"

namespace parity::tools {

VerifyResult verify_same_outputs(const model::Model& original, const model::Model& rewritten, int64_t iterations,
                                 double atol, double rtol) {
  const runtime::Session before = runtime::Session::create(original.proto(), {}, original.base_dir()).value();
  const runtime::Session after = runtime::Session::create(rewritten.proto(), {}, rewritten.base_dir()).value();
  compare::DataLoader loader;
  loader.iterations(iterations);
  loader.input_metadata(after.input_metadata());
  VerifyResult result;
  result.iterations = iterations;
  for (int64_t i = 0; i < iterations; ++i) {
    const TensorMap feed = loader.generate(static_cast<size_t>(i));
    const TensorMap want = before.run(feed);
    const TensorMap got = after.run(feed);
    result.outputs_compared = 0;
    for (const auto& [name, expected] : want) {
      const Tensor* actual = got.find(name);
      if (!actual) continue;
      ++result.outputs_compared;
      if (actual->numel() != expected.numel() || actual->dtype() != expected.dtype()) {
        if (!result.mismatch)
          result.mismatch = str_cat("output '", name, "', iteration ", i, ": ", dtype_name(actual->dtype()), " ",
                                    actual->numel(), " values instead of ", dtype_name(expected.dtype()), " ",
                                    expected.numel());
        continue;
      }
      if (!is_floating(expected.dtype()) && expected.dtype() != DType::kInt64 && expected.dtype() != DType::kInt32 &&
          expected.dtype() != DType::kBool)
        continue;
      double max_abs = 0, max_rel = 0;
      bool bad = false;
      for (int64_t k = 0; k < expected.numel(); ++k) {
        const double b = expected.value_as_double(k), a = actual->value_as_double(k);
        if (std::isnan(a) && std::isnan(b)) continue;
        const double diff = a == b ? 0.0 : std::fabs(a - b);
        max_abs = std::max(max_abs, diff);
        max_rel = std::max(max_rel, b != 0 ? diff / std::fabs(b) : diff);
        bad |= !(diff <= atol + rtol * std::fabs(b));
      }
      result.max_absdiff = std::max(result.max_absdiff, max_abs);
      if (bad && !result.mismatch)
        result.mismatch = str_cat("output '", name, "', iteration ", i, ": max abs err ", format_g(max_abs, 5),
                                  ", max rel err ", format_g(max_rel, 5));
    }
  }
  return result;
}

}  // namespace parity::tools
