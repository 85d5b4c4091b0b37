// RefRunner: the Runner API over parity's own executor (runtime::Session).
#pragma once

#include <memory>
#include <functional>
#include <optional>
#include <string>

#include "runners/runner.h"
#include "runtime/session.h"

namespace parity::runners {

/// The ref runner's options (--threads, --precision, --kernels, --no-fusion, --no-winograd,
/// --reduced-floats, --profile-index and the build options' --isa cap).
struct RefRunnerOptions {
  int threads = 1;  ///< Kernel threads.
  runtime::Precision precision = runtime::Precision::kFloat32;
  runtime::KernelTier kernels = runtime::KernelTier::kOptimized;
  bool fuse = true;      ///< Fuse elementwise tails into their producer's kernel.
  bool winograd = true;  ///< Winograd's algorithm for 3x3 stride-1 fp32 convolutions.
  runtime::ReducedFloatCompute reduced_floats = runtime::ReducedFloatCompute::kCarryFloat32;
  /// The optimized kernels' ISA cap (avx2, avx512, ...); none: the CPU's own.
  std::optional<std::string> isa;
  /// The optimization profile every run uses; none: the first the input shapes fit.
  std::optional<int> profile_index;

  /// The session options these give (the kernel switches from the environment, capped at `isa`).
  runtime::SessionOptions session_options() const;
};

/// A profile index option (--profile-index N, 0..1023).
int parse_profile_index(const std::string& text, const std::string& flag);

class RefRunner : public Runner {
 public:
  RefRunner(std::string model_path, runtime::SessionOptions options, std::string name = {});
  /// A runner over a session made elsewhere (a loaded plan): `load` runs on activate().
  RefRunner(std::function<std::shared_ptr<const runtime::Session>()> load, std::string name = {});

  /// The planned session (valid while active); for callers that need sequences or the hook.
  const runtime::Session& session() const;
  /// Run options used by infer() (e.g. a per-layer hook, extra outputs).
  void set_run_options(runtime::RunOptions options) { run_options_ = std::move(options); }
  /// The optimization profile every run must use (-1: the first its input shapes fit).
  void set_profile_index(int index) { profile_index_ = index; }

 protected:
  void activate_impl() override;
  void deactivate_impl() override;
  TensorMetadata input_metadata_impl() override;
  TensorMap infer_impl(const TensorMap& feed) override;

 private:
  std::string model_path_;
  runtime::SessionOptions options_;
  runtime::RunOptions run_options_;
  int profile_index_ = -1;
  std::function<std::shared_ptr<const runtime::Session>()> load_;  // empty: plan model_path_
  std::shared_ptr<const runtime::Session> session_;
};

}  // namespace parity::runners
