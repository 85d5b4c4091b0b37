// Loaders for plan files (runtime/plan/plan_file.h), in the idiom of loaders.h, mirroring
// Polygraphy's TensorRT loaders:
//
//   auto build = PlanFromOnnx(OnnxFromPath("model.onnx"));        // EngineFromNetwork
//   SavePlan(build, "model.plan")();                             // or BytesFromPlan(build)()
//   auto runner = RunnerFromPlan(PlanFromBytes(BytesFromPath("model.plan")));  // TrtRunner
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compare/loaders.h"
#include "runtime/session.h"

namespace parity::compare::loaders {

/// A built plan: the ref runtime's session, ready to run (or to save).
using Plan = std::shared_ptr<const runtime::Session>;
using PlanLoader = Loader<Plan>;  ///< A loader of a plan.

/// How PlanFromOnnx builds (TensorRT's CreateConfig): the ref runtime's planning choices.
struct BuildConfig {
  int threads = 1;  ///< threads of the built session (not stored in the plan: a load chooses again)
  runtime::KernelTier kernels = runtime::KernelTier::kOptimized;  ///< Reference kernels only, or optimized where registered.
  bool fuse = true;  ///< Fuse elementwise tails into their producers.
  /// Reduced precision (runtime/reduced_precision.h): layers the builder may run in fp16, bf16 or
  /// int8 (int8 needs calibrated scales, tools/calibration.h).
  bool fp16 = false;
  bool bf16 = false;  ///< Let layers run in bfloat16.
  bool int8 = false;  ///< Let Conv/ConvTranspose/MatMul/Gemm run in int8 (needs int8_scales).
  std::map<std::string, DType> layer_precisions;  ///< node name -> kFloat32/kFloat16/kBFloat16/kInt8
  runtime::PrecisionConstraints precision_constraints = runtime::PrecisionConstraints::kPrefer;  ///< How strictly layer_precisions are honoured.
  std::map<std::string, float> int8_scales;  ///< tensor name -> scale
  /// Optimization profiles (runtime/profiles.h: runtime::parse_profiles makes them from text);
  /// empty: the model's input shapes. A runner picks one with RefRunner::set_profile_index.
  std::vector<runtime::OptimizationProfile> profiles;
};

/// Plans the model (rewrites, fusion, a kernel per node, packed weights). `base_dir` resolves
/// external data.
Plan plan_from_onnx(const onnx::ModelProto& model, const BuildConfig& config = {}, const std::string& base_dir = {});
/// A plan from its bytes (a plan file's contents); refused with one line when damaged or foreign.
Plan plan_from_bytes(std::string bytes, int threads = 1);
/// A plan file, mapped rather than read.
Plan plan_from_path(const std::string& path, int threads = 1);
std::string bytes_from_plan(const runtime::Session& plan);  ///< The plan's bytes, as a plan file holds them.
void save_plan(const runtime::Session& plan, const std::string& path);  ///< Writes a plan file (atomically). Throws kIo.

PlanLoader PlanFromOnnx(ModelLoader model, BuildConfig config = {}, std::string base_dir = {});  ///< Lazy plan_from_onnx().
PlanLoader PlanFromBytes(BytesLoader bytes, int threads = 1);  ///< Lazy plan_from_bytes().
PlanLoader PlanFromPath(std::string path, int threads = 1);  ///< Lazy plan_from_path().
BytesLoader BytesFromPlan(PlanLoader plan);  ///< Lazy bytes_from_plan().
/// Saves the plan when called and passes it on.
PlanLoader SavePlan(PlanLoader plan, std::string path);
/// The ref runner over a plan; the plan loader runs on activate().
std::unique_ptr<runners::Runner> RunnerFromPlan(PlanLoader plan, std::string name = {});

}  // namespace parity::compare::loaders
