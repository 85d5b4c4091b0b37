#include "runtime/kernel.h"

#include <algorithm>
#include <cstring>

#include "runtime/buffer_pool.h"
#include "runtime/concat_in_place.h"

namespace parity::runtime {

const Tensor& Value::tensor() const {
  PARITY_CHECK(kind_ == Kind::kTensor, kRuntime, "expected a tensor value");
  return tensor_;
}
Tensor& Value::tensor() {
  PARITY_CHECK(kind_ == Kind::kTensor, kRuntime, "expected a tensor value");
  return tensor_;
}
const std::vector<Tensor>& Value::sequence_items() const {
  PARITY_CHECK(kind_ == Kind::kSequence, kRuntime, "expected a sequence value");
  return sequence_;
}
std::vector<Tensor>& Value::sequence_items() {
  PARITY_CHECK(kind_ == Kind::kSequence, kRuntime, "expected a sequence value");
  return sequence_;
}

std::string node_label(const NodeSpec& spec) {
  std::string label = spec.domain.empty() ? spec.op_type : spec.domain + "::" + spec.op_type;
  if (!spec.name.empty()) return label + " node '" + spec.name + "'";
  for (const auto& o : spec.outputs)
    if (!o.empty()) return label + " node (output '" + o + "')";
  return label + " node";
}

std::string node_error_name(const NodeSpec& spec) { return spec.name.empty() ? node_label(spec) : spec.name; }

const model::Attribute* KernelInit::find_attr(const std::string& name) const {
  auto it = spec_.attributes.find(name);
  return it == spec_.attributes.end() ? nullptr : &it->second;
}

const model::Attribute& KernelInit::require_attr(const std::string& name, model::AttrType type) const {
  const model::Attribute* a = find_attr(name);
  if (!a) fail("required attribute '", name, "' is missing");
  if (a->type != type)
    fail("attribute '", name, "' has type ", model::attr_type_name(a->type), ", expected ", model::attr_type_name(type));
  return *a;
}

int64_t KernelInit::attr_int(const std::string& n) const { return require_attr(n, model::AttrType::kInt).i; }
int64_t KernelInit::attr_int(const std::string& n, int64_t fb) const { return has_attr(n) ? attr_int(n) : fb; }
float KernelInit::attr_float(const std::string& n) const { return require_attr(n, model::AttrType::kFloat).f; }
float KernelInit::attr_float(const std::string& n, float fb) const { return has_attr(n) ? attr_float(n) : fb; }
std::string KernelInit::attr_string(const std::string& n) const { return require_attr(n, model::AttrType::kString).s; }
std::string KernelInit::attr_string(const std::string& n, const std::string& fb) const {
  return has_attr(n) ? attr_string(n) : fb;
}
std::vector<int64_t> KernelInit::attr_ints(const std::string& n) const { return require_attr(n, model::AttrType::kInts).ints; }
std::vector<int64_t> KernelInit::attr_ints(const std::string& n, const std::vector<int64_t>& fb) const {
  return has_attr(n) ? attr_ints(n) : fb;
}
std::vector<float> KernelInit::attr_floats(const std::string& n) const { return require_attr(n, model::AttrType::kFloats).floats; }
std::vector<float> KernelInit::attr_floats(const std::string& n, const std::vector<float>& fb) const {
  return has_attr(n) ? attr_floats(n) : fb;
}
std::vector<std::string> KernelInit::attr_strings(const std::string& n) const {
  return require_attr(n, model::AttrType::kStrings).strings;
}
std::vector<std::string> KernelInit::attr_strings(const std::string& n, const std::vector<std::string>& fb) const {
  return has_attr(n) ? attr_strings(n) : fb;
}
Tensor KernelInit::attr_tensor(const std::string& n) const { return require_attr(n, model::AttrType::kTensor).t; }

std::optional<Tensor> KernelInit::constant_input(size_t) const { return std::nullopt; }

std::shared_ptr<Subgraph> KernelInit::subgraph(const std::string& attr_name) const {
  fail("subgraph attribute '", attr_name, "' cannot be planned outside an executor");
}

DType KernelInit::input_dtype(size_t) const { return DType::kUndefined; }
std::optional<Shape> KernelInit::input_static_shape(size_t) const { return std::nullopt; }

std::unique_ptr<Kernel> KernelInit::create_reference_kernel() const {
  const KernelDef* def = KernelRegistry::instance().resolve(spec_.domain, spec_.op_type, spec_.opset);
  with_error_context({.node = node_error_name()}, [&] { PARITY_ASSERT(def, "no reference kernel for ", node_label()); });
  return def->create(*this);
}

const Tensor& KernelContext::input(size_t i) const {
  if (!has_input(i)) fail("input ", i, " is missing");
  const Value& v = input_value(i);
  if (!v.is_tensor()) fail("input ", i, " is not a tensor");
  return v.tensor();
}

namespace {
/// The slice of a shared buffer output `i` was placed in (runtime/concat_in_place.h), if any.
std::optional<Tensor> placed_output(KernelContext& ctx, size_t i, DType dtype, const Shape& shape) {
  auto* placement = dynamic_cast<PlacedOutputs*>(&ctx);
  return placement ? placement->claim_placed_output(i, dtype, shape) : std::nullopt;
}
}  // namespace

Tensor& KernelContext::allocate_output(size_t i, DType dtype, const Shape& shape) {
  if (std::optional<Tensor> placed = placed_output(*this, i, dtype, shape)) {
    if (placed->size_bytes()) std::memset(placed->raw_data(), 0, placed->size_bytes());
    set_output(i, Value(std::move(*placed)));
  } else if (dtype == DType::kString) {
    set_output(i, Value(Tensor(dtype, shape)));
  } else {
    Tensor t = pooled_uninitialized_tensor(dtype, shape);
    if (t.size_bytes()) std::memset(t.raw_data(), 0, t.size_bytes());
    set_output(i, Value(std::move(t)));
  }
  return output_value(i).tensor();
}

Tensor& KernelContext::allocate_output_uninitialized(size_t i, DType dtype, const Shape& shape) {
  std::optional<Tensor> placed = placed_output(*this, i, dtype, shape);
  set_output(i, Value(placed ? std::move(*placed) : pooled_uninitialized_tensor(dtype, shape)));
  return output_value(i).tensor();
}

KernelRegistry& KernelRegistry::instance() {
  static KernelRegistry registry;
  return registry;
}

void KernelRegistry::add(KernelDef def) {
  for (const auto& d : defs_)
    PARITY_ASSERT(!(d.domain == def.domain && d.op_type == def.op_type && d.since_version == def.since_version &&
                    d.tier == def.tier),
                  "kernel ", def.domain, "::", def.op_type, " v", def.since_version, " registered twice (",
                  d.source_file, " and ", def.source_file, ")");
  defs_.push_back(std::move(def));
}

const KernelDef* KernelRegistry::resolve(const std::string& domain, const std::string& op, int opset) const {
  const KernelDef* best = nullptr;
  for (const auto& d : defs_)
    if (d.tier == KernelTier::kReference && d.domain == domain && d.op_type == op && d.since_version <= opset &&
        (!best || d.since_version > best->since_version))
      best = &d;
  return best;
}

const KernelDef* KernelRegistry::resolve_optimized(const KernelDef& reference, int opset) const {
  const KernelDef* best = nullptr;
  for (const auto& d : defs_)
    if (d.tier == KernelTier::kOptimized && d.domain == reference.domain && d.op_type == reference.op_type &&
        d.since_version <= opset && (!best || d.since_version > best->since_version))
      best = &d;
  return best && best->since_version >= reference.since_version ? best : nullptr;
}

std::vector<int> KernelRegistry::versions(const std::string& domain, const std::string& op) const {
  std::vector<int> v;
  for (const auto& d : defs_)
    if (d.tier == KernelTier::kReference && d.domain == domain && d.op_type == op) v.push_back(d.since_version);
  std::sort(v.begin(), v.end());
  return v;
}

KernelRegistrar::KernelRegistrar(const char* domain, const char* op, std::initializer_list<int> since_versions,
                                 KernelFactory factory, const char* file, KernelTier tier) {
  std::string d = domain;
  if (d == "ai.onnx") d.clear();
  for (int since : since_versions) KernelRegistry::instance().add({d, op, since, factory, file, tier});
}

}  // namespace parity::runtime
