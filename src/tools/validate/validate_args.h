// The options of `parity validate` as an option group: dataset and image preprocessing, runners,
// tolerances (the Comparator's), metrics, shards, resume and outputs. parse() reads and checks
// every option (and the label file) before anything runs.
#pragma once

#include <optional>
#include <string>

#include "compare/compare_args.h"
#include "options/args.h"
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
};

class ValidateArgs {
 public:
  void add_to(options::ArgParser& parser) const;
  /// `args` must outlive the job (runner factories read their options from it).
  ValidateJob parse(const options::Args& args) const;

 private:
  runners::RunnerArgs runner_args_;
  compare::ComparatorCompareArgs compare_args_;
};

/// One integer label per line ('#' comments and blank lines ignored). Throws kInvalidArgument
/// naming the file and line for anything else.
std::vector<int64_t> read_labels(const std::string& path);

/// Runs a parsed job: validates (under MPI when launched by an MPI launcher), writes the summary
/// (periodic checkpoints included) and the report on rank 0, and logs the figures. Returns
/// whether every validated sample passed.
bool run_validate_job(ValidateJob job);

}  // namespace parity::tools::validation
