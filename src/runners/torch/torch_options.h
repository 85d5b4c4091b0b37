// The LibTorch runner's options, shared by its registration in libparity (which parses them) and
// the runner module (which reads them back from the RunnerConfig).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/metadata.h"

namespace parity::runners {

/// --torch-output-names, --torch-threads and the data loader's --input-shapes / --input-dtypes
/// (TorchScript keeps neither shapes nor dtypes).
struct TorchRunnerOptions {
  std::vector<std::string> output_names;  ///< Names of forward()'s outputs, in order.
  int threads = 0;                        ///< Intra-op threads; 0 = LibTorch's default.
  std::map<std::string, DimShape> shapes;  ///< Input shapes by name; "" = the only input.
  std::map<std::string, DType> dtypes;     ///< Input dtypes by name; "" = the only input.
};

}  // namespace parity::runners
