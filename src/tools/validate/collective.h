// The ranks of a distributed validation and what they exchange: each rank validates its share of
// the dataset and rank 0 gathers the partial states. MPI is one implementation, in its own module
// (libparity_mpi.so, dlopened), so `parity` starts and validates on one machine without MPI.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace parity::tools::validation {

class Collective {
 public:
  virtual ~Collective() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Says, per rank, which samples it validates ("samples 22-42 (s022.npy .. s042.npy)"), so that
  /// a rank that dies can be reported with the samples left undone. Call before gather().
  virtual void describe_shares(const std::vector<std::string>& shares) = 0;
  /// Every rank sends `payload`; rank 0 gets all payloads in rank order, the others an empty list.
  /// A rank that dies before sending ends the job with one line naming it and its samples.
  virtual std::vector<std::string> gather(const std::string& payload) = 0;
};

/// Whether this process was started by an MPI launcher (mpirun, mpiexec, srun with PMI/PMIx).
bool launched_by_mpi();

/// Initializes MPI through libparity_mpi.so (searched in $PARITY_MPI_MODULE_DIR, else beside
/// libparity). kUnavailable with the loader's reason when the module or libmpi is missing.
Result<std::unique_ptr<Collective>> open_mpi_collective();

/// The module's entry point: `extern "C" Collective* parity_mpi_collective(std::string* error)`.
inline constexpr const char* kMpiModuleEntry = "parity_mpi_collective";

}  // namespace parity::tools::validation
