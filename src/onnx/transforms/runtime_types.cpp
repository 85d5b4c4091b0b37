#include "onnx/transforms/runtime_types.h"

#include <onnx/onnx_pb.h>

#include "compare/data_loader.h"
#include "runtime/session.h"

namespace parity::transforms {

TensorMetadata resolve_types_by_running(const onnx_io::Model& model, const std::vector<std::string>& names) {
  runtime::Session session = runtime::Session::create(model.proto(), {}, model.base_dir()).value();
  compare::DataLoader loader;
  loader.input_metadata(session.input_metadata());
  const TensorMap feed = loader.generate(0);
  runtime::RunOptions run;
  run.outputs = names;
  const TensorMap results = session.run(feed, run);
  TensorMetadata found;
  for (const auto& name : names) {
    const Tensor* t = results.find(name);
    if (t) found.add(name, t->dtype(), DimShape(t->shape()));
  }
  return found;
}

}  // namespace parity::transforms
