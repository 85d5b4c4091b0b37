// The options of `parity validate` as an option group: dataset and image preprocessing, runners,
// tolerances (the Comparator's), metrics, shards, resume and outputs. parse() reads and checks
// every option (and the label file) before anything runs.
#pragma once

#include <optional>
#include <string>

#include "compare/compare_args.h"
#include "options/group.h"
#include "runners/runner_args.h"
#include "tools/validate/dataset.h"
#include "tools/validate/validate.h"

namespace parity::tools::validation {

struct ValidateJob {
  ValidateConfig config;
  std::string dataset_path;
  DatasetOptions dataset;
  std::optional<std::string> summary_path;  // --save-summary
  std::optional<std::string> report_path;   // --report
  bool resume = false;
  bool use_mpi = true;  // when launched by mpirun/srun (--no-mpi: each process validates alone)
  std::string command_line = "parity validate";  // quoted in the report
  /// With a navigator package (X.nav) as MODEL: its format validated as the plan candidate (a plan
  /// format) or as the model (an ONNX format); nullopt: the package's "onnx".
  std::optional<std::string> nav_format;
  /// The Comparator's options as given (config.compare and fail_fast come from them).
  compare::CompareSettings compare;
};

/// The options of `validate` but the runtimes' own (the CLI adds those with
/// RunnerArgs::add_runtime_options_to and sets config.runner_options from them). parse() reads and
/// checks every option, the label file included.
class ValidateArgs : public options::Group<ValidateJob> {
 public:
  ValidateArgs();
};

/// One integer label per line ('#' comments and blank lines ignored). Throws kInvalidArgument
/// naming the file and line for anything else.
std::vector<int64_t> read_labels(const std::string& path);

/// Runs a parsed job: validates (under MPI when launched by an MPI launcher), writes the summary
/// (periodic checkpoints included) and the report on rank 0, and logs the figures. Returns
/// whether every validated sample passed.
bool run_validate_job(ValidateJob job);

}  // namespace parity::tools::validation
