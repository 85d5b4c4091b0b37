#include "tools/precision_advice.h"

#include "runtime/cpu_isa.h"
#include "runtime/reduced_precision_facts.h"

namespace parity::tools {

namespace {

/// Whether `config` asks for `precision` anywhere (the builder's choice or a layer's request).
bool uses(const runtime::ReducedPrecisionConfig& config, DType precision) {
  if ((precision == DType::kFloat16 && config.fp16) || (precision == DType::kBFloat16 && config.bf16) ||
      (precision == DType::kInt8 && config.int8))
    return true;
  for (const auto& [layer, want] : config.layer_precisions)
    if (want == precision) return true;
  return false;
}

std::string isa_note(const PrecisionHardware& hardware) {
  return hardware.isa.empty() ? "" : " (oneDNN ISA " + hardware.isa + ")";
}

}  // namespace

PrecisionHardware PrecisionHardware::this_cpu() {
  PrecisionHardware hardware;
  hardware.native_bf16 = runtime::native_bf16_available();
  hardware.native_int8 = runtime::native_int8_available();
  hardware.isa = runtime::dnnl_isa_name();
  return hardware;
}

std::vector<PrecisionNote> precision_speed_notes(const runtime::ReducedPrecisionConfig& config,
                                               const PrecisionHardware& hardware) {
  std::vector<PrecisionNote> notes;
  if (uses(config, DType::kBFloat16) && !hardware.native_bf16)
    notes.push_back({true, "bf16: no native bf16 on this CPU" + isa_note(hardware) +
                    ": the bf16 layers compute in fp32 on rounded operands: expect fp32 speed"});
  if (uses(config, DType::kFloat16) && !hardware.native_fp16)
    notes.push_back({false, "fp16: no native fp16 arithmetic for parity's layers on this CPU" + isa_note(hardware) +
                                ": the fp16 layers compute in fp32 on rounded operands: expect fp32 speed (the plan's "
                                "fp16 weights still take half the bytes)"});
  if (uses(config, DType::kInt8) && !hardware.native_int8)
    notes.push_back({true, "int8: no VNNI on this CPU" + isa_note(hardware) +
                    ", without which oneDNN's int8 sums of signed sources saturate: MatMul/Gemm layers and 1x1 "
                    "convolutions of signed sources run parity's exact s8 x s8 kernel, convolutions whose source is "
                    ">= 0 (after a Relu or Clip) run int8 on u8 sources, the other convolutions in fp32 on the "
                    "quantized values (`inspect model X.plan --show layers` tells which)"});
  return notes;
}

}  // namespace parity::tools
