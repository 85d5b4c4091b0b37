// Uses the installed headers and library: builds a tensor, prints its metadata.
#include <cstdio>

#include <parity/core/version.h>
#include <parity/tensor.h>

int main() {
  parity::Tensor t = parity::Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4});
  parity::TensorMetadata meta;
  meta.add("x", t.dtype(), parity::DimShape(t.shape()));
  std::printf("parity %s %s %.1f\n", parity::kParityVersion, meta.to_string().c_str(), t.value_as_double(3));
  return 0;
}
