// Runs one model with two runners on the same synthetic inputs and checks that the outputs match
// (Polygraphy's "comparing frameworks" example). Uses ONNX Runtime when it is available, else a
// second ref runner.
#include <cstdio>

#include <parity/comparator.h>
#include <parity/loaders.h>
#include <parity/results.h>
#include <parity/runners.h>

#include "identity_model.h"

static int run_example() {
  using namespace parity;
  using namespace parity::compare;
  using namespace parity::compare::loaders;

  save_onnx(*make_identity_model(), "identity.onnx");
  const runners::RunnerInfo* ort = runners::RunnerRegistry::instance().find("ort");
  const bool have_ort = ort && (!ort->availability || ort->availability({}).is_ok());
  auto first = RunnerFromOnnx("ref", OnnxFromPath("identity.onnx"));
  auto second = RunnerFromOnnx(have_ort ? "ort" : "ref", OnnxFromPath("identity.onnx"));

  // Comparator::run feeds every runner identical inputs from the data loader (seeded random data,
  // the same values Polygraphy generates for the same seed) and returns their outputs.
  DataLoader data_loader;
  data_loader.seed(1).iterations(2).val_range("", {0.0, 2.0});
  RunResults results = Comparator::run({first.get(), second.get()}, data_loader);

  // compare_accuracy checks the outputs pairwise; the compare function sets the tolerances.
  SimpleCompareOptions tolerances;
  tolerances.atol = 1e-8;
  AccuracyResult accuracy = Comparator::compare_accuracy(results, compare_funcs::simple(tolerances));
  if (!accuracy) return 1;

  // Save the results as Polygraphy's RunResults JSON: `parity run --load-outputs` (or
  // `polygraphy run --load-outputs`) can compare against them later.
  write_run_results("inference_results.json", results);
  std::printf("Runners agree (%s vs. %s); results saved to inference_results.json\n",
              results.runs[0].first.c_str(), results.runs[1].first.c_str());
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
