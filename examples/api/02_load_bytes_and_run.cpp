// Loads a saved plan from a file's bytes and runs it (Polygraphy's "load and run" example:
// EngineFromBytes(BytesFromPath(...)) + TrtRunner).
#include <cstdio>
#include <filesystem>
#include <vector>

#include <parity/loaders.h>
#include <parity/runners.h>

#include "identity_model.h"

static int run_example() {
  using namespace parity;
  using namespace parity::compare::loaders;

  // Example 01 writes identity.plan; this one also runs on its own.
  if (!std::filesystem::exists("identity.plan"))
    save_plan(*plan_from_onnx(*make_identity_model(), BuildConfig{.fp16 = true}), "identity.plan");

  // Compose loaders: bytes from a path, then a plan from the bytes (no planning again).
  auto runner = RunnerFromPlan(PlanFromBytes(BytesFromPath("identity.plan")));
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
