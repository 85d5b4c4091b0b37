// `parity --version`: the facts a bug report needs. The build (version, git revision, compiler),
// the CPU's instruction sets and what the kernels dispatch to, the versions of the libraries linked
// (ONNX, oneDNN, protobuf) and of each runner's runtime as it is found at run time.
#pragma once

#include <string>
#include <vector>

#include "runners/registry.h"

namespace parity::tools {

/// One library or runner runtime: its version when available, else why it is not.
struct ComponentVersion {
  std::string name;     // "onnx", "ort", ...
  bool available = false;
  std::string version;  // when available ("1.30.0"); may be empty for a runtime without one
  std::string detail;   // when available: more facts (library path, providers); else the reason
};

struct VersionReport {
  std::string parity_version;  // "0.1.0"
  std::string executable;      // this process's executable, "" when unknown
  std::string revision;        // build_revision()
  std::string compiler;        // build_compiler()
  std::string build_type;      // build_type()
  std::string cpu_model;
  std::vector<std::string> cpu_isa;  // runtime::cpu_isa_extensions()
  std::string kernel_tier;           // runtime::vector_kernel_tier()
  std::string dnnl_isa;              // "" without oneDNN
  std::vector<ComponentVersion> libraries;  // onnx, onednn, protobuf
  std::vector<ComponentVersion> runners;    // every registered runner (extensions' too), in order
};

/// Collects the report; `args` (may be null) carry runner options such as --ort-library.
VersionReport collect_version_report(const runners::RunnerOptions& runner_options);

/// The report as `parity --version` prints it: Polygraphy's first line
/// ("parity | Version: V | Path: ['EXE']"), then one "  key  value" line per fact.
std::string format_version_report(const VersionReport& report);

}  // namespace parity::tools
