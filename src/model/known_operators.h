// Which operators of ONNX's own domains this build knows: libonnx 1.17's schemas plus parity's own
// for the newer versions (model/schemas/newer_onnx.h), up to ONNX 1.23. A node of ai.onnx,
// ai.onnx.ml or ai.onnx.preview(.training) that no schema covers, because its op is unknown, does
// not exist at the model's opset, or the model imports a newer opset than ONNX 1.23 defines (the
// op may have changed there), cannot be checked, inferred or run faithfully: the model tools refuse
// it with one line naming the node, op, domain, version and the newest version parity knows.
// Custom domains are not judged here: their ops come from extensions and peer runtimes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/onnx_fwd.h"

namespace parity::model {

/// The ONNX release whose operator sets this build knows.
inline constexpr const char* kNewestKnownOnnxRelease = "1.23";

/// One (op, domain, opset) of a model that this build has no schema for.
struct UnknownOperator {
  std::string op_type;
  std::string domain;  // "" for ai.onnx
  int64_t opset = 0;   // the model's import of the domain
  /// Node names ("" for unnamed nodes), in graph order, nested graphs included.
  std::vector<std::string> nodes;
  /// One line: "<op> node '<name>': op '<op>' at <domain> opset <N> is newer than parity knows (...);
  /// the newest version parity knows is <V>" (or "parity knows no version of it").
  std::string message;
};

/// Every operator of ONNX's own domains the model uses (main graph and nested graphs) that this
/// build has no schema for at the model's opset, one entry per (op, domain, opset) in order of first
/// use; empty when all are known. Deprecated ops count as known (the checker judges them).
std::vector<UnknownOperator> unknown_operators(const onnx::ModelProto& model);

}  // namespace parity::model
