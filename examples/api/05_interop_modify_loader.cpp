// Interoperating with the backend's own API: `extend` lets our code modify what a loader returns
// (here, the ONNX model, edited through parity's graph IR) before the runner gets it (Polygraphy's
// func.extend example).
#include <cstdio>
#include <memory>
#include <vector>

#include <parity/loaders.h>
#include <parity/model.h>
#include <parity/runners.h>

#include "identity_model.h"

static int run_example() {
  using namespace parity;
  using namespace parity::compare::loaders;

  save_onnx(*make_identity_model(), "identity.onnx");

  // The function receives what OnnxFromPath returns and may change it in place; parity's graph IR
  // (graph_from_onnx, onnx_from_graph) edits it without libonnx's protobuf classes.
  ModelLoader load_model = extend(OnnxFromPath("identity.onnx"), [](Model& proto) {
    std::shared_ptr<model::Graph> graph = graph_from_onnx(*proto);
    graph->name = "MyIdentity";
    std::printf("Graph name: %s\n", graph->name.c_str());
    proto = onnx_from_graph(*graph);
  });

  // It may also replace the value: add a second output "y2", a copy of y.
  load_model = extend(load_model, [](Model& proto) -> Model {
    std::shared_ptr<model::Graph> graph = graph_from_onnx(*proto);
    const model::ValuePtr y = graph->tensor("y");
    auto y2 = model::Value::variable("y2", y->dtype, y->shape);
    graph->nodes.push_back(std::make_shared<model::Node>("Identity", std::vector{y}, std::vector{y2}));
    graph->outputs.push_back(y2);
    return onnx_from_graph(*graph);
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
