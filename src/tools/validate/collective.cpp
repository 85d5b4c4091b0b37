#include "tools/validate/collective.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

namespace parity::tools::validation {
namespace {

std::string library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&launched_by_mpi), &info) && info.dli_fname)
    return std::filesystem::path(info.dli_fname).parent_path().string();
  return ".";
}

}  // namespace

bool launched_by_mpi() {
  // Open MPI's mpirun, PMIx launchers (Slurm's srun --mpi=pmix, prterun) and PMI-1/2 ones (MPICH's Hydra).
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"})
    if (const char* value = std::getenv(var); value && *value) return true;
  return false;
}

Result<std::unique_ptr<Collective>> open_mpi_collective() {
  const char* dir = std::getenv("PARITY_MPI_MODULE_DIR");
  const std::string path =
      (std::filesystem::path(dir && *dir ? std::string(dir) : library_dir()) / "libparity_mpi.so").string();
  // RTLD_GLOBAL: Open MPI's own plugins resolve libmpi's symbols from the global namespace.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char* err = dlerror();
    return Error(ErrorCode::kUnavailable, err ? err : "cannot load " + path);
  }
  using Entry = Collective* (*)(std::string*);
  auto entry = reinterpret_cast<Entry>(dlsym(handle, kMpiModuleEntry));
  if (!entry) return Error(ErrorCode::kUnavailable, path + " is not parity's MPI module");
  std::string error;
  Collective* collective = entry(&error);
  if (!collective) return Error(ErrorCode::kUnavailable, error.empty() ? "MPI did not initialize" : error);
  return std::unique_ptr<Collective>(collective);
}

}  // namespace parity::tools::validation
