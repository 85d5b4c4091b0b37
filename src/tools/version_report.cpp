#include "tools/version_report.h"

#include <cstdlib>
#include <filesystem>

#include "core/build_info.h"
#include "core/status.h"
#include "core/version.h"
#include "model/library_versions.h"
#include "model/model.h"
#include "runners/registry.h"
#include "runtime/cpu_isa.h"

namespace parity::tools {
namespace {

std::string executable_path() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.string();
}

std::vector<ComponentVersion> library_versions() {
  std::vector<ComponentVersion> out;
  out.push_back({.name = "onnx",
                 .available = true,
                 .version = model::onnx_library_version(),
                 .detail = str_cat("IR ", model::max_known_ir_version(), ", ai.onnx opsets up to ",
                                   model::max_known_opset(""), " with parity's schemas")});
  const std::string dnnl = runtime::dnnl_library_version();
  if (dnnl.empty())
    out.push_back({.name = "onednn", .available = false, .detail = "this build has no oneDNN kernels (PARITY_WITH_DNNL=OFF or libdnnl-dev missing)"});
  else
    out.push_back({.name = "onednn", .available = true, .version = dnnl});
  out.push_back({.name = "protobuf",
                 .available = true,
                 .version = model::protobuf_library_version(),
                 .detail = model::protobuf_library_path()});
  return out;
}

ComponentVersion runner_version(const runners::RunnerInfo& info, const runners::RunnerOptions& runner_options) {
  ComponentVersion c{.name = info.name};
  const Status status = info.available(runner_options);
  c.available = status.is_ok();
  if (!c.available) {
    c.detail = status.message();
    return c;
  }
  if (info.version) c.version = info.version(runner_options);
  if (info.details) c.detail = info.details(runner_options);
  return c;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : " ") + item;
  return out;
}

std::string component_text(const ComponentVersion& c) {
  if (!c.available) return "unavailable: " + c.detail;
  if (c.version.empty()) return c.detail.empty() ? "available" : c.detail;
  return c.detail.empty() ? c.version : c.version + " (" + c.detail + ")";
}

}  // namespace

VersionReport collect_version_report(const runners::RunnerOptions& runner_options) {
  VersionReport r;
  r.parity_version = kParityVersion;
  r.executable = executable_path();
  r.revision = build_revision();
  r.compiler = build_compiler();
  r.build_type = build_type();
  r.cpu_model = runtime::cpu_model_name();
  r.cpu_isa = runtime::cpu_isa_extensions();
  r.kernel_tier = runtime::vector_kernel_tier();
  r.dnnl_isa = runtime::dnnl_isa_name();
  r.libraries = library_versions();
  for (const auto& info : runners::RunnerRegistry::instance().all()) r.runners.push_back(runner_version(info, runner_options));
  return r;
}

std::string format_version_report(const VersionReport& r) {
  auto line = [](const std::string& key, const std::string& value) {
    return str_cat("  ", key, std::string(key.size() < 10 ? 10 - key.size() : 1, ' '), value, "\n");
  };
  std::string out = str_cat("parity | Version: ", r.parity_version, " | Path: ['",
                            r.executable.empty() ? "?" : r.executable, "']\n");
  out += line("revision", r.revision);
  out += line("compiler", r.compiler + ", " + r.build_type);
  out += line("cpu", r.cpu_model.empty() ? "unknown" : r.cpu_model);
  out += line("isa", r.cpu_isa.empty() ? "(none detected)" : join(r.cpu_isa));
  std::string dispatch = "parity kernels " + r.kernel_tier;
  if (!r.dnnl_isa.empty()) {
    dispatch += ", oneDNN " + r.dnnl_isa;
    if (const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA"); cap && *cap) dispatch += str_cat(" (ONEDNN_MAX_CPU_ISA=", cap, ")");
  }
  out += line("dispatch", dispatch);
  for (const auto& c : r.libraries) out += line(c.name, component_text(c));
  out += "  runners:\n";
  for (const auto& c : r.runners) out += line("  " + c.name, component_text(c));
  return out;
}

}  // namespace parity::tools
