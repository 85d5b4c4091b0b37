#include "runtime/session.h"

#include <onnx/onnx_pb.h>
#include <google/protobuf/field_mask.pb.h>
#include <google/protobuf/util/field_mask_util.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <cstdint>
#include <unordered_map>

#include "core/formats/file_io.h"
#include "core/logger.h"
#include "core/low_precision.h"
#include "model/mapped_load.h"
#include "model/proto_convert.h"
#include "model/shape_inference.h"
#include "runtime/plan/plan_file.h"
#include "runtime/reduced_storage.h"
#include "runtime/subgraph.h"
#include "runtime/thread_pool.h"

namespace parity::runtime {

namespace fs = std::filesystem;

struct Session::Impl {
  SessionOptions options;
  std::shared_ptr<onnx::ModelProto> model;  // owns the FunctionProtos the plan refers to
  std::shared_ptr<Subgraph> plan;
  PlanEnv env;
  /// Without fusion, for runs that observe intermediates; planned on first need when `plan`
  /// fused anything (else it is `plan`).
  mutable std::once_flag unfused_once;
  mutable std::shared_ptr<Subgraph> unfused_plan;
  std::unique_ptr<ThreadPool> pool;
  /// Values stored as bf16 between native bf16 layers (runtime/reduced_storage.h); observers never
  /// see them (they run the unfused plan).
  int reduced_storage_values = 0;

  const Subgraph& observable_plan() const {
    // A plan without fusions may still hand values over channels-last, or place Concats' inputs
    // in shared buffers, which observers must not see.
    // Carried float16 values would show as float32: observers see the model's types.
    if (!plan->fused_nodes_ && !plan->channels_last_values_ && !reduced_storage_values && plan->shared_buffers_.empty() &&
        !plan->reduced_float_values_)
      return *plan;
    PARITY_CHECK(model, kUnsupported,
                 "a plan file runs as it was built (fused), so only its outputs can be observed; run the ONNX "
                 "model for hooks and intermediate outputs");
    std::call_once(unfused_once, [&] {
      PlanEnv unfused_env = env;
      unfused_env.fuse = false;
      unfused_env.lower_reduced_floats = false;
      unfused_plan = plan_graph(model->graph(), unfused_env, nullptr);
    });
    return *unfused_plan;
  }
  std::shared_ptr<const std::map<std::string, onnx::TypeProto>> value_types;
  std::map<std::string, DType> declared_dtype;  // tensor values with a known declared dtype
  std::vector<bool> is_initializer_input;       // per main-graph input
};

namespace {

std::string session_normalize_domain(const std::string& domain) { return domain == "ai.onnx" ? std::string() : domain; }

/// The session's own copy of a caller's model, without copying its large weights twice: the main
/// graph's large inline initializers become tensors in `values` (one copy, which the plan keeps),
/// and the copied proto holds their name, type and dims only (as model::load_model_mapped does).
std::shared_ptr<onnx::ModelProto> copy_with_values_beside(const onnx::ModelProto& model, const fs::path& base_dir,
                                                          std::unordered_map<std::string, Tensor>& values) {
  // Every field but graph.initializer, whichever fields this libonnx's messages have.
  google::protobuf::FieldMask mask;
  for (int i = 0; i < onnx::ModelProto::descriptor()->field_count(); ++i) {
    const auto* field = onnx::ModelProto::descriptor()->field(i);
    if (field->number() != onnx::ModelProto::kGraphFieldNumber) mask.add_paths(field->name());
  }
  for (int i = 0; i < onnx::GraphProto::descriptor()->field_count(); ++i) {
    const auto* field = onnx::GraphProto::descriptor()->field(i);
    if (field->number() != onnx::GraphProto::kInitializerFieldNumber) mask.add_paths("graph." + field->name());
  }
  auto copy = std::make_shared<onnx::ModelProto>();
  google::protobuf::util::FieldMaskUtil::MergeMessageTo(model, mask, {}, copy.get());
  if (!model.has_graph()) return copy;
  auto* initializers = copy->mutable_graph()->mutable_initializer();
  initializers->Reserve(model.graph().initializer_size());
  for (const auto& t : model.graph().initializer()) {
    onnx::TensorProto* out = initializers->Add();
    const auto dtype = static_cast<DType>(t.data_type());
    const bool beside = t.raw_data().size() >= model::kMappedInitializerMinBytes && is_valid_dtype(dtype) &&
                        dtype != DType::kString && !is_low_precision(dtype) &&
                        t.data_location() != onnx::TensorProto::EXTERNAL;
    if (!beside) {
      *out = t;
      continue;
    }
    values[t.name()] = model::tensor_from_proto(t, base_dir);
    out->set_name(t.name());
    out->set_data_type(t.data_type());
    *out->mutable_dims() = t.dims();
  }
  return copy;
}

/// Declared types of every value we can find: graph inputs/outputs, value_info, and what ONNX
/// shape inference adds (best effort: a model it rejects still runs).
std::shared_ptr<std::map<std::string, onnx::TypeProto>> collect_value_types(const onnx::ModelProto& model) {
  auto types = std::make_shared<std::map<std::string, onnx::TypeProto>>();
  const onnx::ModelProto inferred = model::inferred_copy(model);
  const auto& g = inferred.graph();
  for (const auto& v : g.input()) (*types)[v.name()] = v.type();
  for (const auto& v : g.value_info()) (*types)[v.name()] = v.type();
  for (const auto& v : g.output()) (*types)[v.name()] = v.type();
  for (const auto& t : g.initializer()) {
    onnx::TypeProto tp;
    tp.mutable_tensor_type()->set_elem_type(t.data_type());
    auto* shape = tp.mutable_tensor_type()->mutable_shape();
    for (auto d : t.dims()) shape->add_dim()->set_dim_value(d);
    types->emplace(t.name(), tp);
  }
  return types;
}

Value to_compute_precision(Value v, Precision precision) {
  if (precision != Precision::kFloat64) return v;
  if (v.is_tensor() && is_floating(v.tensor().dtype()) && v.tensor().dtype() != DType::kFloat64)
    return Value(v.tensor().cast(DType::kFloat64));
  if (v.is_sequence()) {
    std::vector<Tensor> items;
    for (const auto& t : v.sequence_items())
      items.push_back(is_floating(t.dtype()) ? t.cast(DType::kFloat64) : t);
    return Value::sequence(std::move(items), compute_dtype(v.sequence_dtype(), precision));
  }
  return v;
}

/// Narrows an fp64-oracle tensor to the model's dtype. bfloat16 follows Cast at the model's opset:
/// truncation before opset 19 (ONNX 1.12's Cast), round to nearest even from 19 on.
Tensor narrow_tensor(const Tensor& t, DType dtype, bool truncate_bfloat16) {
  if (t.dtype() == dtype || !is_floating(t.dtype())) return t;
  if (dtype != DType::kBFloat16 || !truncate_bfloat16) return t.cast(dtype);
  const Tensor f = t.cast(DType::kFloat32);
  Tensor out(DType::kBFloat16, t.shape());
  const auto* src = static_cast<const uint32_t*>(f.raw_data());
  auto* dst = static_cast<uint16_t*>(out.raw_data());
  for (int64_t i = 0; i < t.numel(); ++i) dst[i] = static_cast<uint16_t>(src[i] >> 16);
  return out;
}

Value to_dtype(const Value& v, DType dtype, bool truncate_bfloat16) {
  if (dtype == DType::kUndefined || !is_floating(dtype)) return v;
  if (v.is_tensor()) return Value(narrow_tensor(v.tensor(), dtype, truncate_bfloat16));
  if (v.is_sequence()) {
    std::vector<Tensor> items;
    for (const auto& t : v.sequence_items()) items.push_back(narrow_tensor(t, dtype, truncate_bfloat16));
    return Value::sequence(std::move(items), dtype);
  }
  return v;
}

DType declared_elem_dtype(const onnx::TypeProto& type) {
  if (type.has_tensor_type()) return static_cast<DType>(type.tensor_type().elem_type());
  if (type.has_sequence_type()) return declared_elem_dtype(type.sequence_type().elem_type());
  if (type.has_optional_type()) return declared_elem_dtype(type.optional_type().elem_type());
  return DType::kUndefined;
}

std::string value_kind_name(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kTensor: return "a tensor";
    case Value::Kind::kSequence: return "a sequence";
    case Value::Kind::kOptionalNone: return "an empty optional";
    default: return "nothing";
  }
}


// --- optimization profiles ---

/// The graph inputs a caller feeds (those without an initializer), as declared.
TensorMetadata fed_inputs(const onnx::ModelProto& model) {
  std::set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  TensorMetadata meta;
  for (const auto& in : model.graph().input()) {
    if (initializers.count(in.name())) continue;
    const TensorMeta m = model::meta_from_value_info(in);
    meta.add(m.name, m.dtype, m.shape);
  }
  return meta;
}

onnx::ValueInfoProto* find_graph_input(onnx::ModelProto& model, const std::string& name) {
  for (auto& in : *model.mutable_graph()->mutable_input())
    if (in.name() == name) return &in;
  return nullptr;
}

/// Sets the profiled inputs' dimensions: a dimension with one size in every profile (min == max)
/// becomes that number, any other stays or becomes dynamic (the model's symbol, else INPUT_dimK).
void apply_profile_dims(onnx::ModelProto& model, const std::vector<OptimizationProfile>& profiles) {
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> bounds;  // input -> per dim (lowest, highest)
  for (const auto& profile : profiles)
    for (const auto& [input, range] : profile.inputs) {
      auto& dims = bounds[input];
      if (dims.empty()) dims.assign(range.min.size(), {INT64_MAX, INT64_MIN});
      for (size_t d = 0; d < dims.size(); ++d)
        dims[d] = {std::min(dims[d].first, range.min[d]), std::max(dims[d].second, range.max[d])};
    }
  for (const auto& [input, dims] : bounds) {
    auto* shape = find_graph_input(model, input)->mutable_type()->mutable_tensor_type()->mutable_shape();
    std::vector<std::string> symbols(dims.size());
    for (int d = 0; d < shape->dim_size() && d < static_cast<int>(dims.size()); ++d) symbols[d] = shape->dim(d).dim_param();
    shape->clear_dim();
    for (size_t d = 0; d < dims.size(); ++d) {
      auto* dim = shape->add_dim();
      if (dims[d].first == dims[d].second) dim->set_dim_value(dims[d].first);
      else dim->set_dim_param(symbols[d].empty() ? input + "_dim" + std::to_string(d) : symbols[d]);
    }
  }
}

/// The model with the profile's inputs fixed to their opt or max shapes.
onnx::ModelProto at_profile_shapes(const onnx::ModelProto& model, const OptimizationProfile& profile, Shape ShapeRange::*which) {
  onnx::ModelProto fixed = model;
  for (const auto& [input, range] : profile.inputs) {
    auto* shape = find_graph_input(fixed, input)->mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t d : range.*which) shape->add_dim()->set_dim_value(d);
  }
  return fixed;
}

/// Runs the session once per profile on zeros of the profile's max shapes and records the peak of
/// live activations (-1 when an input's shape is not fixed by the profile or the run fails).
void measure_profile_memory(const Session& session, std::vector<OptimizationProfile>& profiles) {
  const TensorMetadata inputs = session.input_metadata();
  for (size_t p = 0; p < profiles.size(); ++p) {
    OptimizationProfile& profile = profiles[p];
    TensorMap feed;
    bool complete = true;
    for (const auto& meta : inputs) {
      const ShapeRange* range = profile.find(meta.name);
      if (!range && !meta.shape.is_static()) complete = false;
      if (!complete || meta.dtype == DType::kUndefined || meta.dtype == DType::kString) {
        complete = false;
        break;
      }
      Tensor zeros(meta.dtype, range ? range->max : meta.shape.to_static());
      feed.set(meta.name, std::move(zeros));
    }
    if (!complete) continue;
    RunOptions options;
    options.profile_index = static_cast<int>(p);
    int64_t peak = 0;
    options.peak_activation_bytes = &peak;
    try {
      session.run(feed, options);
      profile.activation_bytes = peak;
    } catch (const Error& e) {
      logger().warning(profile.name, ": activation memory at the max shapes unknown (", e.what(), ")");
    }
  }
}
}  // namespace

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

Result<Session> Session::create(const fs::path& model_path, const SessionOptions& options) {
  if (plan::is_plan_file(model_path)) return plan::load_plan(model_path, options);
  return capture_result<Session>([&] {
    // Mapped: the large initializers point into the file instead of being parsed and copied.
    model::MappedModel loaded = model::load_model_mapped(model_path).value();
    auto impl = std::make_unique<Impl>();
    impl->model = std::move(loaded.proto);
    impl->env.base_dir = model_path.parent_path();
    impl->env.initializer_values = std::move(loaded.initializers);
    return plan_model(std::move(impl), options);
  });
}

Result<Session> Session::create(const onnx::ModelProto& model_in, const SessionOptions& options,
                                const fs::path& base_dir) {
  return capture_result<Session>([&] {
    auto impl = std::make_unique<Impl>();
    auto values = std::make_shared<std::unordered_map<std::string, Tensor>>();
    impl->model = copy_with_values_beside(model_in, base_dir, *values);
    impl->env.base_dir = base_dir;
    impl->env.initializer_values = std::move(values);
    return plan_model(std::move(impl), options);
  });
}

Session Session::plan_model(std::unique_ptr<Impl> impl, const SessionOptions& options) {
  PARITY_CHECK(options.threads >= 1, kInvalidArgument, "thread count must be at least 1, got ", options.threads);
  impl->options = options;
  const onnx::ModelProto& model = *impl->model;
  PARITY_CHECK(model.has_graph(), kInvalidModel, "the model has no graph");

  PlanEnv& env = impl->env;
  env.precision = options.precision;
  env.tier = options.precision == Precision::kFloat32 ? options.kernels : KernelTier::kReference;
  env.fuse = options.fuse && env.tier == KernelTier::kOptimized;
  env.winograd = options.winograd;
  env.kernel_options = options.kernel_options;
  env.lower_reduced_floats =
      env.tier == KernelTier::kOptimized && options.reduced_floats == ReducedFloatCompute::kCarryFloat32;
  if (options.reduced_precision.enabled() && options.precision == Precision::kFloat32)
    env.reduced = std::make_shared<ReducedPrecisionConfig>(options.reduced_precision);
  if (options.tactics.active()) env.tactics = std::make_shared<TacticOptions>(options.tactics);
  for (const auto& o : model.opset_import()) env.opsets[session_normalize_domain(o.domain())] = static_cast<int>(o.version());
  if (!env.opsets.count("")) env.opsets[""] = model.ir_version() >= 3 ? 1 : 1;
  for (const auto& fn : model.functions()) env.functions[session_normalize_domain(fn.domain()) + "::" + fn.name()] = &fn;
  if (!impl->options.profiles.empty()) {
    validate_profiles(impl->options.profiles, fed_inputs(*impl->model));
    apply_profile_dims(*impl->model, impl->options.profiles);
    for (const auto& profile : impl->options.profiles)
      env.timing_types.push_back(collect_value_types(at_profile_shapes(model, profile, &ShapeRange::opt)));
  }
  impl->value_types = collect_value_types(model);
  env.value_types = impl->value_types;
  for (const auto& [name, type] : *impl->value_types) {
    const DType d = declared_elem_dtype(type);
    if (d != DType::kUndefined) impl->declared_dtype[name] = d;
  }

  impl->plan = plan_graph(model.graph(), env, nullptr);
  if (env.reduced && env.fuse) impl->reduced_storage_values = store_reduced_between_native_layers(*impl->plan);
  for (int s : impl->plan->input_slots_) impl->is_initializer_input.push_back(impl->plan->is_initializer_[s]);
  impl->pool = std::make_unique<ThreadPool>(options.threads);
  Session session(std::move(impl));
  if (!session.impl_->options.profiles.empty()) measure_profile_memory(session, session.impl_->options.profiles);
  return session;
}

Session Session::from_plan(std::shared_ptr<Subgraph> plan, const SessionOptions& options,
                           std::map<std::string, int> opsets) {
  PARITY_CHECK(options.threads >= 1, kInvalidArgument, "thread count must be at least 1, got ", options.threads);
  PARITY_CHECK(options.precision == Precision::kFloat32, kInvalidArgument,
               "a plan's precision is fixed when it is built; the fp64 oracle needs the ONNX model");
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->plan = std::move(plan);
  if (options.fuse) impl->reduced_storage_values = store_reduced_between_native_layers(*impl->plan);
  impl->env.precision = options.precision;
  impl->env.opsets = std::move(opsets);
  impl->value_types = std::make_shared<std::map<std::string, onnx::TypeProto>>();
  for (int s : impl->plan->input_slots_) impl->is_initializer_input.push_back(impl->plan->is_initializer_[s]);
  impl->pool = std::make_unique<ThreadPool>(options.threads);
  return Session(std::move(impl));
}

const Subgraph& Session::plan() const { return *impl_->plan; }
const std::map<std::string, onnx::TypeProto>* Session::value_types() const {
  return impl_->model ? impl_->value_types.get() : nullptr;
}
const std::map<std::string, int>& Session::opsets() const { return impl_->env.opsets; }

TensorMetadata Session::input_metadata() const {
  TensorMetadata meta;
  const auto& plan = *impl_->plan;
  for (size_t i = 0; i < plan.input_names_.size(); ++i)
    if (!impl_->is_initializer_input[i])
      meta.add(plan.input_meta_[i].name, plan.input_meta_[i].dtype, plan.input_meta_[i].shape);
  return meta;
}

std::vector<std::string> Session::all_input_names() const { return impl_->plan->input_names_; }
std::vector<std::string> Session::output_names() const { return impl_->plan->output_names_; }

TensorMetadata Session::output_metadata() const {
  TensorMetadata meta;
  for (const auto& m : impl_->plan->output_meta_) meta.add(m.name, m.dtype, m.shape);
  return meta;
}

std::vector<std::string> Session::intermediate_names() const {
  std::vector<std::string> names;
  const Subgraph& plan = impl_->observable_plan();
  for (const auto& node : plan.nodes_)
    for (int s : node.outputs)
      if (s >= 0) names.push_back(plan.slot_names_[s]);
  return names;
}

const SessionOptions& Session::options() const { return impl_->options; }

NamedValues Session::run_values(const NamedValues& feed, const RunOptions& run_options) const {
  // Intermediates (a hook's, or the value to stop after) are seen on the unfused plan.
  bool observes_intermediates = static_cast<bool>(run_options.hook) || !run_options.stop_after.empty();
  for (const auto& name : run_options.outputs)
    if (std::find(impl_->plan->output_names_.begin(), impl_->plan->output_names_.end(), name) ==
        impl_->plan->output_names_.end())
      observes_intermediates = true;
  const Subgraph& plan = observes_intermediates ? impl_->observable_plan() : *impl_->plan;
  const Precision precision = impl_->options.precision;

  // Feed checks: every name known, every required input present with the declared dtype/shape.
  std::vector<Value> inputs(plan.input_slots_.size());
  for (const auto& [name, value] : feed) {
    auto it = std::find(plan.input_names_.begin(), plan.input_names_.end(), name);
    PARITY_CHECK(it != plan.input_names_.end(), kInvalidArgument, "the feed has '", name,
                 "', which is not an input of the model; inputs are: ", join_names(input_metadata().names()));
    const size_t i = static_cast<size_t>(it - plan.input_names_.begin());
    const TensorMeta& meta = plan.input_meta_[i];
    const auto type_it = impl_->value_types->find(name);
    const bool expects_tensor = type_it == impl_->value_types->end() || type_it->second.has_tensor_type();
    if (expects_tensor) {
      PARITY_CHECK(value.is_tensor(), kInvalidArgument, "input '", name, "' must be a tensor, got ",
                   value_kind_name(value));
      const Tensor& t = value.tensor();
      PARITY_CHECK(meta.dtype == DType::kUndefined || t.dtype() == meta.dtype, kInvalidArgument, "input '", name,
                   "' has dtype ", dtype_name(t.dtype()), " but the model expects ", dtype_name(meta.dtype));
      PARITY_CHECK(!run_options.check_input_shapes || meta.shape.unknown_rank || meta.shape.accepts(t.shape()), kInvalidArgument, "input '", name,
                   "' has shape ", shape_to_string(t.shape()), " but the model expects ", meta.shape.to_string());
    }
    inputs[i] = to_compute_precision(value, precision);
  }
  for (size_t i = 0; i < plan.input_names_.size(); ++i)
    PARITY_CHECK(!inputs[i].is_empty() || impl_->is_initializer_input[i], kInvalidArgument, "input '",
                 plan.input_names_[i], "' is missing from the feed; the model's inputs are: ",
                 join_names(input_metadata().names()));

  const int profile = select_run_profile(feed, run_options.profile_index);
  if (run_options.selected_profile) *run_options.selected_profile = profile;

  // Requested outputs stay alive to the end of the run.
  std::vector<int> out_slots;
  std::vector<std::string> out_names = run_options.outputs.empty() ? plan.output_names_ : run_options.outputs;
  for (const auto& name : out_names) {
    const int s = plan.slot(name);
    PARITY_CHECK(s >= 0, kNotFound, "'", name, "' is not a value of the model's main graph");
    out_slots.push_back(s);
  }
  std::vector<bool> keep(plan.slot_names_.size(), false);
  for (int s : out_slots) keep[s] = true;

  RunState state;
  state.pool = impl_->pool.get();
  state.precision = precision;
  state.seed = impl_->options.seed;
  state.hook = run_options.hook ? &run_options.hook : nullptr;
  state.keep_slots = &keep;
  state.profile = run_options.profile;
  state.peak_activation_bytes = run_options.peak_activation_bytes;
  if (!run_options.stop_after.empty()) {
    state.stop_slot = plan.slot(run_options.stop_after);
    PARITY_CHECK(state.stop_slot >= 0, kNotFound, "cannot stop after '", run_options.stop_after,
                 "': it is not a value of the model's main graph");
  }
  std::vector<Value> frame = execute_graph(plan, std::move(inputs), nullptr, state, true);
  if (state.stop_slot >= 0) return {};  // stopped early: the outputs need not exist

  NamedValues results;
  const bool narrow = precision == Precision::kFloat64 && impl_->options.outputs_in_model_dtype;
  for (size_t k = 0; k < out_slots.size(); ++k) {
    Value v = frame[out_slots[k]];
    PARITY_CHECK(!v.is_empty(), kRuntime, "output '", out_names[k], "' was not produced by the graph");
    if (narrow) {
      auto d = impl_->declared_dtype.find(out_names[k]);
      if (d != impl_->declared_dtype.end()) v = to_dtype(v, d->second, impl_->env.opsets.at("") < 19);
    }
    results.emplace_back(out_names[k], std::move(v));
  }
  return results;
}

int Session::select_run_profile(const NamedValues& feed, int requested) const {
  const auto& profiles = impl_->options.profiles;
  if (profiles.empty()) return -1;
  std::vector<std::pair<std::string, Shape>> shapes;
  for (const auto& [name, value] : feed)
    if (value.is_tensor()) shapes.emplace_back(name, value.tensor().shape());
  return select_profile(profiles, shapes, requested);
}

TensorMap Session::run(const TensorMap& feed, const RunOptions& options) const {
  NamedValues values;
  for (const auto& [name, t] : feed) values.emplace_back(name, Value(t));
  TensorMap out;
  for (auto& [name, v] : run_values(values, options)) {
    PARITY_CHECK(v.is_tensor(), kUnsupported, "output '", name, "' is ", value_kind_name(v),
                 ", not a tensor; use Session::run_values for sequence and optional outputs");
    out.set(name, v.tensor());
  }
  return out;
}

}  // namespace parity::runtime
