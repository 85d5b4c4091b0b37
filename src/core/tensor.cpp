#include "core/tensor.h"

#include "core/allocation_limit.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/low_precision.h"

namespace parity {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  bool empty = false;  // a zero dimension makes any other size harmless
  for (int64_t d : shape) {
    PARITY_CHECK(d >= 0, kInvalidArgument, "negative dimension ", d, " in shape ", shape_to_string(shape));
    empty = empty || d == 0;
  }
  if (empty) return 0;
  for (int64_t d : shape)
    PARITY_CHECK(!__builtin_mul_overflow(n, d, &n), kInvalidArgument, "shape ", shape_to_string(shape),
                 " has more elements than a 64-bit count can hold");
  return n;
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::vector<int64_t> shape_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    PARITY_CHECK(!__builtin_mul_overflow(strides[i + 1], shape[i + 1], &strides[i]), kInvalidArgument, "shape ",
                 shape_to_string(shape), " has more elements than a 64-bit count can hold");
  return strides;
}

namespace {
class HeapStorage final : public Storage {
 public:
  HeapStorage(size_t bytes, bool zeroed) : size_(bytes) {
    // 64-byte alignment so vectorized kernels can use aligned loads; zero-filled for determinism
    // unless the caller overwrites every byte anyway.
    data_ = static_cast<std::byte*>(::operator new[](bytes ? bytes : 1, std::align_val_t(64)));
    if (zeroed) std::memset(data_, 0, bytes);
  }
  ~HeapStorage() override { ::operator delete[](data_, std::align_val_t(64)); }
  std::byte* data() override { return data_; }
  size_t size_bytes() const override { return size_; }

 private:
  std::byte* data_;
  size_t size_;
};

class StringStorage final : public Storage {
 public:
  explicit StringStorage(size_t count) : strings_(count) {}
  std::byte* data() override { return reinterpret_cast<std::byte*>(strings_.data()); }
  size_t size_bytes() const override { return strings_.size() * sizeof(std::string); }

 private:
  std::vector<std::string> strings_;
};

// The largest tensor parity allocates: the machine's physical memory, or PARITY_MAX_TENSOR_BYTES
// (fuzzers and sanitizer runs set it low so a huge shape is an error, not an allocator abort), or
// what set_max_tensor_bytes last chose.
std::atomic<size_t>& tensor_byte_limit() {
  static std::atomic<size_t> limit = [] {
    if (const char* env = std::getenv("PARITY_MAX_TENSOR_BYTES"); env && *env) return static_cast<size_t>(std::strtoull(env, nullptr, 10));
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : SIZE_MAX;
  }();
  return limit;
}

size_t max_tensor_bytes() { return tensor_byte_limit().load(std::memory_order_relaxed); }

std::string gib(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

// Checked before allocating: shapes come from models, data files and the command line, and an
// absurd one must be one clear error, not a bad_alloc (or the OOM killer) somewhere later.
size_t checked_bytes(DType dtype, const Shape& shape, int64_t numel) {
  const size_t element = dtype == DType::kString ? sizeof(std::string) : dtype_size(dtype);
  size_t bytes = 0;
  PARITY_CHECK(!__builtin_mul_overflow(static_cast<size_t>(numel), element, &bytes), kInvalidArgument,
               "a ", dtype_name(dtype), " tensor of shape ", shape_to_string(shape), " is too large to address");
  PARITY_CHECK(bytes <= max_tensor_bytes(), kInvalidArgument, "a ", dtype_name(dtype), " tensor of shape ",
               shape_to_string(shape), " needs ", gib(bytes), ", more than the ", gib(max_tensor_bytes()),
               " parity may allocate (this machine's memory, or $PARITY_MAX_TENSOR_BYTES)");
  return bytes;
}

std::shared_ptr<Storage> allocate_storage(DType dtype, const Shape& shape, int64_t numel, bool zeroed = true) {
  const size_t bytes = checked_bytes(dtype, shape, numel);
  if (dtype == DType::kString) return std::make_shared<StringStorage>(static_cast<size_t>(numel));
  return std::make_shared<HeapStorage>(bytes, zeroed);
}
}  // namespace

size_t checked_tensor_bytes(DType dtype, const Shape& shape) { return checked_bytes(dtype, shape, shape_numel(shape)); }

size_t set_max_tensor_bytes(size_t bytes) { return tensor_byte_limit().exchange(bytes); }

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  PARITY_CHECK(is_valid_dtype(dtype), kInvalidArgument, "cannot create a tensor of dtype ",
               dtype_name(dtype));
  numel_ = shape_numel(shape_);
  storage_ = allocate_storage(dtype_, shape_, numel_);
}

Tensor Tensor::uninitialized(DType dtype, Shape shape) {
  PARITY_CHECK(is_valid_dtype(dtype), kInvalidArgument, "cannot create a tensor of dtype ", dtype_name(dtype));
  if (dtype == DType::kString) return Tensor(dtype, std::move(shape));
  const int64_t numel = shape_numel(shape);
  auto storage = allocate_storage(dtype, shape, numel, /*zeroed=*/false);
  return Tensor(dtype, std::move(shape), std::move(storage));
}

Tensor::Tensor(DType dtype, Shape shape, std::shared_ptr<Storage> storage, size_t byte_offset)
    : dtype_(dtype), shape_(std::move(shape)), storage_(std::move(storage)), offset_(byte_offset) {
  numel_ = shape_numel(shape_);
  PARITY_ASSERT(dtype != DType::kString, "string tensors cannot wrap external storage");
  size_t bytes = 0;  // neither the byte count nor offset + bytes may wrap around
  PARITY_ASSERT(storage_ && !__builtin_mul_overflow(static_cast<size_t>(numel_), dtype_size(dtype_), &bytes) &&
                    offset_ <= storage_->size_bytes() && bytes <= storage_->size_bytes() - offset_,
                "storage too small for tensor of shape ", shape_to_string(shape_));
}

Tensor Tensor::from_bytes(DType dtype, Shape shape, const void* bytes, size_t size_bytes) {
  PARITY_CHECK(dtype != DType::kString, kInvalidArgument, "string tensors cannot be built from bytes");
  // Compared before allocating, so a huge shape over a few bytes of data is a clear error.
  const int64_t numel = shape_numel(shape);
  size_t needed = 0;
  const bool overflow = __builtin_mul_overflow(static_cast<size_t>(numel), dtype_size(dtype), &needed);
  PARITY_CHECK(!overflow && size_bytes == needed, kInvalidModel, "a ", dtype_name(dtype), " tensor of shape ",
               shape_to_string(shape), " needs ", overflow ? std::string("more than 2^64") : std::to_string(needed),
               " bytes, got ", size_bytes);
  Tensor t = uninitialized(dtype, std::move(shape));  // every byte is written next
  if (size_bytes) std::memcpy(t.raw_data(), bytes, size_bytes);
  return t;
}

int64_t Tensor::dim(int64_t axis) const {
  if (axis < 0) axis += rank();
  PARITY_ASSERT(axis >= 0 && axis < rank(), "axis ", axis, " out of range for rank ", rank());
  return shape_[static_cast<size_t>(axis)];
}

void Tensor::check_type(DType requested) const {
  PARITY_ASSERT(requested == dtype_, "tensor holds ", dtype_name(dtype_), ", accessed as ",
                dtype_name(requested));
}

Tensor Tensor::clone() const {
  if (!defined()) return Tensor();
  Tensor t(dtype_, shape_);
  if (dtype_ == DType::kString) {
    auto src = values<std::string>();
    auto dst = t.values<std::string>();
    std::copy(src.begin(), src.end(), dst.begin());
  } else if (size_bytes()) {
    std::memcpy(t.raw_data(), raw_data(), size_bytes());
  }
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  PARITY_CHECK(shape_numel(shape) == numel_, kInvalidArgument, "cannot reshape ",
               shape_to_string(shape_), " to ", shape_to_string(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::cast(DType dtype) const {
  if (dtype == dtype_) return clone();
  PARITY_CHECK(dtype != DType::kString && dtype_ != DType::kString, kUnsupported,
               "cannot cast between string and ", dtype_name(dtype == DType::kString ? dtype_ : dtype));
  if (is_low_precision(dtype) || is_low_precision(dtype_)) return cast_low_precision(*this, dtype);
  Tensor out(dtype, shape_);
  visit_numeric_dtype(dtype_, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    visit_numeric_dtype(dtype, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* src = data<From>();
      To* dst = out.data<To>();
      for (int64_t i = 0; i < numel_; ++i) dst[i] = convert_scalar<To>(src[i]);
    });
  });
  return out;
}

double Tensor::value_as_double(int64_t i) const {
  PARITY_ASSERT(i >= 0 && i < numel_, "index ", i, " out of range");
  if (is_low_precision(dtype_)) return low_precision_to_double(dtype_, static_cast<const uint8_t*>(raw_data())[i]);
  return visit_numeric_dtype(dtype_, [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    return convert_scalar<double>(data<T>()[i]);
  });
}

bool Tensor::bit_equal(const Tensor& other) const {
  if (dtype_ != other.dtype_ || shape_ != other.shape_) return false;
  if (dtype_ == DType::kString) {
    auto a = values<std::string>();
    auto b = other.values<std::string>();
    return std::equal(a.begin(), a.end(), b.begin());
  }
  return size_bytes() == 0 || std::memcmp(raw_data(), other.raw_data(), size_bytes()) == 0;
}

}  // namespace parity
