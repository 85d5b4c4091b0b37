// Interoperating with the backend's own API: `extend` lets our code modify what a loader returns
// (here, the ONNX protobuf) before the runner gets it (Polygraphy's func.extend example).
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <vector>

#include "compare/loaders.h"
#include "identity_model.h"
#include "runners/runner.h"

static int run_example() {
  using namespace parity;
  using namespace parity::compare::loaders;

  save_onnx(*make_identity_model(), "identity.onnx");

  // The function receives what OnnxFromPath returns and may change it in place.
  ModelLoader load_model = extend(OnnxFromPath("identity.onnx"), [](Model& model) {
    model->mutable_graph()->set_name("MyIdentity");
    std::printf("Graph name: %s\n", model->graph().name().c_str());
  });

  // It may also replace the value: add a second output "y2", a copy of y.
  load_model = extend(load_model, [](Model& model) -> Model {
    auto copy = std::make_shared<onnx::ModelProto>(*model);
    onnx::NodeProto* copy_node = copy->mutable_graph()->add_node();
    copy_node->set_op_type("Identity");
    copy_node->add_input("y");
    copy_node->add_output("y2");
    *copy->mutable_graph()->add_output() = copy->graph().output(0);
    copy->mutable_graph()->mutable_output(1)->set_name("y2");
    return copy;
  });

  auto runner = RunnerFromOnnx("ref", load_model);
  runners::ActiveRunner active(*runner);
  const Tensor input = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const TensorMap outputs = runner->infer({{"x", input}});
  if (!outputs.at("y").bit_equal(input) || !outputs.at("y2").bit_equal(input)) {
    std::fprintf(stderr, "unexpected outputs\n");
    return 1;
  }
  std::printf("Inference succeeded!\n");
  return 0;
}

int main() {
  try {
    return run_example();
  } catch (const parity::Error& e) {  // user errors: one line, exit 1
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
