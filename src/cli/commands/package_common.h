// What the `parity package ...` commands (and `optimize`) share: opening a package given as a
// workspace folder or a .nav file, and printing a package's status table.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "options/args.h"
#include "tools/navigator/package.h"

namespace parity::cli::package_cli {

/// A package for one command: a workspace folder used in place, or a .nav file unpacked into a
/// temporary folder (removed afterwards) and, when write_back() is called, saved over the file.
class OpenedPackage {
 public:
  explicit OpenedPackage(const std::string& path);
  ~OpenedPackage();
  OpenedPackage(const OpenedPackage&) = delete;
  OpenedPackage& operator=(const OpenedPackage&) = delete;

  tools::navigator::PackageDescriptor& descriptor() { return *descriptor_; }
  bool is_file() const { return !temp_.empty(); }
  /// Saves a changed .nav back over its file (a workspace folder is already up to date).
  void write_back();

 private:
  std::filesystem::path path_;
  std::filesystem::path temp_;  // unpacked .nav, or empty for a workspace
  std::unique_ptr<tools::navigator::PackageDescriptor> descriptor_;
};

/// Format x runtime table: step states, p50 at batch 1, best throughput, verification.
void print_status_table(const tools::navigator::WorkspaceStatus& status);

/// Adds --window-ms and the other profiler overrides (no defaults: the package's stay).
void add_profiler_overrides(options::ArgParser& parser);
tools::navigator::ProfileOptions profiler_overrides(const options::Args& args);

}  // namespace parity::cli::package_cli
