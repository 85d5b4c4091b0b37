// Loads a serialized model from a file's bytes and runs it (Polygraphy's "load and run" example).
#include <cstdio>
#include <filesystem>
#include <vector>

#include "compare/loaders.h"
#include "identity_model.h"
#include "runners/runner.h"

static int run_example() {
  using namespace parity;
  using namespace parity::compare::loaders;

  if (!std::filesystem::exists("identity.onnx")) save_onnx(*make_identity_model(), "identity.onnx");

  // Compose loaders: bytes from a path, then a model from the bytes.
  ModelLoader load = OnnxFromBytes(BytesFromPath("identity.onnx"));
  auto runner = RunnerFromOnnx("ref", load);
  runners::ActiveRunner active(*runner);
  const Tensor input = Tensor::from_vector<float>({1, 1, 2, 2}, {0.5f, -1.0f, 2.0f, 3.25f});
  const TensorMap outputs = runner->infer({{"x", input}});
  if (!outputs.at("y").bit_equal(input)) {
    std::fprintf(stderr, "identity model returned something else\n");
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
