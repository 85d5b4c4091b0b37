// Sorting the artifacts of a debug check into good/ and bad/ folders (Polygraphy's --artifacts
// and --artifacts-dir, shared by `debug reduce` and `debug repeat`).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace parity::tools::debug {

class ArtifactSorter {
 public:
  /// Creates `dir`/good and `dir`/bad up front, so an unwritable folder fails before any check
  /// runs (kIo naming the folder). Nothing is created when `artifacts` is empty.
  ArtifactSorter(std::vector<std::string> artifacts, std::string dir);

  /// Moves each artifact that exists into good/ or bad/ as <stem>_iter<N>_rc<status><ext>;
  /// returns the new paths. Missing artifacts are skipped with a warning.
  std::vector<std::string> sort(size_t iteration, bool failed, int exit_status) const;

 private:
  std::vector<std::string> artifacts_;
  std::string dir_;
};

}  // namespace parity::tools::debug
