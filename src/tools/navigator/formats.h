// The navigator's target formats: what each one is, which runtimes can run it, and how its model
// file is produced (the export step) from the source or from the onnx format.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tools/navigator/status.h"

namespace parity::tools::navigator {

enum class FormatKind { kOnnx, kPlan, kTorchScript };

struct FormatInfo {
  std::string name;   // "onnx-fp16"
  FormatKind kind;
  std::string file;   // model file inside the format's folder: "model.onnx"
  std::string precision;  // plans: "fp32", "fp16", "bf16", "int8"
};

/// The int8 plan's calibration cache, in its format folder (tools/calibration.h's format).
inline constexpr const char* kCalibrationCacheFile = "calibration.cache";

/// Every format, in the order the navigator produces them.
const std::vector<FormatInfo>& all_formats();
/// Throws kInvalidArgument listing the formats for an unknown name.
const FormatInfo& format_info(const std::string& name);

/// The one switch point for plan precisions: "" when this build can build plans of `precision`
/// (fp32, fp16, bf16, int8), otherwise why not (such formats are recorded as SKIPPED with this reason).
std::string plan_precision_unsupported(const std::string& precision);

/// Formats made by default: every format, torchscript only when the run has a TorchScript model (its
/// source, or a TorchScript copy of an ONNX source).
std::vector<std::string> default_formats(const NavigatorConfig& config);
/// Whether the run has a TorchScript model for the torchscript format.
bool has_torchscript(const NavigatorConfig& config);
/// The file the torchscript format copies: the TorchScript copy of an ONNX source, else the source.
std::filesystem::path torchscript_file(const NavigatorConfig& config, const std::filesystem::path& source);

/// Whether runner `runtime` runs models of this format (ONNX runners for onnx formats, ref for
/// plans, torch for TorchScript).
bool runtime_runs_format(const std::string& runtime, const FormatInfo& format);

/// The source kind of a model path: "torchscript" for .pt/.pth/.ts, else "onnx".
std::string source_kind_of(const std::filesystem::path& source);

/// Produces `format`'s model file in the workspace: the onnx format from the source (a copy, or
/// the TorchScript export through python3-torch), the others from the onnx format. Throws a
/// parity::Error with the reason when it cannot.
void export_format(const FormatInfo& format, const std::filesystem::path& workspace, const std::filesystem::path& source,
                   const WorkspaceStatus& status);

/// "" when the TorchScript -> ONNX exporter (python3 with torch) can run here, else why not.
std::string torch_exporter_unavailable();

/// The command line that reproduces the export (for reproduce_export.sh).
std::string export_command(const FormatInfo& format, const std::filesystem::path& source);

}  // namespace parity::tools::navigator
