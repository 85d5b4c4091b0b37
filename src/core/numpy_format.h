// Tensor values printed the way numpy's str(array) prints them (what Polygraphy shows for
// weights): nested brackets, elements aligned to a common width, lines wrapped at 75 columns,
// arrays of more than 1000 elements summarized with '...' around 3 edge items per axis.
#pragma once

#include <string>

#include "core/tensor.h"

namespace parity {

/// numpy's str() of the tensor's values (float formatting: numpy's default 'maxprec' mode,
/// precision 8, scientific when magnitudes need it). Strings are quoted; complex values are shown
/// as numpy shows them only approximately.
std::string format_numpy(const Tensor& tensor);

}  // namespace parity
