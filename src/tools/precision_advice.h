// Whether a reduced precision can pay on this CPU: `convert` says in one line when it cannot
// ("no native bf16 on this CPU: expect fp32 speed") instead of silently building a plan that is no
// faster. The CPU's facts are a typed value so that tests ask about CPUs they do not run on.
#pragma once

#include <string>
#include <vector>

#include "runtime/reduced_precision.h"

namespace parity::tools {

/// What a CPU gives reduced-precision layers (runtime/reduced_precision.h).
struct PrecisionHardware {
  bool native_bf16 = false;  // oneDNN computes bf16 natively (AVX512_BF16 or AMX-BF16 in its ISA)
  bool native_int8 = false;  // oneDNN's int8 sums are exact and fast (VNNI or AMX-INT8)
  bool native_fp16 = false;  // parity computes fp16 layers in fp16 (not yet: fp32 on rounded operands)
  std::string isa;           // oneDNN's effective ISA for the messages ("avx2"; "" without oneDNN)

  /// This CPU, as the kernels will see it (oneDNN's ISA cap included).
  static PrecisionHardware this_cpu();
};

/// One line about a precision's speed; `warning` when the plan cannot pay at all on this CPU (bf16, int8
/// without native instructions), not when it still pays in size (fp16 weights are stored as fp16).
struct PrecisionNote {
  bool warning = true;
  std::string text;
};

/// One note per precision `config` enables that cannot be faster than fp32 on `hardware`, saying
/// why and what to expect; empty when every enabled precision has a native path.
std::vector<PrecisionNote> precision_speed_notes(const runtime::ReducedPrecisionConfig& config,
                                               const PrecisionHardware& hardware);

}  // namespace parity::tools
