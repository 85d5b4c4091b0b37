// Validates a runner on a "real dataset" with golden outputs by using the runner directly (the
// Comparator is meant for a few inputs across runners, not for whole datasets).
#include <cstdio>
#include <vector>

#include <parity/loaders.h>
#include <parity/runners.h>

#include "identity_model.h"

static int run_example() {
  using namespace parity;
  using namespace parity::compare::loaders;

  // Pretend this is a very large dataset. For an identity model the golden outputs are the inputs.
  const Tensor ones = Tensor::from_vector<float>({1, 1, 2, 2}, std::vector<float>(4, 1.0f));
  const Tensor zeros = Tensor::from_vector<float>({1, 1, 2, 2}, std::vector<float>(4, 0.0f));
  const std::vector<Tensor> dataset = {ones, zeros, ones, zeros};
  const std::vector<Tensor>& golden = dataset;

  auto runner = RunnerFromOnnx("ref", [] { return make_identity_model(); });
  runners::ActiveRunner active(*runner);
  for (size_t i = 0; i < dataset.size(); ++i) {
    // Outputs may share buffers the runner reuses on the next call; we only look at them here.
    const TensorMap outputs = runner->infer({{"x", dataset[i]}});
    if (!outputs.at("y").bit_equal(golden[i])) {
      std::fprintf(stderr, "sample %zu does not match its golden output\n", i);
      return 1;
    }
  }
  std::printf("Validation succeeded!\n");
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
