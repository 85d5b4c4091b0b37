#include "model/external_data.h"

#include "core/low_precision.h"

#include <fcntl.h>
#include <onnx/onnx_pb.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <new>
#include <tuple>

#include "core/formats/file_io.h"

namespace parity::model {

namespace fs = std::filesystem;

namespace {

std::string label_of(const onnx::TensorProto& proto) {
  return proto.name().empty() ? std::string("<unnamed tensor>") : "'" + proto.name() + "'";
}

ErrorContext tensor_context(const onnx::TensorProto& proto) {
  if (proto.name().empty()) return {};
  return {.tensor = proto.name()};
}

int64_t parse_key_int(const std::string& text, const std::string& key, const std::string& label) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  PARITY_CHECK(ec == std::errc() && end == text.data() + text.size() && value >= 0, kInvalidModel,
               "external data of tensor ", label, " has an invalid ", key, " '", text, "'");
  return value;
}

/// Bytes the tensor needs according to its dtype and dims (overflow-checked).
int64_t expected_bytes(const onnx::TensorProto& proto, const std::string& label) {
  const auto dtype = static_cast<DType>(proto.data_type());
  PARITY_CHECK(is_valid_dtype(dtype) && dtype != DType::kString, kInvalidModel, "tensor ", label,
               " has external data but data type ", proto.data_type(), " cannot be stored externally");
  // Counted in bits: int4/uint4/float4e2m1 and int2/uint2 are stored packed, ceil(n * bits / 8) bytes.
  __int128 bits = static_cast<__int128>(dtype_bits(dtype));
  for (int64_t d : proto.dims()) {
    PARITY_CHECK(d >= 0, kInvalidModel, "tensor ", label, " has negative dimension ", d);
    bits *= d;
    PARITY_CHECK(bits < (static_cast<__int128>(1) << 62), kInvalidModel, "tensor ", label, " is impossibly large");
  }
  return static_cast<int64_t>((bits + 7) / 8);
}

struct CheckedRef {
  fs::path path;
  int64_t offset = 0;
  int64_t bytes = 0;
};

CheckedRef check_ref(const onnx::TensorProto& proto, const fs::path& base_dir) {
  return with_error_context(tensor_context(proto), [&] {
    const std::string label = label_of(proto);
    const ExternalDataRef ref = parse_external_data(proto);
    CheckedRef out;
    out.path = resolve_external_location(ref.location, base_dir, label);
    out.offset = ref.offset;
    out.bytes = expected_bytes(proto, label);
    PARITY_CHECK(ref.length < 0 || ref.length == out.bytes, kInvalidModel, "external data of tensor ", label,
                 " has length ", ref.length, " but its dtype and shape need ", out.bytes, " bytes");
    const ErrorContext at_file{.file = out.path.string()};
    std::error_code ec;
    const auto status = fs::status(out.path, ec);
    PARITY_CHECK_AT(!ec && fs::exists(status), at_file, kNotFound, "external data file '", out.path.string(),
                    "' of tensor ", label, " does not exist");
    PARITY_CHECK_AT(fs::is_regular_file(status), at_file, kInvalidModel, "external data location '",
                    out.path.string(), "' of tensor ", label, " is not a regular file");
    const auto file_size = static_cast<int64_t>(fs::file_size(out.path, ec));
    PARITY_CHECK_AT(!ec && out.offset + out.bytes <= file_size, at_file, kInvalidModel, "external data of tensor ",
                    label, " needs bytes [", out.offset, ", ", out.offset + out.bytes, ") but '", out.path.string(),
                    "' has ", file_size, " bytes");
    return out;
  });
}

}  // namespace

bool has_external_data(const onnx::TensorProto& proto) {
  return proto.data_location() == onnx::TensorProto::EXTERNAL;
}

bool is_weightless(const onnx::TensorProto& proto) {
  return proto.doc_string().find(kWeightlessMarker) != std::string::npos && proto.raw_data().empty() &&
         proto.float_data_size() == 0 && proto.int32_data_size() == 0 && proto.int64_data_size() == 0 &&
         proto.double_data_size() == 0 && proto.uint64_data_size() == 0 && proto.string_data_size() == 0;
}

ExternalDataRef parse_external_data(const onnx::TensorProto& proto) {
  ExternalDataRef ref;
  const std::string label = label_of(proto);
  for (const auto& kv : proto.external_data()) {
    if (kv.key() == "location") ref.location = kv.value();
    else if (kv.key() == "offset") ref.offset = parse_key_int(kv.value(), "offset", label);
    else if (kv.key() == "length") ref.length = parse_key_int(kv.value(), "length", label);
  }
  return ref;
}

fs::path resolve_external_location(const std::string& location, const fs::path& base_dir,
                                   const std::string& tensor) {
  PARITY_CHECK(!location.empty(), kInvalidModel, "tensor ", tensor, " has external data without a location");
  const fs::path loc(location);
  PARITY_CHECK(!loc.is_absolute() && !loc.has_root_name() && !loc.has_root_directory(), kInvalidModel,
               "external data location '", location, "' of tensor ", tensor,
               " is an absolute path; locations must be relative to the model's folder");
  for (const auto& part : loc)
    PARITY_CHECK(part != "..", kInvalidModel, "external data location '", location, "' of tensor ", tensor,
                 " escapes the model's folder ('..' is not allowed)");
  // weakly_canonical follows symlinks, so a link inside the folder pointing outside is caught here.
  const fs::path base = fs::weakly_canonical(base_dir.empty() ? fs::current_path() : base_dir);
  const fs::path full = fs::weakly_canonical(base / loc);
  auto [base_end, full_it] = std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  PARITY_CHECK(base_end == base.end() && full_it != full.end(), kInvalidModel, "external data location '",
               location, "' of tensor ", tensor, " resolves to '", full.string(), "', outside the model's folder '",
               base.string(), "'");
  return full;
}

void validate_external_tensor(const onnx::TensorProto& proto, const fs::path& base_dir) {
  check_ref(proto, base_dir);
}

Tensor map_external_tensor(const onnx::TensorProto& proto, const fs::path& base_dir) {
  return with_error_context(tensor_context(proto), [&] {
    const CheckedRef ref = check_ref(proto, base_dir);
    const auto dtype = static_cast<DType>(proto.data_type());
    Shape shape(proto.dims().begin(), proto.dims().end());
    if (ref.bytes == 0) return Tensor(dtype, std::move(shape));
    if (is_sub_byte(dtype)) {
      // Packed on disk, one byte per element in memory: unpack instead of mapping.
      auto file = MappedFile::open(ref.path);
      Tensor t(dtype, std::move(shape));
      unpack_sub_byte(dtype, reinterpret_cast<const uint8_t*>(file->data() + ref.offset), t.numel(),
                      static_cast<uint8_t*>(t.raw_data()));
      return t;
    }
    if (ref.offset % static_cast<int64_t>(dtype_size(dtype)) != 0) {
      // Misaligned elements would make typed access undefined; copy this (rare) tensor instead.
      auto file = MappedFile::open(ref.path);
      return Tensor::from_bytes(dtype, std::move(shape), file->data() + ref.offset, static_cast<size_t>(ref.bytes));
    }
    return Tensor(dtype, std::move(shape), MappedFile::open(ref.path), static_cast<size_t>(ref.offset));
  });
}

// --- MappedFile --------------------------------------------------------------------------------

namespace {
// Live mappings keyed by file identity, so every tensor of a weights file shares one mapping.
// A rewritten file (new inode, size or mtime) gets a fresh mapping.
using FileKey = std::tuple<dev_t, ino_t, off_t, int64_t, int64_t>;
std::mutex g_map_mutex;
std::map<FileKey, std::weak_ptr<MappedFile>>& live_mappings() {
  static std::map<FileKey, std::weak_ptr<MappedFile>> m;
  return m;
}
}  // namespace

std::shared_ptr<MappedFile> MappedFile::open(const fs::path& path) {
  const ErrorContext at_file{.file = path.string()};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  PARITY_CHECK_AT(fd >= 0, at_file, kNotFound, "cannot open '", path.string(), "': ", std::strerror(errno));
  formats::note_input(path.string());  // models and their weight files are never written over
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    fail_at(at_file, ErrorCode::kIo, "cannot stat '", path.string(), "'");
  }
  const FileKey key{st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
  std::lock_guard<std::mutex> lock(g_map_mutex);
  auto& live = live_mappings();
  if (auto it = live.find(key); it != live.end()) {
    if (auto existing = it->second.lock()) {
      ::close(fd);
      return existing;
    }
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  if (file->size_ > 0) {
    // Private + writable: kernels may write through a Tensor; those pages are copied, the file never changes.
    void* p = ::mmap(nullptr, file->size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      // No address space left (a --runner-memory-limit, a 32-bit process) is running out of
      // memory, reported as such (capture_result: "out of memory"), not as a file error.
      if (err == ENOMEM) throw std::bad_alloc();
      fail_at(at_file, ErrorCode::kIo, "cannot map '", path.string(), "': ", std::strerror(err));
    }
    file->data_ = static_cast<std::byte*>(p);
  }
  ::close(fd);
  for (auto it = live.begin(); it != live.end();) it = it->second.expired() ? live.erase(it) : std::next(it);
  live[key] = file;
  return file;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

}  // namespace parity::model
