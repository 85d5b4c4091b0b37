// Builds an fp16 plan (parity's engine) from an identity model, saves it, and runs it
// (Polygraphy's "inference with TensorRT" example: EngineFromNetwork + SaveEngine + TrtRunner).
//
// Loaders are lazy and composable: `load` below is a callable that produces the model when the
// runner activates; nothing is built or written until then.
#include <cstdio>
#include <vector>

#include <parity/loaders.h>
#include <parity/runners.h>

#include "identity_model.h"

static int run_example() {
  using namespace parity;
  using namespace parity::compare::loaders;

  // The model comes from our own code. PlanFromOnnx plans it with fp16 layers enabled; SavePlan
  // writes the plan out (for the next example) and passes it on, so it chains with other loaders.
  ModelLoader load = [] { return make_identity_model(); };
  PlanLoader build = SavePlan(PlanFromOnnx(load, BuildConfig{.fp16 = true}), "identity.plan");

  auto runner = RunnerFromPlan(build);
  runners::ActiveRunner active(*runner);  // activate() now, deactivate() when `active` goes away
  const Tensor input = Tensor::from_vector<float>({1, 1, 2, 2}, std::vector<float>(4, 1.0f));

  // NOTE: a runner may reuse its output buffers on the next infer(): clone() outputs you keep.
  const TensorMap outputs = runner->infer({{"x", input}});
  if (!outputs.at("y").bit_equal(input)) {
    std::fprintf(stderr, "identity model returned something else\n");
    return 1;
  }
  std::printf("Inference succeeded! (%.3f ms)\n", runner->last_inference_time() * 1000.0);
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
