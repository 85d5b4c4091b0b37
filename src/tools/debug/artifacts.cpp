#include "tools/debug/artifacts.h"

#include <filesystem>

#include "core/logger.h"
#include "core/status.h"

namespace parity::tools::debug {

namespace fs = std::filesystem;

ArtifactSorter::ArtifactSorter(std::vector<std::string> artifacts, std::string dir)
    : artifacts_(std::move(artifacts)), dir_(std::move(dir)) {
  if (artifacts_.empty()) return;
  for (const char* sub : {"good", "bad"}) {
    std::error_code ec;
    fs::create_directories(fs::path(dir_) / sub, ec);
    PARITY_CHECK(!ec && fs::is_directory(fs::path(dir_) / sub), kIo, "--artifacts-dir: cannot create ",
                 (fs::path(dir_) / sub).string(), ": ", ec ? ec.message() : "not a folder");
  }
}

std::vector<std::string> ArtifactSorter::sort(size_t iteration, bool failed, int exit_status) const {
  std::vector<std::string> moved;
  for (const auto& artifact : artifacts_) {
    const fs::path from(artifact);
    std::error_code ec;
    if (!fs::exists(from, ec)) {
      logger().warning("Artifact ", artifact, " does not exist after check ", iteration, "; nothing to sort");
      continue;
    }
    const fs::path to = fs::path(dir_) / (failed ? "bad" : "good") /
                        (from.stem().string() + "_iter" + std::to_string(iteration) + "_rc" + std::to_string(exit_status) +
                         from.extension().string());
    fs::rename(from, to, ec);
    if (ec) {  // another file system: copy, then remove
      fs::copy(from, to, fs::copy_options::overwrite_existing | fs::copy_options::recursive, ec);
      PARITY_CHECK(!ec, kIo, "cannot move artifact ", artifact, " to ", to.string(), ": ", ec.message());
      fs::remove_all(from, ec);
    }
    logger().verbose("Moved ", artifact, " to ", to.string());
    moved.push_back(to.string());
  }
  return moved;
}

}  // namespace parity::tools::debug
