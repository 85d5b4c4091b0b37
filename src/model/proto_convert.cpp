#include "model/proto_convert.h"

#include "model/external_data.h"

#include "core/low_precision.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>

namespace parity::model {

namespace fs = std::filesystem;

const char* attr_type_name_impl(AttrType type) {
  switch (type) {
    case AttrType::kFloat: return "float";
    case AttrType::kInt: return "int";
    case AttrType::kString: return "string";
    case AttrType::kTensor: return "tensor";
    case AttrType::kGraph: return "graph";
    case AttrType::kFloats: return "floats";
    case AttrType::kInts: return "ints";
    case AttrType::kStrings: return "strings";
    case AttrType::kTensors: return "tensors";
    case AttrType::kGraphs: return "graphs";
    case AttrType::kSparseTensor: return "sparse_tensor";
    case AttrType::kSparseTensors: return "sparse_tensors";
    case AttrType::kTypeProto: return "type_proto";
    case AttrType::kTypeProtos: return "type_protos";
    default: return "undefined";
  }
}

namespace {

Shape dims_of(const onnx::TensorProto& proto) {
  Shape shape;
  for (int64_t d : proto.dims()) {
    PARITY_CHECK(d >= 0, kInvalidModel, "tensor '", proto.name(), "' has negative dimension ", d);
    shape.push_back(d);
  }
  return shape;
}

std::string tensor_label(const onnx::TensorProto& proto) {
  return proto.name().empty() ? std::string("<unnamed tensor>") : "'" + proto.name() + "'";
}

template <typename T, typename Field>
void copy_field(Tensor& t, const Field& field, const std::string& label) {
  PARITY_CHECK(field.size() == t.numel(), kInvalidModel, "tensor ", label, " has ", field.size(),
               " values but its shape needs ", t.numel());
  T* out = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) out[i] = static_cast<T>(field.Get(static_cast<int>(i)));
}

// Elements held in the typed field a dtype uses (complex types store two numbers per element).
int64_t stored_value_count(const onnx::TensorProto& proto, DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return proto.float_data_size();
    case DType::kComplex64: return proto.float_data_size() / 2;
    case DType::kFloat64: return proto.double_data_size();
    case DType::kComplex128: return proto.double_data_size() / 2;
    case DType::kInt64: return proto.int64_data_size();
    case DType::kUInt64:
    case DType::kUInt32: return proto.uint64_data_size();
    default: return proto.int32_data_size();
  }
}

/// float8 types: one byte per element, in raw_data or one per int32_data entry. Sub-byte types:
/// packed (low bits first) in raw_data, or one packed byte per int32_data entry.
Tensor low_precision_from_proto(const onnx::TensorProto& proto, DType dtype, Shape shape, const std::string& label) {
  Tensor t(dtype, std::move(shape));
  const size_t need = packed_size_bytes(dtype, t.numel());
  std::vector<uint8_t> bytes;
  if (proto.has_raw_data()) {
    bytes.assign(proto.raw_data().begin(), proto.raw_data().end());
  } else {
    for (int32_t v : proto.int32_data()) bytes.push_back(static_cast<uint8_t>(v));
  }
  PARITY_CHECK(bytes.size() == need, kInvalidModel, "tensor ", label, " of type ", dtype_name(dtype), " and shape ",
               shape_to_string(t.shape()), " needs ", need, " bytes of data, has ", bytes.size());
  auto* out = static_cast<uint8_t*>(t.raw_data());
  if (is_sub_byte(dtype)) unpack_sub_byte(dtype, bytes.data(), t.numel(), out);
  else if (need) std::memcpy(out, bytes.data(), need);
  return t;
}

}  // namespace

Tensor tensor_from_proto(const onnx::TensorProto& proto, const fs::path& base_dir) {
  const auto dtype = static_cast<DType>(proto.data_type());
  const std::string label = tensor_label(proto);
  PARITY_CHECK(is_valid_dtype(dtype), kInvalidModel, "tensor ", label, " has unsupported data type ",
               proto.data_type());
  Shape shape = dims_of(proto);
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    return map_external_tensor(proto, base_dir);
  if (dtype == DType::kString) {
    PARITY_CHECK(shape_numel(shape) == proto.string_data_size(), kInvalidModel, "tensor ", label, " of shape ",
                 shape_to_string(shape), " needs ", shape_numel(shape), " strings but the model stores ",
                 proto.string_data_size());
    Tensor t(dtype, std::move(shape));
    copy_field<std::string>(t, proto.string_data(), label);
    return t;
  }
  if (is_low_precision(dtype)) return low_precision_from_proto(proto, dtype, std::move(shape), label);
  if (proto.has_raw_data()) return Tensor::from_bytes(dtype, std::move(shape), proto.raw_data().data(), proto.raw_data().size());
  // Dims come from the file: compare them with the values actually stored before allocating.
  const int64_t numel = shape_numel(shape);
  const int64_t stored = stored_value_count(proto, dtype);
  PARITY_CHECK(stored == numel, kInvalidModel, "tensor ", label, " of shape ", shape_to_string(shape), " needs ",
               numel, " values but the model stores ", stored);
  Tensor t(dtype, std::move(shape));
  switch (dtype) {
    case DType::kFloat32: copy_field<float>(t, proto.float_data(), label); break;
    case DType::kFloat64: copy_field<double>(t, proto.double_data(), label); break;
    case DType::kInt64: copy_field<int64_t>(t, proto.int64_data(), label); break;
    case DType::kUInt64: copy_field<uint64_t>(t, proto.uint64_data(), label); break;
    case DType::kUInt32: copy_field<uint32_t>(t, proto.uint64_data(), label); break;
    case DType::kInt32: copy_field<int32_t>(t, proto.int32_data(), label); break;
    case DType::kInt16: copy_field<int16_t>(t, proto.int32_data(), label); break;
    case DType::kInt8: copy_field<int8_t>(t, proto.int32_data(), label); break;
    case DType::kUInt16: copy_field<uint16_t>(t, proto.int32_data(), label); break;
    case DType::kUInt8: copy_field<uint8_t>(t, proto.int32_data(), label); break;
    case DType::kBool: copy_field<bool>(t, proto.int32_data(), label); break;
    case DType::kFloat16:
    case DType::kBFloat16: {
      // 16-bit floats are stored as their bit patterns in int32_data.
      const auto& f = proto.int32_data();
      PARITY_CHECK(f.size() == t.numel(), kInvalidModel, "tensor ", label, " has ", f.size(),
                   " values but its shape needs ", t.numel());
      auto* out = static_cast<uint16_t*>(t.raw_data());
      for (int64_t i = 0; i < t.numel(); ++i) out[i] = static_cast<uint16_t>(f.Get(static_cast<int>(i)));
      break;
    }
    case DType::kComplex64: {
      const auto& f = proto.float_data();
      PARITY_CHECK(f.size() == 2 * t.numel(), kInvalidModel, "complex tensor ", label, " has wrong value count");
      if (t.numel() > 0) std::memcpy(t.raw_data(), f.data(), t.size_bytes());  // an empty field's data() is null
      break;
    }
    case DType::kComplex128: {
      const auto& f = proto.double_data();
      PARITY_CHECK(f.size() == 2 * t.numel(), kInvalidModel, "complex tensor ", label, " has wrong value count");
      if (t.numel() > 0) std::memcpy(t.raw_data(), f.data(), t.size_bytes());  // an empty field's data() is null
      break;
    }
    default: fail(ErrorCode::kUnsupported, "tensor ", label, " has unsupported dtype ", dtype_name(dtype));
  }
  return t;
}

void tensor_to_proto(const Tensor& tensor, onnx::TensorProto* proto, const std::string& name) {
  proto->Clear();
  if (!name.empty()) proto->set_name(name);
  proto->set_data_type(static_cast<int>(tensor.dtype()));
  for (int64_t d : tensor.shape()) proto->add_dims(d);
  if (tensor.dtype() == DType::kString) {
    for (const auto& s : tensor.values<std::string>()) proto->add_string_data(s);
  } else if (is_sub_byte(tensor.dtype())) {
    const auto packed = pack_sub_byte(tensor.dtype(), static_cast<const uint8_t*>(tensor.raw_data()), tensor.numel());
    proto->set_raw_data(reinterpret_cast<const char*>(packed.data()), packed.size());
  } else {
    proto->set_raw_data(static_cast<const char*>(tensor.raw_data()), tensor.size_bytes());
  }
}

Attribute attribute_from_proto(const onnx::AttributeProto& proto, const fs::path& base_dir) {
  Attribute a;
  a.name = proto.name();
  a.type = static_cast<AttrType>(proto.type());
  a.ref_attr_name = proto.ref_attr_name();
  a.doc_string = proto.doc_string();
  a.f = proto.f();
  a.i = proto.i();
  a.s = proto.s();
  if (proto.has_t()) a.t = tensor_from_proto(proto.t(), base_dir);
  if (proto.has_g()) a.g = std::make_shared<onnx::GraphProto>(proto.g());
  a.floats.assign(proto.floats().begin(), proto.floats().end());
  a.ints.assign(proto.ints().begin(), proto.ints().end());
  a.strings.assign(proto.strings().begin(), proto.strings().end());
  for (const auto& t : proto.tensors()) a.tensors.push_back(tensor_from_proto(t, base_dir));
  for (const auto& g : proto.graphs()) a.graphs.push_back(std::make_shared<onnx::GraphProto>(g));
  if (a.type == AttrType::kUndefined) {
    // Old models omit the type; infer it from the populated field.
    if (proto.has_f()) a.type = AttrType::kFloat;
    else if (proto.has_i()) a.type = AttrType::kInt;
    else if (proto.has_s()) a.type = AttrType::kString;
    else if (proto.has_t()) a.type = AttrType::kTensor;
    else if (proto.has_g()) a.type = AttrType::kGraph;
    else if (proto.floats_size()) a.type = AttrType::kFloats;
    else if (proto.ints_size()) a.type = AttrType::kInts;
    else if (proto.strings_size()) a.type = AttrType::kStrings;
  }
  return a;
}

void attribute_to_proto(const Attribute& a, onnx::AttributeProto* proto) {
  proto->Clear();
  proto->set_name(a.name);
  proto->set_type(static_cast<onnx::AttributeProto::AttributeType>(a.type));
  if (!a.ref_attr_name.empty()) proto->set_ref_attr_name(a.ref_attr_name);
  if (!a.doc_string.empty()) proto->set_doc_string(a.doc_string);
  switch (a.type) {
    case AttrType::kFloat: proto->set_f(a.f); break;
    case AttrType::kInt: proto->set_i(a.i); break;
    case AttrType::kString: proto->set_s(a.s); break;
    case AttrType::kTensor: tensor_to_proto(a.t, proto->mutable_t()); break;
    case AttrType::kGraph: if (a.g) *proto->mutable_g() = *a.g; break;
    case AttrType::kFloats: for (float v : a.floats) proto->add_floats(v); break;
    case AttrType::kInts: for (int64_t v : a.ints) proto->add_ints(v); break;
    case AttrType::kStrings: for (const auto& v : a.strings) proto->add_strings(v); break;
    case AttrType::kTensors: for (const auto& t : a.tensors) tensor_to_proto(t, proto->add_tensors()); break;
    case AttrType::kGraphs: for (const auto& g : a.graphs) *proto->add_graphs() = *g; break;
    default: break;
  }
}

TensorMeta meta_from_type(const std::string& name, const onnx::TypeProto& type) {
  TensorMeta meta;
  meta.name = name;
  if (!type.has_tensor_type()) {
    meta.shape.unknown_rank = true;
    return meta;
  }
  const auto& tt = type.tensor_type();
  meta.dtype = static_cast<DType>(tt.elem_type());
  if (!tt.has_shape()) {
    meta.shape.unknown_rank = true;
    return meta;
  }
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value()) meta.shape.dims.emplace_back(d.dim_value());
    else meta.shape.dims.push_back(Dim::dynamic(d.dim_param()));
  }
  return meta;
}

TensorMeta meta_from_value_info(const onnx::ValueInfoProto& info) { return meta_from_type(info.name(), info.type()); }

Tensor tensor_from_pb_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  PARITY_CHECK(in, kNotFound, "cannot open '", path.string(), "'");
  onnx::TensorProto proto;
  PARITY_CHECK(proto.ParseFromIstream(&in), kInvalidModel, "'", path.string(), "' is not a serialized TensorProto");
  return tensor_from_proto(proto, path.parent_path());
}

const char* attr_type_name(AttrType type) { return attr_type_name_impl(type); }

}  // namespace parity::model
