/// \file
/// Kernel API: Kernel, the kernel registry and the PARITY_REGISTER_KERNEL macros.
// Kernel API: every operator implementation registers itself in its own .cpp with one line,
// PARITY_REGISTER_KERNEL(domain, op, since_versions, KernelClass), where since_versions is one
// number or a parenthesized ascending list of every opset version the class implements:
//   PARITY_REGISTER_KERNEL("", "Relu", (6, 13, 14), ReluKernel);
// The executor picks, per node, the registration with the largest since_version <= the model's
// opset for that domain.
//
// A kernel is built once per node at plan time from a KernelInit (attributes parsed there) and
// then computes many times from a KernelContext.
//
// Two tiers: every op has a readable reference kernel (PARITY_REGISTER_KERNEL), the oracle; ops
// that dominate real models may also have an optimized kernel beside it
// (PARITY_REGISTER_OPTIMIZED_KERNEL), tested against the reference. The planner uses the
// optimized one in fp32 sessions unless told otherwise; its factory may return nullptr to decline
// a node it does not handle (attributes, dtypes), and the reference kernel is used instead.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "model/attribute.h"
#include "runtime/value.h"

namespace parity::runtime {

class Subgraph;     // a planned nested graph (If/Loop/Scan bodies); defined by the executor
class ThreadPool;

/// Precision the executor runs floating-point math in.
enum class Precision {
  kFloat32,  ///< model's own dtypes (default)
  kFloat64,  ///< fp64 oracle: every floating tensor is computed in double
};

/// The dtype a kernel computes and stores a floating tensor in: in fp64-oracle mode every
/// floating dtype (float16, bfloat16, float32) becomes float64; other dtypes are unchanged.
/// Kernels that create tensors from a dtype attribute (Cast 'to', ConstantOfShape, RandomNormal,
/// EyeLike ...) pass it through this so the whole graph stays in double.
inline DType compute_dtype(DType dtype, Precision precision) {
  return (precision == Precision::kFloat64 && is_floating(dtype)) ? DType::kFloat64 : dtype;
}

/// Which kernel implementation a session prefers.
enum class KernelTier {
  kReference,  ///< the readable, spec-faithful kernels (always used in fp64-oracle mode)
  kOptimized,  ///< optimized kernels where registered, reference elsewhere
};

/// Everything the executor knows about a node when building its kernel.
struct NodeSpec {
  std::string name;  ///< Node name; may be empty.
  std::string op_type;  ///< Operator, e.g. "Conv".
  std::string domain;  ///< "" for the default ONNX domain
  int opset = 0;       ///< the model's opset for this domain
  int since_version = 0;  ///< since_version of the chosen kernel registration
  std::vector<std::string> inputs;   ///< "" marks an omitted optional input
  std::vector<std::string> outputs;  ///< "" marks an omitted optional output
  model::AttributeMap attributes;  ///< Attributes by name.
};

/// How messages name a node: op and name ("Conv node 'conv1'"), or op and first output when the
/// node has no name ("Conv node (output 'y')").
std::string node_label(const NodeSpec& spec);
/// The node an error raised at it carries (Error::node()): its name, or its label without one.
std::string node_error_name(const NodeSpec& spec);

/// Plan-time view of a node: attribute accessors with defaults and node-named errors.
class KernelInit {
 public:
  /// A view of `spec` (which must outlive it) for a session computing in `precision`.
  KernelInit(const NodeSpec& spec, Precision precision) : spec_(spec), precision_(precision) {}
  virtual ~KernelInit() = default;

  const NodeSpec& spec() const { return spec_; }  ///< The node as the executor sees it.
  const std::string& op_type() const { return spec_.op_type; }  ///< Operator, e.g. "Conv".
  int opset() const { return spec_.opset; }  ///< The model's opset for the node's domain.
  Precision precision() const { return precision_; }  ///< Precision the session computes in.
  size_t num_inputs() const { return spec_.inputs.size(); }  ///< Number of input slots, omitted optional ones included.
  size_t num_outputs() const { return spec_.outputs.size(); }  ///< Number of output slots, omitted optional ones included.
  /// True when input i is present (exists and is not the empty name).
  bool has_input(size_t i) const { return i < spec_.inputs.size() && !spec_.inputs[i].empty(); }
  bool has_output(size_t i) const { return i < spec_.outputs.size() && !spec_.outputs[i].empty(); }  ///< True when output i exists and is not the empty name.

  bool has_attr(const std::string& name) const { return spec_.attributes.count(name) > 0; }  ///< True when the node sets attribute `name`.
  const model::Attribute* find_attr(const std::string& name) const;  ///< The attribute, or nullptr when the node does not set it.
  /// Integer attribute `name`; throws kInvalidModel naming the node when it is missing or of another type.
  int64_t attr_int(const std::string& name) const;
  int64_t attr_int(const std::string& name, int64_t fallback) const;  ///< As attr_int(name), or `fallback` when missing.
  float attr_float(const std::string& name) const;  ///< A float attribute; throws kInvalidModel when missing or of another type.
  float attr_float(const std::string& name, float fallback) const;  ///< As attr_float(name), or `fallback` when missing.
  std::string attr_string(const std::string& name) const;  ///< A string attribute; throws kInvalidModel when missing or of another type.
  std::string attr_string(const std::string& name, const std::string& fallback) const;  ///< As attr_string(name), or `fallback` when missing.
  std::vector<int64_t> attr_ints(const std::string& name) const;  ///< An ints attribute; throws kInvalidModel when missing or of another type.
  std::vector<int64_t> attr_ints(const std::string& name, const std::vector<int64_t>& fallback) const;  ///< As attr_ints(name), or `fallback` when missing.
  std::vector<float> attr_floats(const std::string& name) const;  ///< A floats attribute; throws kInvalidModel when missing or of another type.
  std::vector<float> attr_floats(const std::string& name, const std::vector<float>& fallback) const;  ///< As attr_floats(name), or `fallback` when missing.
  std::vector<std::string> attr_strings(const std::string& name) const;  ///< A strings attribute; throws kInvalidModel when missing or of another type.
  std::vector<std::string> attr_strings(const std::string& name, const std::vector<std::string>& fallback) const;  ///< As attr_strings(name), or `fallback` when missing.
  Tensor attr_tensor(const std::string& name) const;  ///< A tensor attribute; throws kInvalidModel when missing or of another type.

  /// Value of input i when it is a constant (initializer) known at plan time; nullopt otherwise.
  /// Kernels may use it to pre-pack weights.
  virtual std::optional<Tensor> constant_input(size_t i) const;
  /// Plans the subgraph held by a graph attribute (If/Loop/Scan). Provided by the executor.
  virtual std::shared_ptr<Subgraph> subgraph(const std::string& attr_name) const;
  /// Declared or inferred dtype of input i (kUndefined when unknown). Optimized kernels use it to
  /// decline nodes they do not support; run-time inputs are still checked, since a declared type
  /// may be absent.
  virtual DType input_dtype(size_t i) const;
  /// Declared or inferred shape of input i when every dimension is a known number.
  virtual std::optional<Shape> input_static_shape(size_t i) const;
  /// Builds this node's reference kernel. Optimized kernels keep one to delegate the run-time
  /// cases they do not handle (another dtype, a shape the fast path does not cover).
  virtual std::unique_ptr<class Kernel> create_reference_kernel() const;

  /// Throws kInvalidModel with the node's op and name in the message and in Error::node().
  template <typename... Args>
  [[noreturn]] void fail(const Args&... args) const {
    ::parity::fail_at({.node = node_error_name()}, ErrorCode::kInvalidModel, node_label(), ": ", args...);
  }
  std::string node_label() const { return runtime::node_label(spec_); }  ///< How messages name this node (runtime::node_label).
  /// What an error raised at this node carries as Error::node().
  std::string node_error_name() const { return runtime::node_error_name(spec_); }

 private:
  const model::Attribute& require_attr(const std::string& name, model::AttrType type) const;
  const NodeSpec& spec_;
  Precision precision_;
};

/// Run-time view of a node's inputs and outputs.
class KernelContext {
 public:
  virtual ~KernelContext() = default;

  virtual size_t num_inputs() const = 0;  ///< Number of input slots, omitted optional ones included.
  virtual size_t num_outputs() const = 0;  ///< Number of output slots, omitted optional ones included.
  /// True when input i exists, is named, and holds a value (tensor, sequence or optional).
  virtual bool has_input(size_t i) const = 0;
  virtual const Value& input_value(size_t i) const = 0;  ///< Input i of any kind (tensor, sequence or optional).
  /// Tensor input i; throws kRuntime naming the node if absent or not a tensor.
  const Tensor& input(size_t i) const;
  virtual bool has_output(size_t i) const = 0;  ///< True when output i exists and is named (its value is wanted).
  /// Allocates (zeroed) and stores output i; returns it for filling.
  Tensor& allocate_output(size_t i, DType dtype, const Shape& shape);
  /// As allocate_output, without zero-filling: for kernels that write every element.
  Tensor& allocate_output_uninitialized(size_t i, DType dtype, const Shape& shape);
  virtual void set_output(size_t i, Value value) = 0;  ///< Stores output i.
  virtual Value& output_value(size_t i) = 0;  ///< Output i as stored so far, for filling in place.

  /// Runs a planned subgraph with the given inputs; outer-scope values are visible to it.
  virtual std::vector<Value> run_subgraph(const Subgraph& graph, std::vector<Value> inputs) = 0;

  /// Splits [0, n) into chunks run on the executor's threads (serial when 1 thread).
  virtual void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn) = 0;
  virtual int num_threads() const = 0;  ///< Number of threads parallel_for() may use.
  virtual Precision precision() const = 0;  ///< Precision the session computes in.
  /// Seed-controlled generator state for random ops (RandomNormal etc.), deterministic per run.
  virtual uint64_t next_random_seed() = 0;

  virtual std::string node_label() const = 0;  ///< How messages name this node.
  /// What an error raised at this node carries as Error::node() (runtime::node_error_name);
  /// a context that runs no node of a model names its errors by their label.
  virtual std::string node_error_name() const { return node_label(); }
  /// Throws kRuntime naming the node in the message and in Error::node() (used for shape
  /// mismatches discovered while running).
  template <typename... Args>
  [[noreturn]] void fail(const Args&... args) const {
    ::parity::fail_at({.node = node_error_name()}, ErrorCode::kRuntime, node_label(), ": ", args...);
  }
};

/// A planned node's computation: compute() runs it on the node's inputs.
class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void compute(KernelContext& ctx) const = 0;  ///< Computes the node's outputs from its inputs; may run on several threads at once for one kernel.
};

/// An optimized kernel that can apply the elementwise node that consumes its only output (an
/// activation such as Relu or Clip) while it writes that output, saving a pass over memory.
/// The planner offers each single-consumer tail; the kernel accepts it by returning true and
/// from then on produces the tail's result in its own output.
class FusableKernel {
 public:
  virtual ~FusableKernel() = default;
  /// `tail` is the consuming node; its input 0 is this kernel's output. Constant inputs of the
  /// tail (Clip's min/max) are readable through tail.constant_input(). On acceptance the tail's
  /// inputs 1.. are appended to this node's inputs: compute() reads them as
  /// ctx.input(first_extra_input + k - 1) (e.g. the other addend of a residual Add).
  virtual bool fuse_tail(const KernelInit& tail, size_t first_extra_input) = 0;
};

/// Builds a node's kernel at plan time; a null result declines the node (optimized kernels only).
using KernelFactory = std::function<std::unique_ptr<Kernel>(const KernelInit&)>;

/// A kernel registration: the op it implements from which opset, its tier and factory.
struct KernelDef {
  std::string domain;  ///< "" = ai.onnx
  std::string op_type;  ///< Operator, e.g. "Relu".
  int since_version = 1;  ///< First opset version this registration implements.
  KernelFactory create;  ///< Builds the kernel for a node.
  std::string source_file;  ///< The .cpp that registered it, for listings and messages.
  KernelTier tier = KernelTier::kReference;  ///< Reference or optimized.
};

/// Every registered kernel, by domain, op type and opset.
class KernelRegistry {
 public:
  static KernelRegistry& instance();  ///< The process-wide registry the registration macros fill.
  void add(KernelDef def);  ///< Adds a registration; only while kernels register (static initialization, extension loading), before lookups start.
  /// The reference registration with the largest since_version <= opset; nullptr if none.
  const KernelDef* resolve(const std::string& domain, const std::string& op_type, int opset) const;
  /// The optimized registration that covers the same semantics as `reference` at `opset`: the
  /// largest optimized since_version <= opset, if it is at least the reference's since_version
  /// (an older optimized kernel would implement superseded semantics). nullptr if none.
  const KernelDef* resolve_optimized(const KernelDef& reference, int opset) const;
  /// All reference since_versions registered for (domain, op), ascending.
  std::vector<int> versions(const std::string& domain, const std::string& op_type) const;
  const std::vector<KernelDef>& all() const { return defs_; }  ///< Every registration, in the order they were added.

 private:
  std::vector<KernelDef> defs_;
};

/// True when a registration's since-versions are positive and strictly ascending (each version
/// registered once); checked at compile time by the registration macros.
constexpr bool valid_since_versions(std::initializer_list<int> versions) {
  int previous = 0;
  for (int v : versions) {
    if (v <= previous) return false;
    previous = v;
  }
  return versions.size() > 0;
}

/// Adds one KernelDef per since-version, all built by the same factory.
struct KernelRegistrar {
  /// Registers `factory` for (domain, op) at each of `since_versions`; `file` is the registering source.
  KernelRegistrar(const char* domain, const char* op, std::initializer_list<int> since_versions,
                  KernelFactory factory, const char* file, KernelTier tier = KernelTier::kReference);
};

}  // namespace parity::runtime

/// Pastes a and b together (PARITY_KERNEL_CONCAT's step, so that a and b are expanded first).
#define PARITY_KERNEL_CONCAT_INNER(a, b) a##b
/// Pastes the expansions of a and b together (a registrar's unique name).
#define PARITY_KERNEL_CONCAT(a, b) PARITY_KERNEL_CONCAT_INNER(a, b)
/// PARITY_KERNEL_DEPAREN((6, 13)) is `6, 13` and PARITY_KERNEL_DEPAREN(7) is `7`, so a single
/// since-version needs no parentheses.
#define PARITY_KERNEL_DEPAREN(x) PARITY_KERNEL_DEPAREN_ESC(PARITY_KERNEL_DEPAREN_ISH x)
/// A step of PARITY_KERNEL_DEPAREN: called by a parenthesized list, leaves its contents.
#define PARITY_KERNEL_DEPAREN_ISH(...) PARITY_KERNEL_DEPAREN_ISH __VA_ARGS__
/// A step of PARITY_KERNEL_DEPAREN: expands its argument before PARITY_KERNEL_DEPAREN_ESC_.
#define PARITY_KERNEL_DEPAREN_ESC(...) PARITY_KERNEL_DEPAREN_ESC_(__VA_ARGS__)
/// A step of PARITY_KERNEL_DEPAREN: pastes PARITY_KERNEL_DEPAREN_VAN before what is left.
#define PARITY_KERNEL_DEPAREN_ESC_(...) PARITY_KERNEL_DEPAREN_VAN##__VA_ARGS__
/// A step of PARITY_KERNEL_DEPAREN: a leftover PARITY_KERNEL_DEPAREN_ISH, pasted, expands to nothing.
#define PARITY_KERNEL_DEPAREN_VANPARITY_KERNEL_DEPAREN_ISH

/// Shared body of the two registration macros: the compile-time check of the version list, then
/// the static registrar. The factory body is variadic: a kernel class name may hold commas.
#define PARITY_REGISTER_KERNEL_IMPL(domain, op, since_versions, tier, ...)                             \
  static_assert(::parity::runtime::valid_since_versions({PARITY_KERNEL_DEPAREN(since_versions)}),     \
                "kernel since-versions must be positive and strictly ascending");                      \
  static ::parity::runtime::KernelRegistrar PARITY_KERNEL_CONCAT(parity_kernel_registrar_, __COUNTER__)( \
      domain, op, {PARITY_KERNEL_DEPAREN(since_versions)},                                            \
      [](const ::parity::runtime::KernelInit& init) -> std::unique_ptr<::parity::runtime::Kernel> {   \
        __VA_ARGS__                                                                                   \
      },                                                                                              \
      __FILE__, tier)

/// Registers KernelClass (constructible from const KernelInit&) for (domain, op) at each
/// since-version: `7` or `(1, 7, 13)`.
#define PARITY_REGISTER_KERNEL(domain, op, since_versions, ...)                          \
  PARITY_REGISTER_KERNEL_IMPL(domain, op, since_versions, ::parity::runtime::KernelTier::kReference, \
                              return std::make_unique<__VA_ARGS__>(init);)

/// Registers an optimized KernelClass beside the reference one, at the same since-versions as the
/// reference registrations it replaces. KernelClass is built through
/// `static std::unique_ptr<Kernel> create(const KernelInit&)`, which returns nullptr to decline a
/// node (the reference kernel then runs it).
#define PARITY_REGISTER_OPTIMIZED_KERNEL(domain, op, since_versions, ...)                           \
  PARITY_REGISTER_KERNEL_IMPL(domain, op, since_versions, ::parity::runtime::KernelTier::kOptimized, \
                              return __VA_ARGS__::create(init);)
