#include "tools/plan_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/text.h"

namespace parity::tools {

namespace {

std::string mib(int64_t bytes) {
  if (bytes < 0) return "dynamic";
  const ScaledBytes scaled = scale_bytes(static_cast<double>(bytes), /*smallest=*/2, /*largest=*/2);
  return fmt::format("{:.2f} {}", scaled.value, scaled.unit);
}

/// How an int8 layer computes: " (u8 x s8 -> s32 -> u8, oneDNN avx512_core_vnni)" on int8 kernels
/// (source, sums and output types, ISA), " (fp32 on quantized values)" where the kernel has no
/// int8 path on this CPU; "" for other precisions.
std::string int8_note(const runtime::plan::PlanSummary::Layer& l) {
  if (l.precision != "int8") return "";
  if (!l.int8_kernel) return " (fp32 on quantized values)";
  return " (" + (l.int8_dataflow.empty() ? std::string("s8 x s8 -> s32") : l.int8_dataflow) + ")";
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out;
}

}  // namespace

/// "Weights by precision: fp32 0.20 MiB, int8 3.31 MiB; 0.26x the source model's 13.3 MiB".
std::string weights_by_precision_line(const runtime::plan::PlanSummary& p) {
  std::string parts;
  for (const auto& [precision, bytes] : p.weights_by_precision)
    parts += (parts.empty() ? "" : ", ") + precision + " " + mib(bytes);
  std::string line = "Weights by precision: " + (parts.empty() ? std::string("none") : parts);
  const int64_t stored = p.weights_bytes + p.packed_weights_bytes;
  if (p.source_weights_bytes > 0)
    line += fmt::format("; {:.2f}x the source model's {}", static_cast<double>(stored) / p.source_weights_bytes,
                        mib(p.source_weights_bytes));
  return line + "\n";
}

std::string plan_report_text(const runtime::plan::PlanSummary& p, bool layers, bool attrs) {
  std::string out = "==== parity Plan ====\n";
  out += fmt::format("Built by parity {} (plan format {}) from '{}' in {:.3f} s; {} bytes\n", p.parity_version,
                     p.format_version, p.source_model, p.build_seconds, p.file_bytes);
  out += fmt::format("Machine: {}{}\n", p.cpu_features.empty() ? "any CPU (reference kernels only)" : join(p.cpu_features),
                     (p.kernel_isa.empty() ? "" : "; parity kernels " + p.kernel_isa) +
                         (p.dnnl_isa.empty() ? "" : "; oneDNN " + p.dnnl_isa));
  out += fmt::format("\n---- {} Input(s) ----\n", p.inputs.size());
  for (const auto& t : p.inputs) out += fmt::format("{} [dtype={}, shape={}]\n", t.name, t.dtype, t.shape);
  out += fmt::format("\n---- {} Output(s) ----\n", p.outputs.size());
  for (const auto& t : p.outputs) out += fmt::format("{} [dtype={}, shape={}]\n", t.name, t.dtype, t.shape);
  out += fmt::format("\n---- Memory ----\nWeights: {} (constants) + {} (packed by kernels at build time)\n",
                     mib(p.weights_bytes), mib(p.packed_weights_bytes));
  out += weights_by_precision_line(p);
  out += fmt::format("Activations: {} (peak of live values; dynamic when it depends on the input shapes)\n",
                     mib(p.activation_bytes));
  out += "Scratch: sized per run by oneDNN from the input shapes (not planned)\n";
  out += fmt::format("\n---- {} Profile(s) ----\n", p.profiles.size());
  for (const auto& profile : p.profiles)
    out += profile.text + (profile.activation_bytes >= 0 ? "; activations at max " + mib(profile.activation_bytes) : "") +
           "\n";
  out += fmt::format("\n---- {} Layer(s) ----\n", p.layers.size());
  out += fmt::format("{} nodes fused into their producers, {} Constant nodes folded into weights, {} values handed "
                     "over channels-last, {} Concats without copies in {} shared buffers\n",
                     p.fused_nodes, p.folded_constants, p.channels_last_values, p.placed_concats, p.shared_buffers);
  if (!layers) return out;
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const auto& l = p.layers[i];
    out += fmt::format("Layer {:<4} | {} [Op: {}] | precision {}{} | tactic {}\n", i, l.name, l.op, l.precision,
                       int8_note(l), l.tactic);
    if (!l.fused.empty()) out += "    fused: " + join(l.fused) + "\n";
    for (size_t k = 0; k < l.inputs.size(); ++k)
      if (!l.inputs[k].empty()) out += fmt::format("    {{{}}} {}\n", l.inputs[k], l.input_shapes[k]);
    for (const auto& o : l.outputs)
      if (!o.empty()) out += fmt::format("    -> {{{}}}{}\n", o, l.channels_last_out ? " (channels-last)" : "");
    if (attrs && !l.attributes.empty()) out += "    attrs: " + join(l.attributes) + "\n";
  }
  return out;
}

std::string plan_report_json(const runtime::plan::PlanSummary& p, bool layers, bool attrs) {
  using Json = nlohmann::ordered_json;
  auto tensors = [](const std::vector<runtime::plan::PlanSummary::Tensor>& ts) {
    Json a = Json::array();
    for (const auto& t : ts) a.push_back({{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}});
    return a;
  };
  Json j;
  j["format"] = "parity-plan";
  j["parity_version"] = p.parity_version;
  j["plan_format_version"] = p.format_version;
  j["source_model"] = p.source_model;
  j["build_seconds"] = p.build_seconds;
  j["file_bytes"] = p.file_bytes;
  j["machine"] = {{"cpu_features", p.cpu_features}, {"dnnl", p.dnnl_isa}, {"kernel_isa", p.kernel_isa}};
  j["inputs"] = tensors(p.inputs);
  j["outputs"] = tensors(p.outputs);
  j["profiles"] = Json::array();
  for (const auto& profile : p.profiles)
    j["profiles"].push_back({{"profile", profile.text},
                             {"activation_bytes", profile.activation_bytes < 0 ? Json(nullptr) : Json(profile.activation_bytes)}});
  Json by_precision = Json::object();
  for (const auto& [precision, bytes] : p.weights_by_precision) by_precision[precision] = bytes;
  j["memory"] = {{"weights_bytes", p.weights_bytes},
                 {"weights_by_precision", by_precision},
                 {"source_model_weights_bytes", p.source_weights_bytes > 0 ? Json(p.source_weights_bytes) : Json(nullptr)},
                 {"packed_weights_bytes", p.packed_weights_bytes},
                 {"activation_bytes", p.activation_bytes < 0 ? Json(nullptr) : Json(p.activation_bytes)},
                 {"scratch_bytes", nullptr}};
  j["fused_nodes"] = p.fused_nodes;
  j["channels_last_values"] = p.channels_last_values;
  j["placed_concats"] = p.placed_concats;
  j["shared_buffers"] = p.shared_buffers;
  j["folded_constants"] = p.folded_constants;
  j["num_layers"] = p.layers.size();
  if (layers) {
    Json a = Json::array();
    for (const auto& l : p.layers) {
      Json layer = {{"name", l.name}, {"op", l.op},         {"precision", l.precision}, {"tactic", l.tactic},
                    {"fused", l.fused}, {"inputs", l.inputs}, {"input_shapes", l.input_shapes},
                    {"outputs", l.outputs}, {"channels_last_output", l.channels_last_out}};
      if (l.precision == "int8") layer["int8_kernel"] = l.int8_kernel;
      if (!l.int8_dataflow.empty()) layer["int8_dataflow"] = l.int8_dataflow;
      if (attrs) layer["attributes"] = l.attributes;
      a.push_back(std::move(layer));
    }
    j["layers"] = std::move(a);
  }
  return j.dump(2);
}

}  // namespace parity::tools
