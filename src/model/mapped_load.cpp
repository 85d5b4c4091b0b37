#include "model/mapped_load.h"

#include <fcntl.h>
#include <onnx/onnx_pb.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "core/low_precision.h"
#include "model/external_data.h"
#include "model/model.h"

namespace parity::model {

namespace fs = std::filesystem;

namespace {

// Field numbers of onnx.proto (ModelProto.graph, GraphProto.initializer, TensorProto.raw_data)
// and the protobuf wire types the scan needs.
constexpr uint64_t kModelGraphField = 7;
constexpr uint64_t kGraphInitializerField = 5;
constexpr uint64_t kTensorRawDataField = 9;
constexpr uint64_t kWireVarint = 0, kWireFixed64 = 1, kWireLengthDelimited = 2, kWireFixed32 = 5;

/// Where an initializer's raw_data lies in the file.
struct Span {
  size_t offset = 0;
  size_t size = 0;
};

/// Walks a protobuf message's fields; every read is bounds-checked, and a malformed or unexpected
/// encoding (groups, overlong varints) ends the walk with ok() false.
class WireReader {
 public:
  WireReader(const std::byte* data, size_t size) : data_(data), size_(size) {}

  bool done() const { return pos_ >= size_ || failed_; }
  bool ok() const { return !failed_; }
  size_t pos() const { return pos_; }

  /// Reads the next field's tag; for length-delimited fields also its length, leaving pos() at
  /// the payload. Returns false at the end or on malformed data.
  bool next(uint64_t& field, uint64_t& wire_type, size_t& length) {
    uint64_t tag = 0;
    if (!varint(tag)) return false;
    field = tag >> 3;
    wire_type = tag & 7;
    length = 0;
    if (wire_type == kWireLengthDelimited) {
      uint64_t n = 0;
      if (!varint(n) || n > size_ - pos_) return fail();
      length = static_cast<size_t>(n);
    }
    return field != 0 || fail();
  }

  /// Moves past the current field's payload.
  bool skip(uint64_t wire_type, size_t length) {
    uint64_t ignored = 0;
    switch (wire_type) {
      case kWireVarint: return varint(ignored);
      case kWireFixed64: return advance(8);
      case kWireFixed32: return advance(4);
      case kWireLengthDelimited: return advance(length);
      default: return fail();  // groups (deprecated, unused by onnx.proto) or garbage
    }
  }

 private:
  bool varint(uint64_t& value) {
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= size_) return fail();
      const auto byte = static_cast<uint8_t>(data_[pos_++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return true;
    }
    return fail();
  }
  bool advance(size_t n) {
    if (n > size_ - pos_) return fail();
    pos_ += n;
    return true;
  }
  bool fail() {
    failed_ = true;
    return false;
  }

  const std::byte* data_;
  size_t size_;
  size_t pos_ = 0;
  bool failed_ = false;
};

void append_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void append_bytes(std::string& out, const std::byte* data, size_t size) {
  out.append(reinterpret_cast<const char*>(data), size);
}

/// The protobuf bytes with the large raw_data fields of the main graph's initializers left out,
/// and per initializer (in order) the span left out, if any. nullopt: a layout this scan does not
/// handle (the caller parses the file whole).
struct Stripped {
  std::string bytes;
  std::vector<std::optional<Span>> spans;
};

class Stripper {
 public:
  Stripper(const std::byte* file, size_t min_bytes) : file_(file), min_bytes_(min_bytes) {}

  std::optional<Stripped> model(size_t size) {
    Stripped out;
    int graphs = 0;
    const bool ok = copy_fields(0, size, out.bytes, [&](uint64_t field, size_t at, size_t length, std::string& dst) {
      if (field != kModelGraphField) return false;
      if (++graphs > 1) return failed_ = true;  // merged graphs: leave it to protobuf
      std::string graph;
      if (!copy_fields(at, length, graph, [&](uint64_t f, size_t a, size_t l, std::string& g) {
            if (f != kGraphInitializerField) return false;
            return initializer(a, l, g, out.spans);
          }))
        return failed_ = true;
      append_delimited(dst, field, graph);
      return true;
    });
    if (!ok || failed_) return std::nullopt;
    return out;
  }

 private:
  /// Copies the fields of the message at [begin, begin + size) to `out`, except those `handle`
  /// takes (it writes what it wants instead and returns true). False on malformed data.
  template <typename Handle>
  bool copy_fields(size_t begin, size_t size, std::string& out, const Handle& handle) {
    WireReader reader(file_ + begin, size);
    uint64_t field = 0, wire_type = 0;
    size_t length = 0;
    while (!reader.done()) {
      const size_t start = reader.pos();
      if (!reader.next(field, wire_type, length)) break;
      if (wire_type == kWireLengthDelimited && handle(field, begin + reader.pos(), length, out)) {
        reader.skip(wire_type, length);
        continue;
      }
      if (!reader.skip(wire_type, length)) break;
      append_bytes(out, file_ + begin + start, reader.pos() - start);
    }
    return reader.ok() && !failed_;
  }

  /// One TensorProto of the graph's initializers, its raw_data left out when large.
  bool initializer(size_t at, size_t length, std::string& graph, std::vector<std::optional<Span>>& spans) {
    std::optional<Span> span;
    int raw_fields = 0;
    std::string tensor;
    const bool ok = copy_fields(at, length, tensor, [&](uint64_t field, size_t a, size_t l, std::string&) {
      if (field != kTensorRawDataField) return false;
      if (++raw_fields > 1) return failed_ = true;
      if (l < min_bytes_) return false;
      span = Span{a, l};
      return true;
    });
    if (!ok) return failed_ = true;
    spans.push_back(span);
    append_delimited(graph, kGraphInitializerField, tensor);
    return true;
  }

  static void append_delimited(std::string& out, uint64_t field, const std::string& payload) {
    append_varint(out, field << 3 | kWireLengthDelimited);
    append_varint(out, payload.size());
    out += payload;
  }

  const std::byte* file_;
  size_t min_bytes_;
  bool failed_ = false;
};

/// Asks for huge pages behind a large buffer before it is first written: one fault per 2 MiB
/// instead of per 4 KiB (page faults are most of the cost of reading weights into fresh memory),
/// and fewer TLB misses for the kernels that stream the weights. Only a hint; no error.
void prefer_huge_pages(void* data, size_t size) {
  constexpr size_t kHugePage = size_t{2} << 20;
  if (size < kHugePage) return;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data) & ~(page - 1);
  ::madvise(reinterpret_cast<void*>(begin), reinterpret_cast<uintptr_t>(data) + size - begin, MADV_HUGEPAGE);
}

/// Reads [offset, offset + size) of the file into `out`.
void read_at(const fs::path& path, size_t offset, size_t size, void* out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  PARITY_CHECK(fd >= 0, kNotFound, "cannot open '", path.string(), "': ", std::strerror(errno));
  auto* dst = static_cast<char*>(out);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, dst + done, size - done, static_cast<off_t>(offset + done));
    if (n <= 0) {
      ::close(fd);
      fail(ErrorCode::kIo, "reading '", path.string(), "' failed at byte ", offset + done);
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

/// The initializer's value read from its span of the file, or nullopt when its data type or size
/// needs tensor_from_proto's handling (the caller puts the bytes back into the proto).
///
/// Read into the tensor's own memory rather than pointing into the mapping: the kernels that use
/// large weights in place (a classifier's [N, K] rows) run 2-4x slower on a file mapping, whose
/// 4 KiB page-cache pages cost a TLB miss every few cache lines, than on anonymous memory, which
/// can be backed by huge pages. The resident size is the same (the mapping's pages would be
/// resident too once read), and pread leaves the mapping's pages untouched.
std::optional<Tensor> tensor_at(const onnx::TensorProto& proto, const Span& span, const fs::path& path) {
  const auto dtype = static_cast<DType>(proto.data_type());
  if (!is_valid_dtype(dtype) || dtype == DType::kString || is_low_precision(dtype) ||
      proto.data_location() == onnx::TensorProto::EXTERNAL)
    return std::nullopt;
  Shape shape;
  __int128 bytes = static_cast<__int128>(dtype_size(dtype));
  for (int64_t d : proto.dims()) {
    if (d < 0) return std::nullopt;
    shape.push_back(d);
    bytes *= d;
    if (bytes > static_cast<__int128>(span.size)) return std::nullopt;
  }
  if (bytes != static_cast<__int128>(span.size)) return std::nullopt;  // tensor_from_proto reports it
  Tensor t = Tensor::uninitialized(dtype, std::move(shape));
  prefer_huge_pages(t.raw_data(), span.size);
  read_at(path, span.offset, span.size, t.raw_data());
  return t;
}

}  // namespace

namespace {

MappedModel read_model_mapped(const fs::path& path, size_t min_bytes) {
  std::error_code ec;
  PARITY_CHECK(fs::exists(path, ec), kNotFound, "model file '", path.string(), "' does not exist");
  PARITY_CHECK(!fs::is_directory(path, ec), kInvalidArgument, "'", path.string(),
               "' is a folder; give the path of an .onnx file");
  const std::shared_ptr<MappedFile> file = MappedFile::open(path);
  const fs::path base_dir = path.parent_path();
  MappedModel out;
  auto initializers = std::make_shared<std::unordered_map<std::string, Tensor>>();
  out.initializers = initializers;

  std::optional<Stripped> stripped;
  if (file->size_bytes() > 0) stripped = Stripper(file->data(), min_bytes).model(file->size_bytes());
  if (!stripped) {
    // Not a layout the scan handles (or not protobuf at all): protobuf parses it, or says why not.
    Model whole = load_model_from_bytes(
                      std::string_view(reinterpret_cast<const char*>(file->data()), file->size_bytes()), base_dir,
                      path.string())
                      .value();
    out.proto = std::make_shared<onnx::ModelProto>(std::move(whole.proto()));
    return out;
  }
  Model model = load_model_from_bytes(stripped->bytes, base_dir, path.string()).value();
  out.proto = std::make_shared<onnx::ModelProto>(std::move(model.proto()));
  auto* graph = out.proto->mutable_graph();
  PARITY_CHECK(static_cast<size_t>(graph->initializer_size()) == stripped->spans.size(), kInternal,
               "'", path.string(), "': the initializer scan and protobuf disagree");
  for (size_t i = 0; i < stripped->spans.size(); ++i) {
    const std::optional<Span>& span = stripped->spans[i];
    if (!span) continue;
    onnx::TensorProto& proto = *graph->mutable_initializer(static_cast<int>(i));
    if (std::optional<Tensor> t = tensor_at(proto, *span, path)) {
      (*initializers)[proto.name()] = std::move(*t);
    } else {
      proto.set_raw_data(reinterpret_cast<const char*>(file->data() + span->offset), span->size);
    }
  }
  return out;
}

}  // namespace

Result<MappedModel> load_model_mapped(const fs::path& path, size_t min_bytes) {
  return capture_result<MappedModel>(
      [&] { return with_error_context({.file = path.string()}, [&] { return read_model_mapped(path, min_bytes); }); });
}

}  // namespace parity::model
