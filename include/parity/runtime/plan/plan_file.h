// Plan files: parity's engine. A plan is the runtime's planner output for one model (the fused,
// rewritten graph, the kernel variant chosen per node, folded constants, tensor lifetimes) saved
// so that loading it skips ONNX parsing, shape inference, function inlining, graph rewrites and
// the fusion search.
//
// Layout (little-endian):
//   "PARITYPL"  u32 format version  u32 header size  u32 CRC-32 of the header
//   PlanHeader (protobuf)                      parity version, machine fingerprint, section sizes+CRCs
//   pad to 64, Plan (protobuf)                 the planned graph
//   pad to 64, weights                         raw tensor bytes (constants and kernels' packed
//                                              weights), each 64-byte aligned, with a checksum
// The weights stay outside protobuf messages (limited to 2 GiB) and are mapped, not parsed, on
// load: the loaded tensors point into the file mapping.
//
// Why protobuf and not FlatBuffers: parity already links protobuf and reads ONNX with it, node
// attributes are stored as ONNX AttributeProtos unchanged, and the only data large enough for
// zero-copy access (the weights) is already kept outside the message; FlatBuffers would add a
// second schema compiler and library for no gain on a message of a few hundred KiB.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "runtime/session.h"

namespace parity::runtime::plan {

/// Bumped whenever the layout or the meaning of a field changes; other versions are refused.
inline constexpr uint32_t kPlanFormatVersion = 2;
/// The first bytes of every plan file.
inline constexpr char kPlanMagic[8] = {'P', 'A', 'R', 'I', 'T', 'Y', 'P', 'L'};

/// True when the file starts with the plan magic (unreadable or short files: false).
bool is_plan_file(const std::filesystem::path& path);

/// Writes `session`'s plan. `source_model` (the ONNX file's name), `build_seconds` and the source
/// model's weight bytes (0: unknown) are recorded for inspect. Each constant is stored once, at the
/// precision its layers compute it in (runtime/plan/weight_storage.h); kernels' packed copies are
/// not stored (they are packed again on load). Throws kIo when the file cannot be written, kUnsupported for values a plan cannot
/// hold (non-tensor constants). Written to a temporary file and renamed over `path`: of concurrent
/// writers the last complete plan wins, and a session already loaded from the old file keeps
/// running on it (its mapping holds the replaced file).
void save_plan(const Session& session, const std::filesystem::path& path, const std::string& source_model = {},
               double build_seconds = 0, uint64_t source_weights_bytes = 0);
/// The same bytes in memory.
std::string plan_to_bytes(const Session& session, const std::string& source_model = {}, double build_seconds = 0,
                          uint64_t source_weights_bytes = 0);

/// Loads a plan file (mapped, not copied). A truncated, corrupted, other-version or other-machine
/// plan is refused with one line that says why and how to rebuild it.
Result<Session> load_plan(const std::filesystem::path& path, const SessionOptions& options = {});
/// Loads plan bytes held in memory.
Result<Session> load_plan_bytes(std::string bytes, const SessionOptions& options = {});

/// Whether a plan recording kernel tier `recorded` (its header's kernel_isa) runs on a CPU whose
/// tier is `cpu`: an error naming both tiers and the rebuild command when it is above the CPU's or
/// unknown to this parity; ok for "" (plans without ISA-dispatched kernels, older plans).
Status check_plan_kernel_isa(const std::string& recorded, KernelIsa cpu);

/// The same plan bytes with their checksums recomputed and this parity's version stamped in, every
/// other field (sizes included) as given; nullopt when the bytes have no plan magic or no readable
/// header. Lets a fuzzer or a test edit a plan's sections and still reach the loader's checks past
/// the checksums.
std::optional<std::string> reseal_plan_bytes(std::string_view bytes);

/// What `parity inspect model` shows of a plan, read without building any kernel.
struct PlanSummary {
  /// A plan input or output.
  struct Tensor {
    std::string name;  ///< Tensor name.
    std::string dtype;  ///< Dtype name ("float32").
    std::string shape;  ///< "(1, 3, 'h', 'w')"
  };
  /// One planned node: its kernel, precision and tactic.
  struct Layer {
    std::string name;  ///< Node name.
    std::string op;                   ///< domain::op of the node as built
    std::string tactic;               ///< kernel variant
    std::string precision;            ///< dtype the layer computes in
    bool int8_kernel = false;         ///< int8: on int8 kernels (else fp32 on fake-quantized operands)
    std::string int8_dataflow;        ///< on int8 kernels: "u8 x s8 -> s32 -> u8, oneDNN <isa>" 
    std::vector<std::string> fused;   ///< absorbed nodes, "Relu node 'r'"
    /// Input value names, in order.
    std::vector<std::string> inputs, outputs;
    /// \var Layer::outputs
    /// Output value names, in order.
    std::vector<std::string> input_shapes;  ///< as the kernel saw them at build time ("?" when dynamic)
    std::vector<std::string> attributes;    ///< "name=value"
    bool channels_last_out = false;  ///< True when the layer writes its output channels-last.
  };
  std::string parity_version;  ///< parity version that built the plan.
  uint32_t format_version = 0;  ///< Plan format version (kPlanFormatVersion when loadable).
  std::vector<std::string> cpu_features;  ///< CPU features the plan's kernels use; a loading CPU must have them.
  std::string dnnl_isa;  ///< oneDNN's ISA and version on the building machine; a loading machine must match it.
  std::string kernel_isa;  ///< the tier parity's vector kernels were built for ("" in older plans)
  std::string source_model;  ///< The ONNX file the plan was built from, as given to save_plan.
  double build_seconds = 0;  ///< Build time in seconds.
  uint64_t file_bytes = 0;  ///< Size of the plan file in bytes.
  /// Plan inputs, in order.
  std::vector<Tensor> inputs, outputs;
  /** \var PlanSummary::outputs
      Plan outputs, in order. */
  /// One optimization profile's shapes.
  struct Profile {
    std::string text;              ///< "profile 0: x [1,3,48,64]..[1,3,48,1024] (opt [1,3,48,320])"
    int64_t activation_bytes = -1;  ///< peak live activations at its max shapes (-1: not planned)
  };
  std::vector<Profile> profiles;  ///< one per shape range the plan serves
  int64_t weights_bytes = 0;          ///< constants held by the plan, as stored
  /// Stored constant bytes by precision: "fp32", "fp16", "bf16", "int8" (values and channel
  /// scales) for float weights, the dtype's name ("int64") for others.
  std::map<std::string, int64_t> weights_by_precision;
  int64_t source_weights_bytes = 0;   ///< the source model's weights (0: not recorded)
  int64_t packed_weights_bytes = 0;   ///< weights kernels packed at build time (restored, not repacked)
  int64_t activation_bytes = -1;      ///< peak of live activations with static shapes (-1: dynamic)
  int64_t scratch_bytes = 0;          ///< kernel scratch known at build time
  int fused_nodes = 0;  ///< Nodes absorbed into another node's kernel by fusion.
  int folded_constants = 0;           ///< Constant nodes computed at build time (not layers)
  int channels_last_values = 0;  ///< Values kept channels-last between kernels.
  int placed_concats = 0;             ///< Concats whose inputs are written into a shared buffer
  int shared_buffers = 0;             ///< the buffers they share (runtime/rewrites/concat_placement.h)
  std::vector<Layer> layers;  ///< The planned nodes in execution order.
};
/// Reads and validates a plan file (same checks as load_plan) without building kernels.
PlanSummary summarize_plan(const std::filesystem::path& path);

}  // namespace parity::runtime::plan
