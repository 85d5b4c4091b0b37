#include "compare/plan_loaders.h"

#include <onnx/onnx_pb.h>

#include "runners/ref/ref_runner.h"
#include "runtime/plan/plan_file.h"

namespace parity::compare::loaders {

namespace {
runtime::SessionOptions with_threads(int threads) {
  runtime::SessionOptions options;
  options.threads = threads;
  return options;
}
}  // namespace

Plan plan_from_onnx(const onnx::ModelProto& model, const BuildConfig& config, const std::string& base_dir) {
  runtime::SessionOptions options = with_threads(config.threads);
  options.kernels = config.kernels;
  options.fuse = config.fuse;
  options.reduced_precision.fp16 = config.fp16;
  options.reduced_precision.bf16 = config.bf16;
  options.reduced_precision.int8 = config.int8;
  options.reduced_precision.layer_precisions = config.layer_precisions;
  options.reduced_precision.constraints = config.precision_constraints;
  options.reduced_precision.int8_scales = config.int8_scales;
  options.profiles = config.profiles;
  return std::make_shared<const runtime::Session>(runtime::Session::create(model, options, base_dir).value());
}

Plan plan_from_bytes(std::string bytes, int threads) {
  return std::make_shared<const runtime::Session>(
      runtime::plan::load_plan_bytes(std::move(bytes), with_threads(threads)).value());
}

Plan plan_from_path(const std::string& path, int threads) {
  return std::make_shared<const runtime::Session>(runtime::plan::load_plan(path, with_threads(threads)).value());
}

std::string bytes_from_plan(const runtime::Session& plan) { return runtime::plan::plan_to_bytes(plan); }

void save_plan(const runtime::Session& plan, const std::string& path) { runtime::plan::save_plan(plan, path); }

PlanLoader PlanFromOnnx(ModelLoader model, BuildConfig config, std::string base_dir) {
  return [model = std::move(model), config, base_dir = std::move(base_dir)] {
    return plan_from_onnx(*model(), config, base_dir);
  };
}

PlanLoader PlanFromBytes(BytesLoader bytes, int threads) {
  return [bytes = std::move(bytes), threads] { return plan_from_bytes(bytes(), threads); };
}

PlanLoader PlanFromPath(std::string path, int threads) {
  return [path = std::move(path), threads] { return plan_from_path(path, threads); };
}

BytesLoader BytesFromPlan(PlanLoader plan) {
  return [plan = std::move(plan)] { return bytes_from_plan(*plan()); };
}

PlanLoader SavePlan(PlanLoader plan, std::string path) {
  return [plan = std::move(plan), path = std::move(path)] {
    Plan p = plan();
    save_plan(*p, path);
    return p;
  };
}

std::unique_ptr<runners::Runner> RunnerFromPlan(PlanLoader plan, std::string name) {
  return std::make_unique<runners::RefRunner>(std::move(plan), std::move(name));
}

}  // namespace parity::compare::loaders
