#include "model/model.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <climits>
#include <cstdio>
#include <fstream>
#include <limits>
#include <functional>
#include <set>

#include "core/formats/file_io.h"
#include "core/logger.h"
#include "model/external_data.h"
#include "model/proto_convert.h"
#include "model/schemas/newer_onnx.h"

namespace parity::model {

namespace fs = std::filesystem;

// Protobuf refuses messages of 2 GiB and more.
constexpr uint64_t kProtobufLimit = static_cast<uint64_t>(INT_MAX);
// Protobuf's own default nesting limit, stated so the error can name it.
constexpr int kProtobufRecursionLimit = 100;

Model::Model() : proto_(std::make_unique<onnx::ModelProto>()) {}
Model::Model(std::unique_ptr<onnx::ModelProto> proto, fs::path base_dir)
    : proto_(proto ? std::move(proto) : std::make_unique<onnx::ModelProto>()), base_dir_(std::move(base_dir)) {}
Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::Model(const Model& other)
    : proto_(std::make_unique<onnx::ModelProto>(*other.proto_)),
      base_dir_(other.base_dir_),
      path_(other.path_),
      external_data_ignored_(other.external_data_ignored_) {}
Model& Model::operator=(const Model& other) {
  if (this != &other) {
    proto_ = std::make_unique<onnx::ModelProto>(*other.proto_);
    base_dir_ = other.base_dir_;
    path_ = other.path_;
    external_data_ignored_ = other.external_data_ignored_;
  }
  return *this;
}

std::string normalize_domain(const std::string& domain) { return domain == "ai.onnx" ? std::string() : domain; }

int64_t Model::opset(const std::string& domain) const {
  const std::string want = normalize_domain(domain);
  for (const auto& op : proto_->opset_import())
    if (normalize_domain(op.domain()) == want) return op.version();
  return 0;
}

namespace {

/// Calls fn on every TensorProto of a graph: initializers, sparse initializers, attribute tensors,
/// recursively through subgraphs.
void for_each_tensor(onnx::GraphProto& graph, const std::function<void(onnx::TensorProto&)>& fn);

void for_each_tensor_in_attribute(onnx::AttributeProto& attr, const std::function<void(onnx::TensorProto&)>& fn) {
  if (attr.has_t()) fn(*attr.mutable_t());
  for (auto& t : *attr.mutable_tensors()) fn(t);
  if (attr.has_sparse_tensor()) {
    fn(*attr.mutable_sparse_tensor()->mutable_values());
    fn(*attr.mutable_sparse_tensor()->mutable_indices());
  }
  if (attr.has_g()) for_each_tensor(*attr.mutable_g(), fn);
  for (auto& g : *attr.mutable_graphs()) for_each_tensor(g, fn);
}

void for_each_tensor(onnx::GraphProto& graph, const std::function<void(onnx::TensorProto&)>& fn) {
  for (auto& t : *graph.mutable_initializer()) fn(t);
  for (auto& s : *graph.mutable_sparse_initializer()) {
    fn(*s.mutable_values());
    fn(*s.mutable_indices());
  }
  for (auto& node : *graph.mutable_node())
    for (auto& attr : *node.mutable_attribute()) for_each_tensor_in_attribute(attr, fn);
}

void for_each_tensor(onnx::ModelProto& model, const std::function<void(onnx::TensorProto&)>& fn) {
  if (model.has_graph()) for_each_tensor(*model.mutable_graph(), fn);
  for (auto& f : *model.mutable_functions())
    for (auto& node : *f.mutable_node())
      for (auto& attr : *node.mutable_attribute()) for_each_tensor_in_attribute(attr, fn);
}

Model parse_model(const void* data, size_t size, const fs::path& base_dir, const std::string& label,
                  bool check_external_data = true) {
  register_newer_onnx_schemas();
  PARITY_CHECK(size > 0, kInvalidModel, "'", label, "' is empty, not an ONNX model");
  PARITY_CHECK(size <= kProtobufLimit, kInvalidModel, "'", label, "' is ", size,
               " bytes; protobuf cannot parse messages of 2 GiB or more (store the weights as external data)");
  auto proto = std::make_unique<onnx::ModelProto>();
  google::protobuf::io::ArrayInputStream stream(data, static_cast<int>(size));
  google::protobuf::io::CodedInputStream coded(&stream);
  coded.SetTotalBytesLimit(INT_MAX);
  // Bounds the recursion of every later walk over subgraphs (IR conversion, shape inference).
  coded.SetRecursionLimit(kProtobufRecursionLimit);
  // Protobuf logs parse failures to stderr itself; ours is the one line that matters.
  const bool parsed = proto->ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  PARITY_CHECK(parsed, kInvalidModel, "'", label,
               "' is not a valid ONNX model (the protobuf data is truncated or corrupt, or nested deeper than "
               "protobuf's limit of ", kProtobufRecursionLimit, " messages, e.g. subgraphs within subgraphs)");
  PARITY_CHECK(proto->has_graph() && proto->ir_version() > 0, kInvalidModel, "'", label,
               "' is not an ONNX model (no ", proto->has_graph() ? "IR version" : "graph", " in the data)");
  Model model(std::move(proto), base_dir);
  // Check external data up front so a broken reference is reported at load, not mid-run.
  if (check_external_data)
    for_each_tensor(model.proto(), [&](onnx::TensorProto& t) {
      if (has_external_data(t) && !is_weightless(t)) validate_external_tensor(t, base_dir);
    });
  for (const auto& w : newer_than_library_warnings(model.proto())) logger().warning(label, ": ", w);
  return model;
}

}  // namespace

bool Model::has_external_data() const {
  bool found = false;
  for_each_tensor(*proto_, [&](onnx::TensorProto& t) { found = found || model::has_external_data(t); });
  return found;
}

Result<Model> load_model(const fs::path& path) { return load_model(path, fs::path()); }

Result<Model> load_model(const fs::path& path, const fs::path& external_data_dir) {
  return load_model(path, LoadOptions{.external_data_dir = external_data_dir});
}

namespace {

Model read_model_file(const fs::path& path, const LoadOptions& options) {
  const fs::path& external_data_dir = options.external_data_dir;
  std::error_code ec;
  PARITY_CHECK(fs::exists(path, ec), kNotFound, "model file '", path.string(), "' does not exist");
  PARITY_CHECK(!fs::is_directory(path, ec), kInvalidArgument, "'", path.string(),
               "' is a folder; give the path of an .onnx file");
  auto file = MappedFile::open(path);
  google::protobuf::LogSilencer quiet;
  std::error_code dir_ec;
  PARITY_CHECK_AT(external_data_dir.empty() || fs::is_directory(external_data_dir, dir_ec),
                  {.file = external_data_dir.string()}, kNotFound, "external data folder '",
                  external_data_dir.string(), "' does not exist");
  fs::path base = external_data_dir.empty() ? path.parent_path() : external_data_dir;
  if (base.empty()) base = ".";
  Model model = parse_model(file->data(), file->size_bytes(), base, path.string(), !options.ignore_external_data);
  model.set_external_data_ignored(options.ignore_external_data);
  model.set_path(path);
  return model;
}

}  // namespace

Result<Model> load_model(const fs::path& path, const LoadOptions& options) {
  return capture_result<Model>(
      [&] { return with_error_context({.file = path.string()}, [&] { return read_model_file(path, options); }); });
}

Result<Model> load_model_from_bytes(std::string_view bytes, const fs::path& base_dir, const std::string& label) {
  return capture_result<Model>([&] {
    google::protobuf::LogSilencer quiet;
    return parse_model(bytes.data(), bytes.size(), base_dir.empty() ? fs::path(".") : base_dir, label);
  });
}

std::string serialize_model(const Model& model) {
  const size_t size = model.proto().ByteSizeLong();
  PARITY_CHECK(size <= kProtobufLimit, kInvalidModel, "the model is ", size,
               " bytes; protobuf cannot hold 2 GiB or more (save the weights as external data)");
  std::string out;
  PARITY_CHECK(model.proto().SerializeToString(&out), kInternal, "protobuf failed to serialize the model");
  return out;
}

namespace {

/// The bytes a tensor's dims and type call for, saturating at INT64_MAX: the dims come from the
/// file, so a crafted product overflows (fuzz_model_save), and every caller then refuses a size
/// no file or protobuf can have.
int64_t tensor_bytes(const onnx::TensorProto& t) {
  const auto dtype = static_cast<DType>(t.data_type());
  if (!is_valid_dtype(dtype) || dtype == DType::kString) return 0;
  int64_t n = static_cast<int64_t>(dtype_size(dtype));
  for (int64_t d : t.dims())
    if (__builtin_mul_overflow(n, std::max<int64_t>(d, 0), &n)) return std::numeric_limits<int64_t>::max();
  return n;
}

std::string sanitized_file_name(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  if (out.empty() || out[0] == '.') out = "tensor_" + out;
  return out;
}

/// Files written under temporary names, renamed into place only when everything succeeded.
// Copies `length` bytes at `offset` of an external-data file into `out` with pread, leaving holes
// as holes: a mapped copy would make every page resident (gigabytes for a large model), and sparse
// weight files stay sparse.
void copy_file_region(const fs::path& source, int64_t offset, int64_t length, std::ofstream& out,
                      const std::string& tensor) {
  const int fd = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  PARITY_CHECK(fd >= 0, kNotFound, "cannot open '", source.string(), "' (external data of tensor '", tensor, "')");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  constexpr int64_t kChunk = int64_t{8} << 20;
  std::vector<char> buffer(static_cast<size_t>(std::min(kChunk, std::max<int64_t>(length, 1))));
  const int64_t end = offset + length;
  int64_t pos = offset;
  bool ends_in_hole = false;
  while (pos < end) {
    // Without SEEK_DATA support (or past the last data) lseek fails or lands at/after `end`.
    off_t data = ::lseek(fd, pos, SEEK_DATA);
    if (data < 0) data = errno == ENXIO ? end : pos;
    if (data > pos) {
      const int64_t skip = std::min<int64_t>(data, end) - pos;
      out.seekp(skip, std::ios::cur);
      pos += skip;
      ends_in_hole = pos == end;
      continue;
    }
    off_t hole = ::lseek(fd, pos, SEEK_HOLE);
    if (hole < 0 || hole > end) hole = end;
    while (pos < hole) {
      const ssize_t n = ::pread(fd, buffer.data(), static_cast<size_t>(std::min<int64_t>(kChunk, hole - pos)), pos);
      PARITY_CHECK(n > 0, kIo, "reading '", source.string(), "' (external data of tensor '", tensor, "') failed");
      out.write(buffer.data(), n);
      pos += n;
    }
    ends_in_hole = false;
  }
  if (ends_in_hole) {  // materialize the file's length: the last byte of a hole is a zero
    out.seekp(-1, std::ios::cur);
    out.put('\0');
  }
  PARITY_CHECK(out.good(), kIo, "writing external data of tensor '", tensor, "' failed");
}

/// Files written under temporary names (formats::AtomicFile), renamed into place only when
/// everything succeeded; the model file is opened last, so it is renamed last.
class StagedFiles {
 public:
  std::ofstream& open(const fs::path& final_path) {
    files_.push_back(std::make_unique<formats::AtomicFile>(final_path.string()));
    streams_.emplace_back(std::make_unique<std::ofstream>(files_.back()->temp_path(), std::ios::binary | std::ios::trunc));
    PARITY_CHECK(*streams_.back(), kIo, "cannot write '", final_path.string(), "'");
    return *streams_.back();
  }
  void commit() {
    for (size_t i = 0; i < streams_.size(); ++i) {
      streams_[i]->flush();
      PARITY_CHECK(streams_[i]->good(), kIo, "writing '", files_[i]->path(), "' failed (disk full?)");
      streams_[i]->close();
    }
    for (auto& file : files_) file->commit();
  }

 private:
  std::vector<std::unique_ptr<formats::AtomicFile>> files_;
  std::vector<std::unique_ptr<std::ofstream>> streams_;
};

void set_external(onnx::TensorProto& t, const std::string& location, int64_t offset, int64_t length) {
  t.clear_raw_data();
  t.clear_float_data();
  t.clear_double_data();
  t.clear_int32_data();
  t.clear_int64_data();
  t.clear_uint64_data();
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, const std::string& value) {
    auto* kv = t.add_external_data();
    kv->set_key(key);
    kv->set_value(value);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  add("length", std::to_string(length));
}

void save_impl(const Model& model, const fs::path& path, const SaveOptions& options) {
  PARITY_CHECK(!path.empty() && path.has_filename(), kInvalidArgument, "cannot save a model to '", path.string(), "'");
  fs::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  fs::create_directories(dir, ec);
  PARITY_CHECK(fs::is_directory(dir), kIo, "cannot create folder '", dir.string(), "'");

  onnx::ModelProto out(model.proto());
  const auto goes_external = [&](const onnx::TensorProto& t) {
    return options.external_data && t.data_type() != onnx::TensorProto::STRING &&
           static_cast<size_t>(tensor_bytes(t)) >= options.size_threshold;
  };

  // Refuse before reading anything when inlining external tensors would pass the protobuf limit.
  uint64_t inlined = 0;
  for_each_tensor(out, [&](onnx::TensorProto& t) {
    if (has_external_data(t) && !goes_external(t) && !is_weightless(t) && !model.external_data_ignored())
      inlined = std::min<uint64_t>(inlined + static_cast<uint64_t>(tensor_bytes(t)), std::numeric_limits<int64_t>::max());
  });
  PARITY_CHECK(out.ByteSizeLong() + inlined <= kProtobufLimit, kInvalidArgument, "the model would be ",
               out.ByteSizeLong() + inlined,
               " bytes, past protobuf's 2 GiB limit; save it with external data (--external-data)");

  StagedFiles staged;
  std::string one_file = options.location.empty() ? path.filename().string() + ".data" : options.location;
  if (options.external_data && options.all_tensors_to_one_file)
    resolve_external_location(one_file, dir, "(save location)");  // same escape rules as loading
  std::ofstream* shared_stream = nullptr;
  int64_t shared_offset = 0;
  std::set<std::string> used_names;
  bool kept_reference_logged = false;

  for_each_tensor(out, [&](onnx::TensorProto& t) {
    if (is_weightless(t)) return;  // stripped: no bytes to move, written as it is
    const bool external_now = has_external_data(t);
    if (external_now && model.external_data_ignored()) {
      // Loaded without its weights: the reference is all there is; keep it (Polygraphy does the same).
      if (!kept_reference_logged) logger().warning("the model was loaded with --ignore-external-data: its external "
                                                   "tensors are saved as references to the original weight files");
      kept_reference_logged = true;
      return;
    }
    if (!goes_external(t)) {
      if (external_now) {
        Tensor values = tensor_from_proto(t, model.base_dir());
        const std::string name = t.name();
        const std::string doc = t.doc_string();
        tensor_to_proto(values, &t, name);
        if (!doc.empty()) t.set_doc_string(doc);
      }
      return;
    }
    // Raw bytes of the tensor (raw_data or typed fields); external ones are copied file to file below.
    Tensor values;
    const void* bytes = nullptr;
    const int64_t length = tensor_bytes(t);
    if (external_now) {
      validate_external_tensor(t, model.base_dir());
    } else if (t.has_raw_data()) {
      bytes = t.raw_data().data();
      PARITY_CHECK(static_cast<int64_t>(t.raw_data().size()) == length, kInvalidModel, "tensor '", t.name(),
                   "' has ", t.raw_data().size(), " bytes of raw data but its shape needs ", length);
    } else {
      values = tensor_from_proto(t, fs::path());
      bytes = values.raw_data();
    }
    std::string location;
    int64_t offset = 0;
    std::ofstream* stream = nullptr;
    if (options.all_tensors_to_one_file) {
      if (!shared_stream) shared_stream = &staged.open(dir / one_file);
      stream = shared_stream;
      // Align every tensor so mapped tensors can be used in place by typed kernels.
      constexpr int64_t kAlign = 64;
      const int64_t pad = (kAlign - shared_offset % kAlign) % kAlign;
      static const char zeros[kAlign] = {};
      stream->write(zeros, pad);
      shared_offset += pad;
      location = one_file;
      offset = shared_offset;
      shared_offset += length;
    } else {
      location = sanitized_file_name(t.name());
      for (int n = 1; used_names.count(location); ++n) location = sanitized_file_name(t.name()) + "_" + std::to_string(n);
      used_names.insert(location);
      stream = &staged.open(dir / location);
    }
    if (external_now) {
      const ExternalDataRef ref = parse_external_data(t);
      copy_file_region(resolve_external_location(ref.location, model.base_dir(), t.name()), ref.offset, length,
                       *stream, t.name());
    } else {
      stream->write(static_cast<const char*>(bytes), length);
    }
    PARITY_CHECK(stream->good(), kIo, "writing external data for tensor '", t.name(), "' failed");
    set_external(t, location, offset, length);
  });

  const std::string bytes = serialize_model(Model(std::make_unique<onnx::ModelProto>(std::move(out))));
  std::ofstream& model_stream = staged.open(path);
  model_stream.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  staged.commit();
}

}  // namespace

Status save_model(const Model& model, const fs::path& path, const SaveOptions& options) {
  return capture_status([&] { save_impl(model, path, options); });
}

int64_t max_known_opset(const std::string& domain) {
  register_newer_onnx_schemas();
  const auto& map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find(normalize_domain(domain));
  return it == map.end() ? 0 : it->second.second;
}

int64_t max_known_ir_version() { return onnx::IR_VERSION; }

std::vector<std::string> newer_than_library_warnings(const onnx::ModelProto& model) {
  std::vector<std::string> warnings;
  if (model.ir_version() > max_known_ir_version())
    warnings.push_back(str_cat("IR version ", model.ir_version(), " is newer than this build's libonnx (",
                               max_known_ir_version(), "); checks and shape inference may be incomplete"));
  for (const auto& op : model.opset_import()) {
    const int64_t known = max_known_opset(op.domain());
    if (known > 0 && op.version() > known)
      warnings.push_back(str_cat("opset ", op.version(), " of domain '",
                                 op.domain().empty() ? std::string("ai.onnx") : op.domain(),
                                 "' is newer than this build's ONNX schemas (up to ", known,
                                 "); checks and shape inference may be incomplete"));
  }
  return warnings;
}

}  // namespace parity::model
