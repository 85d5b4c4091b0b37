// The options of `parity debug reduce`, parsed into the library's ReduceModelOptions.
#pragma once

#include "compare/compare_args.h"
#include "options/args.h"
#include "options/data_loader_args.h"
#include "runners/runner_args.h"
#include "tools/debug/reduce_model.h"

namespace parity::cli {

class DebugReduceArgs {
 public:
  /// Every option but the model, the output and the report's.
  void add_to(options::ArgParser& parser);
  /// The reduction the options ask for (the check validated, its runners available).
  tools::debug::ReduceModelOptions parse(const options::Args& args) const;
  /// Lines of the help epilog.
  static const char* epilog();

 private:
  tools::debug::ReduceModelOptions parse_check(const options::Args& args) const;

  runners::RunnerArgs runner_args_;
  compare::ComparatorCompareArgs compare_args_;
  options::DataLoaderArgs data_loader_args_;
  options::IterationArgs iteration_args_{
      {.iterations = 1, .iterations_help = "Feeds to record and check (a candidate fails when any fails)"}};
};

}  // namespace parity::cli
