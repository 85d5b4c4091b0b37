#include "bindings/arrays.h"

#include <utility>

#include "core/float16.h"

namespace parity::python {

namespace {

/// Memory of a numpy array, borrowed: holding the array keeps it alive. Tensors may be released
/// on threads that do not hold the GIL (a runner deactivated in a released section), so the
/// reference is dropped under the GIL.
class ArrayStorage : public Storage {
 public:
  explicit ArrayStorage(py::array array) : array_(std::move(array)) {}
  ~ArrayStorage() override {
    py::gil_scoped_acquire gil;
    array_ = py::array();
  }
  // Feeds are only read; a read-only array is lent as it is.
  std::byte* data() override { return static_cast<std::byte*>(const_cast<void*>(array_.data())); }
  size_t size_bytes() const override { return static_cast<size_t>(array_.nbytes()); }

 private:
  py::array array_;
};

std::string type_name(const py::handle& value) { return py::str(py::type::handle_of(value).attr("__name__")); }

}  // namespace

DType dtype_from_numpy(const py::handle& value) {
  const py::dtype dtype = py::dtype::from_args(py::reinterpret_borrow<py::object>(value));
  const char kind = dtype.kind();
  const auto size = dtype.itemsize();
  switch (kind) {
    case 'b': return DType::kBool;
    case 'f':
      if (size == 2) return DType::kFloat16;
      if (size == 4) return DType::kFloat32;
      if (size == 8) return DType::kFloat64;
      break;
    case 'i':
      if (size == 1) return DType::kInt8;
      if (size == 2) return DType::kInt16;
      if (size == 4) return DType::kInt32;
      if (size == 8) return DType::kInt64;
      break;
    case 'u':
      if (size == 1) return DType::kUInt8;
      if (size == 2) return DType::kUInt16;
      if (size == 4) return DType::kUInt32;
      if (size == 8) return DType::kUInt64;
      break;
    case 'c':
      if (size == 8) return DType::kComplex64;
      if (size == 16) return DType::kComplex128;
      break;
    case 'U':
    case 'S':
    case 'O': return DType::kString;
    default: break;
  }
  throw py::value_error("numpy dtype " + py::str(static_cast<py::handle>(dtype)).cast<std::string>() + " has no parity tensor type");
}

py::dtype numpy_dtype(DType dtype) {
  switch (dtype) {
    case DType::kBool: return py::dtype("bool");
    case DType::kFloat16: return py::dtype("float16");
    case DType::kBFloat16:
    case DType::kFloat32: return py::dtype("float32");
    case DType::kFloat64: return py::dtype("float64");
    case DType::kInt8: return py::dtype("int8");
    case DType::kInt16: return py::dtype("int16");
    case DType::kInt32: return py::dtype("int32");
    case DType::kInt64: return py::dtype("int64");
    case DType::kUInt8: return py::dtype("uint8");
    case DType::kUInt16: return py::dtype("uint16");
    case DType::kUInt32: return py::dtype("uint32");
    case DType::kUInt64: return py::dtype("uint64");
    case DType::kComplex64: return py::dtype("complex64");
    case DType::kComplex128: return py::dtype("complex128");
    case DType::kString: return py::dtype("object");
    case DType::kUndefined: break;
  }
  throw py::value_error("a tensor of undefined dtype has no numpy dtype");
}

Tensor tensor_from_array(const py::handle& value, const std::string& what) {
  if (!py::isinstance<py::array>(value))
    throw py::type_error(what + " is a " + type_name(value) + ", not a numpy.ndarray");
  auto array = py::reinterpret_borrow<py::array>(value);
  const DType dtype = dtype_from_numpy(array.dtype());
  Shape shape(array.shape(), array.shape() + array.ndim());
  if (dtype == DType::kString) {
    Tensor tensor(DType::kString, shape);
    auto* out = tensor.data<std::string>();
    py::list flat = array.attr("ravel")().attr("tolist")();
    for (size_t i = 0; i < flat.size(); ++i) {
      py::handle item = flat[i];
      out[i] = py::isinstance<py::bytes>(item) ? std::string(py::reinterpret_borrow<py::bytes>(item))
                                               : std::string(py::str(item));
    }
    return tensor;
  }
  if (!(array.flags() & py::array::c_style))
    throw py::value_error(what + " is not C-contiguous: pass numpy.ascontiguousarray(...) of it");
  if (array.dtype().attr("byteorder").cast<std::string>() == ">")
    throw py::value_error(what + " is big-endian: pass it with .astype(its dtype.newbyteorder('='))");
  return Tensor(dtype, std::move(shape), std::make_shared<ArrayStorage>(std::move(array)), 0);
}

TensorMap tensor_map_from_dict(const py::handle& feed, const std::string& what) {
  if (!py::isinstance<py::dict>(feed))
    throw py::type_error(what + " is a " + type_name(feed) + ", not a dict of numpy arrays");
  TensorMap tensors;
  for (auto [key, value] : py::reinterpret_borrow<py::dict>(feed)) {
    const std::string name = py::str(key);
    tensors.set(name, tensor_from_array(value, what + " '" + name + "'"));
  }
  return tensors;
}

py::array array_from_tensor(const Tensor& tensor) {
  const Shape& shape = tensor.shape();
  if (tensor.dtype() == DType::kString) {
    py::array out(py::dtype("object"), std::vector<py::ssize_t>(shape.begin(), shape.end()));
    auto flat = out.attr("reshape")(-1);
    const auto* values = tensor.data<std::string>();
    for (int64_t i = 0; i < tensor.numel(); ++i) flat.attr("__setitem__")(i, py::str(values[i]));
    return out;
  }
  if (tensor.dtype() == DType::kBFloat16) {
    py::array_t<float> out(std::vector<py::ssize_t>(shape.begin(), shape.end()));
    const auto* bits = static_cast<const uint16_t*>(tensor.raw_data());
    float* values = out.mutable_data();
    for (int64_t i = 0; i < tensor.numel(); ++i) values[i] = detail::bfloat16_bits_to_float(bits[i]);
    return out;
  }
  auto* owner = new Tensor(tensor);
  py::capsule base(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  std::vector<py::ssize_t> strides;
  for (int64_t stride : shape_strides(shape)) strides.push_back(stride * static_cast<py::ssize_t>(dtype_size(tensor.dtype())));
  return py::array(numpy_dtype(tensor.dtype()), std::vector<py::ssize_t>(shape.begin(), shape.end()), strides,
                   const_cast<void*>(tensor.raw_data()), base);
}

py::dict dict_from_tensor_map(const TensorMap& tensors, bool copy) {
  py::dict out;
  for (const auto& [name, tensor] : tensors) out[py::str(name)] = array_from_tensor(copy ? tensor.clone() : tensor);
  return out;
}

namespace {

py::object dim_to_python(const Dim& dim) {
  if (dim.is_static()) return py::int_(dim.value);
  return py::none();
}

}  // namespace

py::list metadata_to_list(const TensorMetadata& metadata) {
  py::list out;
  for (const TensorMeta& meta : metadata) {
    py::object dtype = meta.dtype == DType::kUndefined ? py::object(py::none()) : py::object(numpy_dtype(meta.dtype));
    py::object shape = py::none();
    if (!meta.shape.unknown_rank) {
      py::list dims;
      for (const Dim& dim : meta.shape.dims) dims.append(dim_to_python(dim));
      shape = py::tuple(dims);
    }
    out.append(py::make_tuple(meta.name, dtype, shape));
  }
  return out;
}

TensorMetadata metadata_from_python(const py::handle& value) {
  TensorMetadata metadata;
  auto add = [&](const std::string& name, const py::handle& dtype, const py::handle& shape) {
    DimShape dims;
    if (shape.is_none()) {
      dims.unknown_rank = true;
    } else {
      for (py::handle dim : shape) {
        if (dim.is_none()) dims.dims.push_back(Dim::dynamic());
        else if (py::isinstance<py::str>(dim)) dims.dims.push_back(Dim::dynamic(dim.cast<std::string>()));
        else dims.dims.emplace_back(dim.cast<int64_t>());
      }
    }
    metadata.add(name, dtype.is_none() ? DType::kUndefined : dtype_from_numpy(dtype), std::move(dims));
  };
  if (py::isinstance<py::dict>(value) || py::hasattr(value, "items")) {
    for (py::handle item : value.attr("items")()) {
      py::tuple pair = py::reinterpret_borrow<py::tuple>(item);
      py::object meta = pair[1];
      add(py::str(pair[0]), meta.attr("__getitem__")(0), meta.attr("__getitem__")(1));
    }
    return metadata;
  }
  for (py::handle item : value) {
    py::tuple entry = py::reinterpret_borrow<py::tuple>(item);
    add(py::str(entry[0]), entry[1], entry[2]);
  }
  return metadata;
}

}  // namespace parity::python
