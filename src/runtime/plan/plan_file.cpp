// Plan files (plan_file.h): writing the planned graph, and rebuilding a Session from it by
// replaying the planner's recorded decisions (kernel variant, fused tails, channels-last
// hand-offs) instead of searching for them again.
#include "runtime/plan/plan_file.h"

#include <fcntl.h>
#include <onnx/onnx_pb.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "core/formats/file_io.h"
#include "core/version.h"
#include "model/proto_convert.h"
#include "runtime/channels_last.h"
#include "runtime/cpu_isa.h"
#include "runtime/kernel_preferences.h"
#include "runtime/packed_state.h"
#include "runtime/plan/plan.pb.h"
#include "runtime/plan/weight_storage.h"
#include "runtime/reduced_precision.h"
#include "runtime/positional_fusion.h"
#include "runtime/reduced_storage.h"
#include "runtime/rewrites/concat_placement.h"
#include "runtime/subgraph.h"

#if PARITY_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace parity::runtime::plan {

namespace fs = std::filesystem;

namespace {

constexpr size_t kAlign = 64;
constexpr size_t kPrefixBytes = 20;  // magic, format version, header size, header CRC
const char* const kRebuildHint = "; rebuild it with `parity convert MODEL -o PLAN`";

size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

uint32_t crc32_of(const void* data, size_t size) {
  // zlib's crc32 takes at most 4 GiB - 1 per call (uInt); crc32_z takes size_t.
  return static_cast<uint32_t>(crc32_z(crc32_z(0, nullptr, 0), static_cast<const Bytef*>(data), size));
}

/// Checksum of the weights section. CRC-32 (zlib) runs at ~2-3 GB/s here, which alone took a
/// third of loading ResNet-50's plan; this runs at memory speed. Four independent lanes each fold
/// one 64-bit word per step with an odd multiply and a xor-shift (both invertible, so a changed
/// word always changes its lane), then the lanes and the length are mixed together. It detects
/// corruption and truncation; it is not meant to resist deliberate tampering. Fed in pieces, so a
/// plan's weights are checksummed where they lie instead of being gathered into one buffer first.
class WeightsChecksum {
 public:
  void update(const std::byte* data, size_t size) {
    total_ += size;
    if (pending_size_ > 0) {
      const size_t take = std::min(size, kBlock - pending_size_);
      std::memcpy(pending_ + pending_size_, data, take);
      pending_size_ += take;
      data += take;
      size -= take;
      if (pending_size_ < kBlock) return;
      block(pending_);
      pending_size_ = 0;
    }
    for (; size >= kBlock; data += kBlock, size -= kBlock) block(data);
    std::memcpy(pending_, data, size);
    pending_size_ = size;
  }
  void zeros(size_t size) {
    static const std::byte kZeros[256] = {};
    for (; size > 0; size -= std::min(size, sizeof kZeros)) update(kZeros, std::min(size, sizeof kZeros));
  }
  uint64_t finish() const {
    WeightsChecksum end = *this;
    size_t at = 0;
    for (int i = 0; at < end.pending_size_; ++i) {  // the tail, zero-padded to whole words
      uint64_t word = 0;
      std::memcpy(&word, end.pending_ + at, std::min<size_t>(8, end.pending_size_ - at));
      end.fold(i % 4, word);
      at += 8;
    }
    uint64_t h = total_ * kOdd[0];
    for (int i = 0; i < 4; ++i) {
      h = (h ^ end.lane_[i]) * kOdd[(i + 1) % 4];
      h ^= h >> 31;
    }
    return h;
  }

 private:
  static constexpr size_t kBlock = 32;
  static constexpr uint64_t kOdd[4] = {0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull,
                                       0xd6e8feb86659fd93ull};
  void fold(int i, uint64_t word) {
    const uint64_t h = (lane_[i] ^ word) * kOdd[i];
    lane_[i] = h ^ (h >> 29);
  }
  void block(const std::byte* data) {
    for (int i = 0; i < 4; ++i) {
      uint64_t word;
      std::memcpy(&word, data + 8 * i, 8);
      fold(i, word);
    }
  }
  uint64_t lane_[4] = {1, 2, 3, 4};
  std::byte pending_[kBlock] = {};
  size_t pending_size_ = 0;
  uint64_t total_ = 0;
};

uint64_t weights_checksum(const std::byte* data, size_t size) {
  WeightsChecksum checksum;
  checksum.update(data, size);
  return checksum.finish();
}

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint32_t get_u32(const std::byte* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

// --- machine fingerprint ---

/// The ISA extensions a plan's fingerprint records, of those parity's kernels (oneDNN's JIT, the
/// vector loops) may dispatch to: the set plan files have always listed, so older plans still load.
/// Under an ISA cap, only those the capped tier uses (oneDNN is capped alike: cap_dnnl_isa).
std::vector<std::string> cpu_features(KernelIsa tier = KernelIsa::kAvx512) {
  static const std::set<std::string> kFingerprinted = {"sse4.2",  "avx",      "avx2",     "fma",
                                                      "avx512f", "avx512bw", "avx512vl", "avx512vnni"};
  std::vector<std::string> found;
  for (const auto& extension : cpu_isa_extensions()) {
    if (!kFingerprinted.count(extension)) continue;
    if (tier < KernelIsa::kAvx512 && extension.rfind("avx512", 0) == 0) continue;
    if (tier < KernelIsa::kAvx2 && (extension == "avx2" || extension == "fma")) continue;
    found.push_back(extension);
  }
  return found;
}

/// oneDNN's version and ISA: packed weights are in a layout this pair chose.
std::string dnnl_isa() {
#if PARITY_HAVE_DNNL
  return dnnl_isa_name() + " (oneDNN " + dnnl_library_version() + ")";
#else
  return "";
#endif
}

/// Whether the plan uses a kernel that dispatches on the CPU (oneDNN or the vector loops).
bool uses_isa_kernels(const Subgraph& g) {
  return std::any_of(g.nodes_.begin(), g.nodes_.end(),
                     [](const PlannedNode& n) { return n.tactic.rfind("optimized:", 0) == 0; });
}

// --- save ---

class PlanWriter {
 public:
  explicit PlanWriter(const Session& session)
      : session_(session), g_(session.plan()), storage_(plan_weight_storage(g_)) {}

  Plan build() {
    Plan plan;
    for (const auto& [domain, version] : session_.opsets()) (*plan.mutable_opsets())[domain] = version;
    plan.set_kernels(static_cast<int>(session_.options().kernels));
    plan.set_fuse(session_.options().fuse);
    for (const auto& [name, value] : kernel_switches(session_.options().kernel_options))
      (*plan.mutable_kernel_switches())[name] = value;
    for (const auto& profile : session_.options().profiles) {
      PlanProfile& saved = *plan.add_profiles();
      saved.set_name(profile.name);
      saved.set_activation_bytes(profile.activation_bytes);
      for (const auto& [input, range] : profile.inputs) {
        PlanShapeRange& r = *saved.add_inputs();
        r.set_input(input);
        for (int64_t d : range.min) r.add_min(d);
        for (int64_t d : range.opt) r.add_opt(d);
        for (int64_t d : range.max) r.add_max(d);
      }
    }
    PlanGraph& graph = *plan.mutable_graph();
    for (const auto& name : g_.slot_names_) graph.add_slot_names(name);
    for (const auto& m : g_.input_meta_) write_meta(m, graph.add_inputs());
    for (int s : g_.input_slots_) graph.add_input_slots(s);
    for (const auto& m : g_.output_meta_) write_meta(m, graph.add_outputs());
    for (int s : g_.output_slots_) graph.add_output_slots(s);
    for (bool b : g_.is_initializer_) graph.add_is_initializer(b);
    for (bool b : g_.keep_alive_) graph.add_keep_alive(b);
    for (const auto& [slot, value] : g_.constants_) add_constant(graph, slot, value, false);
    std::vector<int> plan_time_slots;
    for (const auto& [slot, value] : g_.plan_time_values_) plan_time_slots.push_back(slot);
    std::sort(plan_time_slots.begin(), plan_time_slots.end());  // unordered_map: a stable file
    for (int slot : plan_time_slots) add_constant(graph, slot, g_.plan_time_values_.at(slot), true);
    for (const auto& node : g_.nodes_) write_node(node, graph.add_nodes());
    graph.set_fused_nodes(g_.fused_nodes_);
    graph.set_channels_last_values(g_.channels_last_values_);
    write_placement(graph);
    return plan;
  }

  /// Size of the weights section.
  uint64_t weights_size() const { return weights_size_; }

  /// Walks the weights section in order: `bytes(data, size)` for each tensor's bytes,
  /// `zeros(size)` for the alignment padding before it.
  template <typename Bytes, typename Zeros>
  void for_each_weight(const Bytes& bytes, const Zeros& zeros) const {
    uint64_t at = 0;
    for (const auto& [offset, tensor] : weights_) {
      if (offset > at) zeros(offset - at);
      bytes(static_cast<const std::byte*>(tensor.raw_data()), tensor.size_bytes());
      at = offset + tensor.size_bytes();
    }
    if (weights_size_ > at) zeros(weights_size_ - at);
  }

 private:
  static void write_meta(const TensorMeta& m, PlanValueMeta* out) {
    out->set_name(m.name);
    out->set_dtype(static_cast<int>(m.dtype));
    out->set_unknown_rank(m.shape.unknown_rank);
    for (const auto& d : m.shape.dims) {
      out->add_dims(d.value);
      out->add_dim_params(d.symbol);
    }
  }

  void add_constant(PlanGraph& graph, int slot, const Value& value, bool plan_time) {
    PARITY_CHECK(value.is_tensor(), kUnsupported, "plan: constant '", g_.slot_names_[slot],
                 "' is not a tensor; plans hold tensor constants only");
    PlanConstant* c = graph.add_constants();
    c->set_slot(slot);
    c->set_plan_time(plan_time);
    auto stored = storage_.find(slot);
    if (stored == storage_.end()) write_tensor(value.tensor(), c->mutable_tensor());
    else write_reduced_tensor(value.tensor(), stored->second, c->mutable_tensor());
  }

  /// A float32 weight at its layers' precision (runtime/plan/weight_storage.h).
  void write_reduced_tensor(const Tensor& t, const WeightStorage& storage, PlanTensor* out) {
    EncodedWeights encoded = encode_weights(t, storage);
    write_tensor(encoded.bytes, out);
    out->set_dtype(static_cast<int>(DType::kFloat32));
    out->set_stored_dtype(static_cast<int>(storage.precision));
    for (float scale : encoded.scales) out->add_channel_scales(scale);
    out->set_channel_axis(storage.axis);
  }

  void write_tensor(const Tensor& t, PlanTensor* out) {
    out->set_dtype(static_cast<int>(t.dtype()));
    for (int64_t d : t.shape()) out->add_shape(d);
    if (t.dtype() == DType::kString) {
      onnx::TensorProto proto;
      model::tensor_to_proto(t, &proto);
      out->set_string_proto(proto.SerializeAsString());
      return;
    }
    // Only recorded here (a shallow copy): the bytes are written where they lie (write_plan), so
    // saving a plan never holds a second copy of its weights.
    weights_size_ = align_up(weights_size_);
    out->set_offset(weights_size_);
    out->set_size_bytes(t.size_bytes());
    if (t.size_bytes() > 0) weights_.emplace_back(weights_size_, t);
    weights_size_ += t.size_bytes();
  }

  /// `with_attributes` is false for folded Constant nodes: their value is already a plan-time
  /// constant, and their attribute would store it twice.
  void write_spec(const NodeSpec& spec, const std::vector<int>& slots, PlanNodeSpec* out,
                  bool with_attributes = true) const {
    out->set_name(spec.name);
    out->set_op_type(spec.op_type);
    out->set_domain(spec.domain);
    out->set_opset(spec.opset);
    out->set_since_version(spec.since_version);
    for (const auto& in : spec.inputs) out->add_inputs(in);
    for (const auto& o : spec.outputs) out->add_outputs(o);
    for (const auto& [name, attr] : spec.attributes) {
      if (!with_attributes) break;
      onnx::AttributeProto proto;
      model::attribute_to_proto(attr, &proto);
      out->add_attributes(proto.SerializeAsString());
    }
    for (int s : slots) out->add_input_slots(s);
    for (const auto& in : spec.inputs) write_input_type(in, out->add_input_types());
  }

  /// The type the planner's KernelInit reported for an input: looked up by name in the same map.
  void write_input_type(const std::string& name, PlanInputType* out) const {
    const auto* types = g_.kernel_value_types_ ? g_.kernel_value_types_.get() : session_.value_types();
    out->set_dtype(static_cast<int>(DType::kUndefined));
    if (!types || name.empty()) return;
    auto it = types->find(name);
    if (it == types->end() || !it->second.has_tensor_type()) return;
    const auto& tt = it->second.tensor_type();
    out->set_dtype(tt.elem_type());
    if (!tt.has_shape()) return;
    bool all_static = true;
    for (const auto& d : tt.shape().dim())
      if (!d.has_dim_value() || d.dim_value() < 0) all_static = false;
    if (!all_static) return;
    out->set_static_shape(true);
    for (const auto& d : tt.shape().dim()) out->add_shape(d.dim_value());
  }

  /// Concat placement (runtime/rewrites/concat_placement.h), slots in order for a stable file.
  void write_placement(PlanGraph& graph) const {
    for (const SharedBuffer& b : g_.shared_buffers_) {
      PlanSharedBuffer& saved = *graph.add_shared_buffers();
      saved.set_dtype(static_cast<int>(b.dtype));
      for (int64_t d : b.shape) saved.add_shape(d);
      saved.set_last_node(b.last_node);
    }
    std::vector<int> slots;
    for (const auto& [slot, placed] : g_.placed_values_) slots.push_back(slot);
    std::sort(slots.begin(), slots.end());
    for (int slot : slots) {
      const PlacedValue& placed = g_.placed_values_.at(slot);
      PlanPlacedValue& saved = *graph.add_placed_values();
      saved.set_slot(slot);
      saved.set_buffer(placed.buffer);
      saved.set_byte_offset(placed.byte_offset);
      for (int64_t d : placed.shape) saved.add_shape(d);
    }
  }

  void write_node(const PlannedNode& node, PlanNode* out) const {
    PARITY_ASSERT(!node.tactic.empty(), "plan: ", node.label, " has no recorded kernel variant");
    write_spec(node.spec, node.inputs, out->mutable_spec(), !node.folded);
    for (int s : node.outputs) out->add_outputs(s);
    for (int s : node.release) out->add_release(s);
    out->set_label(node.label);
    out->set_folded(node.folded);
    out->set_tactic(node.tactic);
    write_spec(node.kernel_spec, node.kernel_inputs, out->mutable_kernel_spec(), !node.folded);
    for (const auto& tail : node.tails) {
      PlanFusedTail* t = out->add_tails();
      write_spec(tail.spec, tail.inputs, t->mutable_spec());
      t->set_position(static_cast<uint32_t>(tail.position));
      t->set_first_extra_input(static_cast<uint32_t>(tail.first_extra_input));
    }
    if (node.precision != DType::kFloat32) out->set_precision(static_cast<int>(node.precision));
    if (const auto* scales = int8_scales_of(*node.kernel))
      for (const auto& [input, scale] : *scales) (*out->mutable_int8_scales())[static_cast<uint32_t>(input)] = scale;
    out->set_int8_kernel(runs_native_int8(*node.kernel));
#if PARITY_HAVE_DNNL
    if (const std::string flow = int8_dataflow(*node.kernel); !flow.empty()) {
      const std::string engine = int8_engine(*node.kernel);
      out->set_int8_dataflow(flow + ", " + (engine.empty() ? "oneDNN " + dnnl_isa_name() : engine));
    }
#endif
    out->set_writes_channels_last(node.writes_channels_last);
    for (size_t k : node.reads_channels_last) out->add_reads_channels_last(static_cast<uint32_t>(k));
    out->set_placed_concat(node.placed_concat);
    // Kernels' packed weights are not saved: they would be a second copy of weights the plan
    // already holds, and the kernels pack them again on load (runtime/packed_state.h).
  }

  const Session& session_;
  const Subgraph& g_;
  std::map<int, WeightStorage> storage_;  // constants stored at their layers' precision, by slot
  std::vector<std::pair<uint64_t, Tensor>> weights_;  // offset in the weights section, tensor
  uint64_t weights_size_ = 0;
};

/// Magic, format version, header size and CRC, then the header: everything before the sections.
std::string framed_header(uint32_t format_version, const PlanHeader& header) {
  const std::string header_bytes = header.SerializeAsString();
  std::string prefix(kPlanMagic, sizeof kPlanMagic);
  put_u32(prefix, format_version);
  put_u32(prefix, static_cast<uint32_t>(header_bytes.size()));
  put_u32(prefix, crc32_of(header_bytes.data(), header_bytes.size()));
  return prefix + header_bytes;
}

/// Writes the weights section to a stream. `holes`: the stream is a file, where runs of zero bytes
/// (4 KiB blocks of them) are skipped instead of written, so sparse weights stay sparse on disk.
class WeightsSink {
 public:
  WeightsSink(std::ostream& out, bool holes) : out_(out), holes_(holes) {}

  void bytes(const std::byte* data, size_t size) {
    constexpr size_t kBlock = 4096;
    if (!holes_) return write(data, size);
    for (size_t at = 0; at < size; at += kBlock) {
      const size_t n = std::min(kBlock, size - at);
      if (all_zero(data + at, n)) hole_ += n;
      else write(data + at, n);
    }
  }
  void zeros(size_t size) {
    static const std::byte kZeros[kAlign] = {};
    if (holes_) hole_ += size;
    else write(kZeros, size);  // alignment padding: under 64 bytes
  }
  /// Ends the section: a trailing hole still counts toward the file's length.
  void finish() {
    if (hole_ == 0) return;
    out_.seekp(static_cast<std::streamoff>(hole_ - 1), std::ios::cur);
    out_.put('\0');
    hole_ = 0;
  }

 private:
  static bool all_zero(const std::byte* data, size_t n) {
    return n == 0 || (data[0] == std::byte{0} && std::memcmp(data, data + 1, n - 1) == 0);
  }
  void write(const std::byte* data, size_t size) {
    if (hole_ > 0) {
      out_.seekp(static_cast<std::streamoff>(hole_), std::ios::cur);
      hole_ = 0;
    }
    out_.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  std::ostream& out_;
  bool holes_;
  uint64_t hole_ = 0;
};

void write_plan(const Session& session, std::ostream& out, bool holes, const std::string& source_model,
                double build_seconds, uint64_t source_weights_bytes) {
  PlanWriter writer(session);
  const Plan plan = writer.build();
  std::string payload;
  PARITY_CHECK(plan.SerializeToString(&payload), kInternal, "plan: serializing the planned graph failed");

  PlanHeader header;
  header.set_parity_version(kParityVersion);
  if (uses_isa_kernels(session.plan())) {
    const KernelIsa tier = effective_kernel_isa(session.options().kernel_options);
    for (const auto& f : cpu_features(tier)) header.mutable_machine()->add_cpu_features(f);
    header.mutable_machine()->set_dnnl_isa(dnnl_isa());
    header.mutable_machine()->set_kernel_isa(kernel_isa_name(tier));
  }
  header.set_payload_size(payload.size());
  header.set_payload_crc32(crc32_of(payload.data(), payload.size()));
  header.set_weights_size(writer.weights_size());
  WeightsChecksum checksum;  // the header precedes the weights: one pass to checksum, one to write
  writer.for_each_weight([&](const std::byte* data, size_t size) { checksum.update(data, size); },
                         [&](size_t size) { checksum.zeros(size); });
  header.set_weights_checksum(checksum.finish());
  header.set_source_model(source_model);
  header.set_build_seconds(build_seconds);
  header.set_source_weights_bytes(source_weights_bytes);
  const std::string prefix = framed_header(kPlanFormatVersion, header);
  const auto pad = [&](size_t written) { out << std::string(align_up(written) - written, '\0'); };
  out << prefix;
  pad(prefix.size());
  out << payload;
  pad(align_up(prefix.size()) + payload.size());
  WeightsSink sink(out, holes);
  writer.for_each_weight([&](const std::byte* data, size_t size) { sink.bytes(data, size); },
                         [&](size_t size) { sink.zeros(size); });
  sink.finish();
}

// --- load ---

/// The plan file's bytes: a private copy-on-write mapping, or an owned string.
class PlanBytes : public Storage {
 public:
  static std::shared_ptr<PlanBytes> map(const fs::path& path) {
    auto bytes = std::shared_ptr<PlanBytes>(new PlanBytes());
    const int fd = ::open(path.c_str(), O_RDONLY);
    PARITY_CHECK(fd >= 0, kNotFound, "cannot open plan '", path.string(), "'");
    formats::note_input(path.string());  // a plan being run is never written over
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      fail(ErrorCode::kIo, "cannot read plan '", path.string(), "'");
    }
    bytes->size_ = static_cast<size_t>(st.st_size);
    if (bytes->size_ > 0) {
      // Populated up front, since the checksum reads every page anyway and one populate costs less
      // than a fault per page. Mapped read-only for that (populating a writable private mapping
      // copies every page), then made copy-on-write writable like any tensor's memory.
      void* p = ::mmap(nullptr, bytes->size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
      ::close(fd);
      PARITY_CHECK(p != MAP_FAILED, kIo, "cannot map plan '", path.string(), "'");
      if (::mprotect(p, bytes->size_, PROT_READ | PROT_WRITE) != 0) {
        ::munmap(p, bytes->size_);
        fail(ErrorCode::kIo, "cannot map plan '", path.string(), "'");
      }
      bytes->mapped_ = static_cast<std::byte*>(p);
    } else {
      ::close(fd);
    }
    return bytes;
  }
  static std::shared_ptr<PlanBytes> own(std::string s) {
    auto bytes = std::shared_ptr<PlanBytes>(new PlanBytes());
    bytes->owned_ = std::move(s);
    bytes->size_ = bytes->owned_.size();
    return bytes;
  }
  ~PlanBytes() override {
    if (mapped_) ::munmap(mapped_, size_);
  }
  std::byte* data() override { return mapped_ ? mapped_ : reinterpret_cast<std::byte*>(owned_.data()); }
  size_t size_bytes() const override { return size_; }

 private:
  PlanBytes() = default;
  std::byte* mapped_ = nullptr;
  std::string owned_;
  size_t size_ = 0;
};

/// A validated plan: header, parsed graph, and where the weights are.
struct ParsedPlan {
  uint32_t format_version = 0;
  PlanHeader header;
  Plan plan;
  std::shared_ptr<PlanBytes> bytes;
  size_t weights_offset = 0;
};

/// How strictly parse_plan compares the plan's oneDNN ISA with this process's.
enum class DnnlIsaCheck {
  kLoad,     // a mismatch is refused: packed weights are in the layout the plan's ISA chose
  kInspect,  // a mismatch that the plan's --isa cap explains is shown, not refused
};

/// Every check a plan must pass before anything is built from it; `what` names it in errors.
ParsedPlan parse_plan(std::shared_ptr<PlanBytes> bytes, const std::string& what,
                      DnnlIsaCheck dnnl_check = DnnlIsaCheck::kLoad) {
  const size_t size = bytes->size_bytes();
  const std::byte* data = bytes->data();
  auto refuse = [&](ErrorCode code, const std::string& why) {
    fail(code, what, " ", why, kRebuildHint);
  };
  if (size < sizeof kPlanMagic || std::memcmp(data, kPlanMagic, sizeof kPlanMagic) != 0)
    refuse(ErrorCode::kInvalidModel, "is not a parity plan (no plan magic at its start)");
  if (size < kPrefixBytes)
    refuse(ErrorCode::kInvalidModel, "is truncated: " + std::to_string(size) + " bytes, shorter than the plan header");
  ParsedPlan parsed;
  parsed.format_version = get_u32(data + 8);
  if (parsed.format_version != kPlanFormatVersion)
    refuse(ErrorCode::kInvalidModel, "has plan format version " + std::to_string(parsed.format_version) +
                                         "; this parity reads version " + std::to_string(kPlanFormatVersion));
  const size_t header_size = get_u32(data + 12);
  if (size < kPrefixBytes + header_size)
    refuse(ErrorCode::kInvalidModel, "is truncated: " + std::to_string(size) + " bytes, inside its header");
  if (crc32_of(data + kPrefixBytes, header_size) != get_u32(data + 16) ||
      !parsed.header.ParseFromArray(data + kPrefixBytes, static_cast<int>(header_size)))
    refuse(ErrorCode::kInvalidModel, "is corrupted: its header checksum does not match");
  const PlanHeader& h = parsed.header;
  const size_t payload_offset = align_up(kPrefixBytes + header_size);
  // Section sizes come from the file: each is compared with what is there before any sum of them
  // is formed, so no size can wrap the end of the file around to a small number.
  if (h.payload_size() > size || h.weights_size() > size)
    refuse(ErrorCode::kInvalidModel, "is truncated: " + std::to_string(size) +
                                         " bytes, its header describes sections of " +
                                         std::to_string(std::max(h.payload_size(), h.weights_size())));
  if (h.payload_size() > static_cast<uint64_t>(std::numeric_limits<int>::max()))
    refuse(ErrorCode::kInvalidModel, "is corrupted: its graph section (" + std::to_string(h.payload_size()) +
                                         " bytes) exceeds protobuf's 2 GiB message limit");
  parsed.weights_offset = align_up(payload_offset + h.payload_size());
  const size_t expected = parsed.weights_offset + h.weights_size();
  if (size < expected)
    refuse(ErrorCode::kInvalidModel,
           "is truncated: " + std::to_string(size) + " bytes, its header describes " + std::to_string(expected));
  if (size > expected)
    refuse(ErrorCode::kInvalidModel, "is corrupted: " + std::to_string(size - expected) +
                                         " bytes follow the end its header describes");
  if (h.parity_version() != kParityVersion)
    refuse(ErrorCode::kInvalidModel, "was built by parity " + h.parity_version() + ", this is parity " +
                                         kParityVersion + " (kernels and their packing may differ)");
  if (const Status isa = check_plan_kernel_isa(h.machine().kernel_isa(), cpu_kernel_isa()); !isa.is_ok())
    fail(ErrorCode::kUnsupported, what, " ", isa.message());
  const std::vector<std::string> here = cpu_features();
  for (const auto& f : h.machine().cpu_features())
    if (std::find(here.begin(), here.end(), f) == here.end())
      refuse(ErrorCode::kUnsupported, "was built on another machine: its kernels use the CPU feature '" + f +
                                          "', which this CPU lacks");
  if (!h.machine().dnnl_isa().empty() && h.machine().dnnl_isa() != dnnl_isa()) {
    const std::string& built_for = h.machine().kernel_isa();
    const bool capped = !built_for.empty() && built_for != kernel_isa_name(cpu_kernel_isa());
    if (capped && dnnl_check == DnnlIsaCheck::kLoad)
      fail(ErrorCode::kUnsupported, what, " was built with --isa ", built_for, " (oneDNN dispatched to ",
           h.machine().dnnl_isa(), ", here to ", dnnl_isa(), "): run it with --isa ", built_for);
    else if (!capped)
      refuse(ErrorCode::kUnsupported, "was built on another machine: oneDNN dispatched to " + h.machine().dnnl_isa() +
                                          " there and to " + dnnl_isa() + " here");
  }
  if (crc32_of(data + payload_offset, h.payload_size()) != h.payload_crc32() ||
      !parsed.plan.ParseFromArray(data + payload_offset, static_cast<int>(h.payload_size())))
    refuse(ErrorCode::kInvalidModel, "is corrupted: its graph section checksum does not match");
  if (weights_checksum(data + parsed.weights_offset, h.weights_size()) != h.weights_checksum())
    refuse(ErrorCode::kInvalidModel, "is corrupted: its weights checksum does not match");
  parsed.bytes = std::move(bytes);
  return parsed;
}

/// Plan-time view for kernels rebuilt from a plan: the constants and input types the planner's
/// KernelInit gave them.
class LoadedKernelInit : public KernelInit, public PackedStateSource, public KernelPreferences {
 public:
  LoadedKernelInit(const NodeSpec& spec, const PlanNodeSpec& saved, const Subgraph& g, const PlanEnv& env,
                   const PackedState* packed = nullptr)
      : KernelInit(spec, env.precision), saved_(saved), g_(g), env_(env), packed_(packed) {}

  const PackedState* saved_packed_state() const override { return packed_; }
  bool winograd_allowed() const override { return env_.winograd; }
  const KernelOptions& kernel_options() const override { return env_.kernel_options; }

  std::optional<Tensor> constant_input(size_t i) const override {
    if (i >= static_cast<size_t>(saved_.input_slots_size()) || saved_.input_slots(i) < 0) return std::nullopt;
    const int slot = saved_.input_slots(i);
    if (std::find(g_.input_slots_.begin(), g_.input_slots_.end(), slot) != g_.input_slots_.end()) return std::nullopt;
    for (const auto& [s, v] : g_.constants_)
      if (s == slot && v.is_tensor()) return v.tensor();
    auto it = g_.plan_time_values_.find(slot);
    if (it != g_.plan_time_values_.end() && it->second.is_tensor()) return it->second.tensor();
    return std::nullopt;
  }
  DType input_dtype(size_t i) const override {
    if (i >= static_cast<size_t>(saved_.input_types_size())) return DType::kUndefined;
    return static_cast<DType>(saved_.input_types(i).dtype());
  }
  std::optional<Shape> input_static_shape(size_t i) const override {
    if (i >= static_cast<size_t>(saved_.input_types_size()) || !saved_.input_types(i).static_shape())
      return std::nullopt;
    const auto& s = saved_.input_types(i).shape();
    return Shape(s.begin(), s.end());
  }
  std::shared_ptr<Subgraph> subgraph(const std::string& attr_name) const override {
    // Nested bodies (If/Loop/Scan) are small and kept as ONNX graphs: they are planned here.
    const model::Attribute* attr = find_attr(attr_name);
    if (!attr || attr->type != model::AttrType::kGraph || !attr->g) fail("graph attribute '", attr_name, "' is missing");
    return plan_graph(*attr->g, env_, &g_);
  }

 private:
  const PlanNodeSpec& saved_;
  const Subgraph& g_;
  const PlanEnv& env_;
  const PackedState* packed_;
};

/// Stands in for a folded Constant node's kernel: the executor never runs folded nodes, their
/// values are plan-time constants.
class FoldedKernel : public Kernel {
 public:
  void compute(KernelContext& ctx) const override {
    fail_at({.node = ctx.node_error_name()}, ErrorCode::kInternal, ctx.node_label(), ": a folded node of a loaded plan was run (a parity bug)");
  }
};

NodeSpec read_spec(const PlanNodeSpec& p) {
  NodeSpec spec;
  spec.name = p.name();
  spec.op_type = p.op_type();
  spec.domain = p.domain();
  spec.opset = p.opset();
  spec.since_version = p.since_version();
  spec.inputs.assign(p.inputs().begin(), p.inputs().end());
  spec.outputs.assign(p.outputs().begin(), p.outputs().end());
  for (const auto& bytes : p.attributes()) {
    onnx::AttributeProto proto;
    PARITY_CHECK(proto.ParseFromString(bytes), kInvalidModel, "plan: an attribute of node '", p.name(),
                 "' does not parse", kRebuildHint);
    spec.attributes[proto.name()] = model::attribute_from_proto(proto);
  }
  return spec;
}

TensorMeta read_meta(const PlanValueMeta& p) {
  TensorMeta m;
  m.name = p.name();
  m.dtype = static_cast<DType>(p.dtype());
  m.shape.unknown_rank = p.unknown_rank();
  for (int i = 0; i < p.dims_size(); ++i) {
    Dim d(p.dims(i));
    if (i < p.dim_params_size()) d.symbol = p.dim_params(i);
    m.shape.dims.push_back(d);
  }
  return m;
}

/// The kernel options a plan was built with: its switches (defaults where a plan predates one) and
/// its kernel tier as the cap, so the rebuilt kernels pick the variants the plan was built with.
KernelOptions recorded_kernel_options(const ParsedPlan& parsed, const std::string& what) {
  KernelOptions options;
  for (const auto& [name, value] : parsed.plan.kernel_switches())
    if (const Status set = set_kernel_switch(options, name, value); !set.is_ok())
      fail(ErrorCode::kInvalidModel, what, " records a ", set.message(), kRebuildHint);
  if (std::optional<KernelIsa> isa = parse_kernel_isa(parsed.header.machine().kernel_isa())) options.isa_cap = *isa;
  return options;
}

/// Rebuilds the Subgraph: slots and constants first (kernels read constants while being built),
/// then each node's kernel from its recorded variant, fused tails and channels-last hand-offs.
class PlanLoader {
 public:
  PlanLoader(const ParsedPlan& parsed, const std::string& what) : parsed_(parsed), what_(what) {}

  std::shared_ptr<Subgraph> load() {
    const PlanGraph& pg = parsed_.plan.graph();
    env_.precision = Precision::kFloat32;
    env_.tier = static_cast<KernelTier>(parsed_.plan.kernels());
    env_.fuse = parsed_.plan.fuse();
    env_.kernel_options = recorded_kernel_options(parsed_, what_);
    for (const auto& [domain, version] : parsed_.plan.opsets()) env_.opsets[domain] = version;
    auto g = std::make_shared<Subgraph>();
    const int num_slots = pg.slot_names_size();
    for (int s = 0; s < num_slots; ++s) {
      g->slot_names_.push_back(pg.slot_names(s));
      g->slot_of_[pg.slot_names(s)] = s;
    }
    for (const auto& m : pg.inputs()) {
      g->input_meta_.push_back(read_meta(m));
      g->input_names_.push_back(m.name());
    }
    for (const auto& m : pg.outputs()) {
      g->output_meta_.push_back(read_meta(m));
      g->output_names_.push_back(m.name());
    }
    g->input_slots_ = checked_slots(pg.input_slots(), num_slots);
    g->output_slots_ = checked_slots(pg.output_slots(), num_slots);
    g->is_initializer_.assign(pg.is_initializer().begin(), pg.is_initializer().end());
    g->keep_alive_.assign(pg.keep_alive().begin(), pg.keep_alive().end());
    check(g->is_initializer_.size() == static_cast<size_t>(num_slots) &&
              g->keep_alive_.size() == static_cast<size_t>(num_slots) &&
              g->input_meta_.size() == g->input_slots_.size() && g->output_meta_.size() == g->output_slots_.size(),
          "its slot tables disagree");
    for (const auto& c : pg.constants()) {
      check(c.slot() >= 0 && c.slot() < num_slots, "a constant names no slot");
      Tensor t = read_tensor(c.tensor());
      if (c.plan_time()) g->plan_time_values_[c.slot()] = Value(std::move(t));
      else g->constants_.emplace_back(c.slot(), Value(std::move(t)));
    }
    for (const auto& pn : pg.nodes()) g->nodes_.push_back(load_node(pn, *g, num_slots));
    g->fused_nodes_ = pg.fused_nodes();
    g->channels_last_values_ = pg.channels_last_values();
    check_channels_last_pairs(*g);
    load_placement(pg, *g);
    finalize_reduced_precision(*g);
    return g;
  }

 private:
  /// A value goes over channels-last only as the planner hands it: its producer writes it so and
  /// every node reading it reads it so; otherwise a reader would take NCHW bytes for channels-last
  /// ones (or the reverse).
  void check_channels_last_pairs(const Subgraph& g) const {
    std::vector<int> writer(g.slot_names_.size(), -1);
    for (size_t i = 0; i < g.nodes_.size(); ++i)
      if (g.nodes_[i].writes_channels_last) {
        const auto& outputs = g.nodes_[i].outputs;
        check(!outputs.empty() && outputs[0] >= 0, g.nodes_[i].label + " writes channels-last but has no output");
        writer[outputs[0]] = static_cast<int>(i);
      }
    for (int s : g.output_slots_)
      check(s < 0 || writer[s] < 0, "a graph output is written channels-last");
    for (const auto& node : g.nodes_)
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        const int s = node.inputs[k];
        if (s < 0) continue;
        const bool reads = std::find(node.reads_channels_last.begin(), node.reads_channels_last.end(), k) !=
                           node.reads_channels_last.end();
        check(reads == (writer[s] >= 0), node.label + (reads ? " reads input " + std::to_string(k) +
                                                                   " channels-last, which its producer does not write"
                                                             : " reads input " + std::to_string(k) +
                                                                   " as NCHW, which its producer writes channels-last"));
      }
  }

  /// Concat placement as planned (runtime/rewrites/concat_placement.h), checked so that no view
  /// reaches outside its buffer.
  void load_placement(const PlanGraph& pg, Subgraph& g) const {
    for (const auto& b : pg.shared_buffers())
      g.shared_buffers_.push_back({static_cast<DType>(b.dtype()), Shape(b.shape().begin(), b.shape().end()), b.last_node()});
    for (const auto& p : pg.placed_values()) {
      const bool added =
          g.placed_values_.emplace(p.slot(), PlacedValue{p.buffer(), static_cast<size_t>(p.byte_offset()),
                                                         Shape(p.shape().begin(), p.shape().end())})
              .second;
      check(added, "a value is placed twice");
    }
    const std::string why = placement_inconsistency(g);
    check(why.empty(), why);
  }

  void check(bool ok, const std::string& why) const {
    if (!ok) fail(ErrorCode::kInvalidModel, what_, " is inconsistent: ", why, kRebuildHint);
  }

  std::vector<int> checked_slots(const google::protobuf::RepeatedField<int32_t>& slots, int num_slots) const {
    for (int s : slots) check(s >= -1 && s < num_slots, "a node or graph names slot " + std::to_string(s));
    return std::vector<int>(slots.begin(), slots.end());
  }

  Tensor read_tensor(const PlanTensor& p) const {
    const DType dtype = static_cast<DType>(p.dtype());
    Shape shape(p.shape().begin(), p.shape().end());
    for (int64_t d : shape) check(d >= 0, "a constant has a negative dimension");
    if (dtype == DType::kString) {
      onnx::TensorProto proto;
      check(proto.ParseFromString(p.string_proto()), "a string constant does not parse");
      return model::tensor_from_proto(proto);
    }
    const DType stored = p.stored_dtype() == 0 ? dtype : static_cast<DType>(p.stored_dtype());
    check(stored == dtype || (dtype == DType::kFloat32 && (stored == DType::kFloat16 || stored == DType::kBFloat16 ||
                                                          stored == DType::kInt8)),
          "a constant has an unknown stored form");
    const size_t elem = dtype_size(stored);
    check(elem > 0, "a constant has an unknown dtype");
    uint64_t bytes = 0;
    check(!__builtin_mul_overflow(static_cast<uint64_t>(shape_numel(shape)), elem, &bytes) && p.size_bytes() == bytes,
          "a constant's size does not match its shape");
    // Compared without forming offset + size, which a corrupted offset could wrap.
    const uint64_t weights_size = parsed_.header.weights_size();
    check(p.size_bytes() <= weights_size && p.offset() <= weights_size - p.size_bytes(),
          "a constant lies outside the weights section");
    // parity writes every tensor at a 64-byte boundary; kernels read them in place as typed arrays.
    check(p.offset() % kAlign == 0, "a constant is not aligned to 64 bytes in the weights section");
    Tensor mapped(stored, std::move(shape), parsed_.bytes, parsed_.weights_offset + p.offset());
    if (stored == dtype) return mapped;
    try {
      return decode_weights(mapped, std::vector<float>(p.channel_scales().begin(), p.channel_scales().end()),
                            p.channel_axis());
    } catch (const Error& e) {
      check(false, e.what());
      throw;
    }
  }

  PlannedNode load_node(const PlanNode& p, const Subgraph& g, int num_slots) {
    PlannedNode node;
    node.spec = read_spec(p.spec());
    node.inputs = checked_slots(p.spec().input_slots(), num_slots);
    node.outputs = checked_slots(p.outputs(), num_slots);
    node.release = checked_slots(p.release(), num_slots);
    check(node.inputs.size() == node.spec.inputs.size() && node.outputs.size() == node.spec.outputs.size(),
          "node '" + node.spec.name + "' has mismatched slots");
    node.label = p.label();
    node.folded = p.folded();
    node.tactic = p.tactic();
    node.kernel_spec = read_spec(p.kernel_spec());
    node.kernel_inputs = checked_slots(p.kernel_spec().input_slots(), num_slots);
    if (node.folded) {
      node.kernel = std::make_unique<FoldedKernel>();
      return node;
    }
    std::optional<PackedState> packed;
    if (p.has_packed_data()) packed = PackedState{p.packed_layout(), read_tensor(p.packed_data())};
    node.precision = p.precision() == 0 ? DType::kFloat32 : static_cast<DType>(p.precision());
    check(node.precision == DType::kFloat32 || node.precision == DType::kFloat16 ||
              node.precision == DType::kBFloat16 || node.precision == DType::kInt8,
          node.label + " has an unknown precision");
    node.kernel = make_kernel(node.kernel_spec, p.kernel_spec(), node.tactic, node.label, g, packed ? &*packed : nullptr,
                              node.precision);
    std::map<size_t, float> scales(p.int8_scales().begin(), p.int8_scales().end());
    node.kernel = wrap_reduced_precision(std::move(node.kernel), node.kernel_spec, node.precision, std::move(scales));
    replay_fusions(node, p, g, num_slots);
    node.placed_concat = p.placed_concat();
    node.writes_channels_last = p.writes_channels_last();
    node.reads_channels_last.assign(p.reads_channels_last().begin(), p.reads_channels_last().end());
    if (node.writes_channels_last || !node.reads_channels_last.empty()) {
      auto* cl = dynamic_cast<ChannelsLastKernel*>(node.kernel.get());
      check(cl != nullptr, node.label + " hands values over channels-last but its kernel cannot");
      // As the planner decided: each input the kernel accepts channels-last, then the output if
      // the kernel can write it so after those reads (a pool writes channels-last only when it
      // reads so). A flag the kernel would refuse leaves it a layout its fast paths assume.
      for (size_t k : node.reads_channels_last) {
        check(k < node.inputs.size() && cl->can_read_channels_last(k),
              node.label + " reads input " + std::to_string(k) + " channels-last, which its kernel cannot");
        cl->read_channels_last(k);
      }
      if (node.writes_channels_last) {
        check(cl->can_write_channels_last(), node.label + " writes channels-last, which its kernel cannot");
        cl->write_channels_last();
      }
    }
    return node;
  }

  /// The kernel of the recorded variant; a variant this parity does not have (or that declines
  /// the node now) is refused rather than silently replaced by another.
  std::unique_ptr<Kernel> make_kernel(const NodeSpec& spec, const PlanNodeSpec& saved, const std::string& tactic,
                                      const std::string& label, const Subgraph& g, const PackedState* packed,
                                      DType precision) {
    const auto& registry = KernelRegistry::instance();
    const KernelDef* def = registry.resolve(spec.domain, spec.op_type, spec.opset);
    const KernelDef* chosen = nullptr;
    if (def && tactic_name(*def) == tactic) chosen = def;
    else if (def)
      if (const KernelDef* optimized = registry.resolve_optimized(*def, spec.opset))
        if (tactic_name(*optimized) == tactic) chosen = optimized;
    if (!chosen)
      fail(ErrorCode::kUnsupported, what_, ": ", label, " was built with kernel '", tactic,
           "', which this parity does not have", kRebuildHint);
    LoadedKernelInit plain_init(spec, saved, g, env_, packed);
    std::unique_ptr<KernelInit> reduced_init;
    if (precision != DType::kFloat32) reduced_init = make_reduced_precision_init(plain_init, precision);
    const KernelInit& init = reduced_init ? *reduced_init : plain_init;
    std::unique_ptr<Kernel> kernel;
    try {
      kernel = chosen->create(init);
    } catch (const Error& e) {
      fail_at(e.with_node(node_error_name(spec)).context(), e.code(), what_, ": ", label, ": ", e.what(), kRebuildHint);
    }
    if (!kernel)
      fail(ErrorCode::kUnsupported, what_, ": kernel '", tactic, "' declines ", label, " on this machine", kRebuildHint);
    return kernel;
  }

  void replay_fusions(PlannedNode& node, const PlanNode& p, const Subgraph& g, int num_slots) {
    for (const auto& t : p.tails()) {
      FusedTail tail;
      tail.spec = read_spec(t.spec());
      tail.inputs = checked_slots(t.spec().input_slots(), num_slots);
      tail.position = t.position();
      tail.first_extra_input = t.first_extra_input();
      LoadedKernelInit init(tail.spec, t.spec(), g, env_);
      bool accepted = false;
      if (tail.position == 0) {
        auto* fusable = dynamic_cast<FusableKernel*>(node.kernel.get());
        accepted = fusable && fusable->fuse_tail(init, tail.first_extra_input);
      } else {
        auto* positional = dynamic_cast<PositionalFusableKernel*>(node.kernel.get());
        accepted = positional && positional->fuse_tail_at(init, tail.position, tail.first_extra_input);
      }
      check(accepted, node.label + " no longer accepts its fused " + tail.spec.op_type);
      node.tails.push_back(std::move(tail));
    }
  }

  const ParsedPlan& parsed_;
  const std::string& what_;
  PlanEnv env_;
};

/// The plan's optimization profiles; a malformed range is refused like any other corrupt field.
std::vector<OptimizationProfile> read_profiles(const Plan& plan, const std::string& what) {
  std::vector<OptimizationProfile> profiles;
  for (const auto& saved : plan.profiles()) {
    OptimizationProfile profile;
    profile.name = saved.name();
    profile.activation_bytes = saved.activation_bytes();
    for (const auto& r : saved.inputs()) {
      ShapeRange range{Shape(r.min().begin(), r.min().end()), Shape(r.opt().begin(), r.opt().end()),
                       Shape(r.max().begin(), r.max().end())};
      bool ordered = range.min.size() == range.opt.size() && range.min.size() == range.max.size();
      for (size_t d = 0; ordered && d < range.min.size(); ++d)
        ordered = range.min[d] <= range.opt[d] && range.opt[d] <= range.max[d];
      PARITY_CHECK(ordered, kInvalidModel, what, " is corrupt: profile '", saved.name(), "' input '", r.input(),
                   "' has an invalid shape range; rebuild it with parity convert MODEL -o PLAN");
      profile.inputs.emplace_back(r.input(), std::move(range));
    }
    profiles.push_back(std::move(profile));
  }
  return profiles;
}

Session session_from(std::shared_ptr<PlanBytes> bytes, const std::string& what, const SessionOptions& options) {
  const ParsedPlan parsed = parse_plan(std::move(bytes), what);
  SessionOptions session_options = options;
  session_options.kernels = static_cast<KernelTier>(parsed.plan.kernels());
  session_options.fuse = parsed.plan.fuse();
  session_options.kernel_options = recorded_kernel_options(parsed, what);
  session_options.profiles = read_profiles(parsed.plan, what);
  std::map<std::string, int> opsets(parsed.plan.opsets().begin(), parsed.plan.opsets().end());
  return Session::from_plan(PlanLoader(parsed, what).load(), session_options, std::move(opsets));
}

std::string shape_text(const DimShape& s) { return s.to_string(); }

}  // namespace

Status check_plan_kernel_isa(const std::string& recorded, KernelIsa cpu) {
  if (recorded.empty()) return Status::ok();
  const std::optional<KernelIsa> isa = parse_kernel_isa(recorded);
  const std::string here = kernel_isa_name(cpu);
  if (!isa)
    return Error(ErrorCode::kUnsupported,
                 str_cat("was built for the kernel ISA '", recorded, "', which this parity does not know (this CPU runs ",
                         here, "); rebuild it with `parity convert MODEL --isa ", here, " -o PLAN`"));
  if (*isa > cpu)
    return Error(ErrorCode::kUnsupported,
                 str_cat("was built for the kernel ISA ", recorded, ", which this CPU lacks (it runs ", here,
                         "); rebuild it with `parity convert MODEL --isa ", here, " -o PLAN`"));
  return Status::ok();
}

bool is_plan_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[sizeof kPlanMagic] = {};
  return in.read(magic, sizeof magic) && std::memcmp(magic, kPlanMagic, sizeof magic) == 0;
}

std::string plan_to_bytes(const Session& session, const std::string& source_model, double build_seconds,
                          uint64_t source_weights_bytes) {
  std::ostringstream out;
  write_plan(session, out, /*holes=*/false, source_model, build_seconds, source_weights_bytes);
  return std::move(out).str();
}

void save_plan(const Session& session, const fs::path& path, const std::string& source_model, double build_seconds,
               uint64_t source_weights_bytes) {
  // Streamed into a temporary file beside the plan and renamed into place: a killed or failing
  // save leaves the old plan or none, and a plan this command read is never written over.
  formats::AtomicFile file(path.string());
  {
    std::ofstream out(file.temp_path(), std::ios::binary | std::ios::trunc);
    PARITY_CHECK(out, kIo, "cannot write plan '", path.string(), "'");
    write_plan(session, out, /*holes=*/true, source_model, build_seconds, source_weights_bytes);
    out.flush();
    PARITY_CHECK(out.good(), kIo, "writing plan '", path.string(), "' failed");
  }
  file.commit();
}

Result<Session> load_plan(const fs::path& path, const SessionOptions& options) {
  return capture_result<Session>(
      [&] { return session_from(PlanBytes::map(path), "plan '" + path.string() + "'", options); });
}

Result<Session> load_plan_bytes(std::string bytes, const SessionOptions& options) {
  return capture_result<Session>(
      [&] { return session_from(PlanBytes::own(std::move(bytes)), "the plan bytes", options); });
}

std::optional<std::string> reseal_plan_bytes(std::string_view bytes) {
  const auto* data = reinterpret_cast<const std::byte*>(bytes.data());
  if (bytes.size() < kPrefixBytes || std::memcmp(data, kPlanMagic, sizeof kPlanMagic) != 0) return std::nullopt;
  const size_t header_size = get_u32(data + 12);
  PlanHeader header;
  if (bytes.size() - kPrefixBytes < header_size ||
      !header.ParseFromArray(data + kPrefixBytes, static_cast<int>(header_size)))
    return std::nullopt;
  const size_t sections_at = std::min(bytes.size(), align_up(kPrefixBytes + header_size));
  const std::string_view sections = bytes.substr(sections_at);
  header.set_parity_version(kParityVersion);
  // The payload starts the sections, the weights follow it at the next multiple of 64 (the
  // sections start 64-aligned); sizes that run past the end keep their stale checksums.
  const uint64_t payload_size = header.payload_size();
  if (payload_size <= sections.size()) {
    header.set_payload_crc32(crc32_of(sections.data(), payload_size));
    const size_t weights_at = align_up(payload_size);
    if (weights_at <= sections.size() && header.weights_size() <= sections.size() - weights_at)
      header.set_weights_checksum(
          weights_checksum(reinterpret_cast<const std::byte*>(sections.data()) + weights_at, header.weights_size()));
  }
  std::string out = framed_header(get_u32(data + 8), header);
  out.resize(align_up(out.size()), '\0');
  out.append(sections);
  return out;
}

PlanSummary summarize_plan(const fs::path& path) {
  const ParsedPlan parsed = parse_plan(PlanBytes::map(path), "plan '" + path.string() + "'", DnnlIsaCheck::kInspect);
  const PlanGraph& pg = parsed.plan.graph();
  PlanSummary s;
  s.parity_version = parsed.header.parity_version();
  s.format_version = parsed.format_version;
  s.cpu_features.assign(parsed.header.machine().cpu_features().begin(), parsed.header.machine().cpu_features().end());
  s.dnnl_isa = parsed.header.machine().dnnl_isa();
  s.kernel_isa = parsed.header.machine().kernel_isa();
  s.source_model = parsed.header.source_model();
  s.build_seconds = parsed.header.build_seconds();
  s.source_weights_bytes = static_cast<int64_t>(parsed.header.source_weights_bytes());
  s.file_bytes = parsed.bytes->size_bytes();
  s.fused_nodes = pg.fused_nodes();
  s.channels_last_values = pg.channels_last_values();
  s.shared_buffers = pg.shared_buffers_size();
  for (const auto& node : pg.nodes()) s.placed_concats += node.placed_concat() ? 1 : 0;
  std::set<int> initializer_inputs;
  for (int i = 0; i < pg.inputs_size(); ++i) {
    if (i < pg.input_slots_size() && pg.input_slots(i) < pg.is_initializer_size() && pg.is_initializer(pg.input_slots(i)))
      continue;
    const TensorMeta m = read_meta(pg.inputs(i));
    s.inputs.push_back({m.name, std::string(dtype_name(m.dtype)), shape_text(m.shape)});
  }
  for (const auto& o : pg.outputs()) {
    const TensorMeta m = read_meta(o);
    s.outputs.push_back({m.name, std::string(dtype_name(m.dtype)), shape_text(m.shape)});
  }
  for (const OptimizationProfile& profile : read_profiles(parsed.plan, "plan '" + path.string() + "'")) {
    PlanSummary::Profile p{profile.to_string(), profile.activation_bytes};
    s.profiles.push_back(std::move(p));
  }
  if (s.profiles.empty()) {
    std::string profile = "profile 0:";
    for (const auto& in : s.inputs) profile += " " + in.name + " " + in.shape;
    s.profiles.push_back({profile, -1});
  }
  for (const auto& c : pg.constants()) {
    const int64_t bytes = c.tensor().string_proto().empty() ? static_cast<int64_t>(c.tensor().size_bytes())
                                                            : static_cast<int64_t>(c.tensor().string_proto().size());
    const int64_t scale_bytes = static_cast<int64_t>(c.tensor().channel_scales_size() * sizeof(float));
    s.weights_bytes += bytes + scale_bytes;
    const DType stored = static_cast<DType>(c.tensor().stored_dtype() ? c.tensor().stored_dtype() : c.tensor().dtype());
    const bool floating = stored == DType::kFloat32 || stored == DType::kFloat16 || stored == DType::kBFloat16 ||
                          stored == DType::kInt8 && c.tensor().stored_dtype() != 0;
    s.weights_by_precision[floating ? precision_name(stored) : std::string(dtype_name(stored))] +=
        bytes + scale_bytes;
  }
  for (const auto& n : pg.nodes()) s.packed_weights_bytes += static_cast<int64_t>(n.packed_data().size_bytes());

  // Activations: bytes of every value a node produces, sized from the static shapes its readers
  // saw at build time; the peak over the schedule, with each value freed at its last use.
  std::map<int, int64_t> value_bytes;
  for (const auto& n : pg.nodes())
    for (int i = 0; i < n.spec().inputs_size() && i < n.spec().input_types_size(); ++i) {
      const auto& t = n.spec().input_types(i);
      if (!t.static_shape() || i >= n.spec().input_slots_size()) continue;
      const size_t elem = dtype_size(static_cast<DType>(t.dtype()));
      value_bytes[n.spec().input_slots(i)] = shape_numel(Shape(t.shape().begin(), t.shape().end())) * elem;
    }
  int64_t live = 0, peak = 0;
  bool all_known = true;
  for (const auto& n : pg.nodes()) {
    if (n.folded()) continue;
    for (int slot : n.outputs()) {
      if (slot < 0) continue;
      auto it = value_bytes.find(slot);
      if (it == value_bytes.end()) {
        const bool is_output = std::find(pg.output_slots().begin(), pg.output_slots().end(), slot) != pg.output_slots().end();
        if (!is_output) all_known = false;
        continue;
      }
      live += it->second;
    }
    peak = std::max(peak, live);
    for (int slot : n.release())
      if (auto it = value_bytes.find(slot); it != value_bytes.end()) live -= it->second;
  }
  s.activation_bytes = all_known ? peak : -1;
  s.scratch_bytes = -1;  // oneDNN scratchpads are sized per run from the input shape, not planned

  for (const auto& n : pg.nodes()) {
    if (n.folded()) {  // a Constant computed at build time: a weight, not a layer
      ++s.folded_constants;
      continue;
    }
    PlanSummary::Layer layer;
    const PlanNodeSpec& k = n.kernel_spec();
    layer.name = k.name();
    layer.op = k.domain().empty() ? k.op_type() : k.domain() + "::" + k.op_type();
    layer.tactic = n.tactic();
    layer.precision = precision_name(n.precision() == 0 ? DType::kFloat32 : static_cast<DType>(n.precision()));
    layer.int8_kernel = n.int8_kernel();
    layer.int8_dataflow = n.int8_dataflow();
    for (const auto& t : n.tails())
      layer.fused.push_back((t.spec().domain().empty() ? "" : t.spec().domain() + "::") + t.spec().op_type() + " '" +
                            t.spec().name() + "'");
    for (int i = 0; i < n.spec().inputs_size(); ++i) {
      layer.inputs.push_back(n.spec().inputs(i));
      std::string shape = "?";
      if (i < n.spec().input_types_size() && n.spec().input_types(i).static_shape())
        shape = shape_to_string(Shape(n.spec().input_types(i).shape().begin(), n.spec().input_types(i).shape().end()));
      layer.input_shapes.push_back(shape);
    }
    for (const auto& o : n.spec().outputs()) layer.outputs.push_back(o);
    for (const auto& bytes : k.attributes()) {
      onnx::AttributeProto a;
      if (!a.ParseFromString(bytes)) continue;
      std::string v;
      switch (a.type()) {
        case onnx::AttributeProto::INT: v = std::to_string(a.i()); break;
        case onnx::AttributeProto::FLOAT: v = std::to_string(a.f()); break;
        case onnx::AttributeProto::STRING: v = "'" + a.s() + "'"; break;
        case onnx::AttributeProto::INTS:
          v = "[";
          for (int j = 0; j < a.ints_size(); ++j) v += (j ? ", " : "") + std::to_string(a.ints(j));
          v += "]";
          break;
        default: v = "<" + onnx::AttributeProto::AttributeType_Name(a.type()) + ">";
      }
      layer.attributes.push_back(a.name() + "=" + v);
    }
    layer.channels_last_out = n.writes_channels_last();
    s.layers.push_back(std::move(layer));
  }
  return s;
}

}  // namespace parity::runtime::plan
