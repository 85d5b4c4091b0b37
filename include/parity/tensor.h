/// \file
/// Tensors: parity::Tensor (a typed, shaped buffer), parity::TensorMap (named tensors in order, a
/// runner's feed or outputs), parity::DType and the tensor metadata a runner reports
/// (parity::TensorMetadata: names, dtypes and shapes with dynamic dimensions).
#pragma once

#include "core/dtype.h"
#include "core/metadata.h"
#include "core/tensor.h"
#include "core/tensor_map.h"
