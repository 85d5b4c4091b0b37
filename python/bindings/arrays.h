// Conversions between numpy and parity's tensors, shared by every binding file. Feeds are
// borrowed without a copy (the tensor keeps the array alive); outputs become arrays that keep
// the tensor's buffer alive.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "core/metadata.h"
#include "core/tensor_map.h"

namespace parity::python {

namespace py = pybind11;

/// A tensor over a numpy array's memory. Raises TypeError for something that is not a
/// numpy.ndarray and ValueError for an array that is not C-contiguous, is not in native byte
/// order or has a dtype parity has no tensor type for; `what` names the value in those messages.
Tensor tensor_from_array(const py::handle& value, const std::string& what);
/// A dict {name: numpy.ndarray} as a feed, in the dict's order.
TensorMap tensor_map_from_dict(const py::handle& feed, const std::string& what);

/// A numpy array of the tensor's values: a view of its buffer (kept alive by the array), or a
/// converted copy for dtypes numpy lacks (bfloat16 becomes float32, strings become objects).
py::array array_from_tensor(const Tensor& tensor);
/// An ordered dict {name: numpy.ndarray}; `copy` deep-copies first (for runners that reuse buffers).
py::dict dict_from_tensor_map(const TensorMap& tensors, bool copy);

/// numpy's dtype for a parity dtype (float32 for bfloat16, object for strings).
py::dtype numpy_dtype(DType dtype);
/// parity's dtype for a numpy dtype (or anything numpy.dtype() accepts); ValueError when none.
DType dtype_from_numpy(const py::handle& dtype);

/// Polygraphy's TensorMetadata as a list of (name, dtype, shape) with None for dynamic dims.
py::list metadata_to_list(const TensorMetadata& metadata);
/// The reverse: an iterable of (name, dtype, shape) or a mapping name -> (dtype, shape).
TensorMetadata metadata_from_python(const py::handle& value);

}  // namespace parity::python
