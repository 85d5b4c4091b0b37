#include "tools/validate/dataset.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include <onnx/onnx_pb.h>

#include "compare/backend_test_data.h"
#include "compare/feed_files.h"
#include "core/formats/file_io.h"
#include "core/formats/npy.h"
#include "core/formats/npz.h"
#include "core/formats/polygraphy_json.h"
#include "runtime/session.h"

namespace parity::tools::validation {
namespace {

namespace fs = std::filesystem;

std::string lower_extension(const fs::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

bool is_image_extension(const std::string& ext) {
  static const char* const kExtensions[] = {".jpg", ".jpeg", ".png", ".webp", ".tif", ".tiff", ".bmp", ".ppm", ".pgm"};
  return std::any_of(std::begin(kExtensions), std::end(kExtensions), [&](const char* e) { return ext == e; });
}

// Regular files of `dir` whose extension passes `keep`, in name order.
std::vector<fs::path> files_in(const fs::path& dir, const std::function<bool(const std::string&)>& keep) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && keep(lower_extension(entry.path()))) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// A tensor without a name of its own feeds the model's only input.
std::string only_input(const TensorMetadata& inputs, const std::string& path, const char* what) {
  PARITY_CHECK_AT(inputs.size() == 1, {.file = path}, kInvalidArgument, "sample '", path, "': ", what,
                  " feeds one input, but the model has ", inputs.size(),
                  "; store each sample as an .npz with one array per input");
  return inputs.begin()->name;
}

class FileListReader : public DatasetReader {
 public:
  explicit FileListReader(std::vector<fs::path> files) : files_(std::move(files)) {}
  size_t size() const override { return files_.size(); }
  std::string name(size_t index) const override { return files_.at(index).filename().string(); }
  std::string path(size_t index) const override { return files_.at(index).string(); }

 protected:
  std::vector<fs::path> files_;
};

// .npy (the only input) and .npz (one array per input) files.
class ArrayFolderReader final : public FileListReader {
 public:
  ArrayFolderReader(std::vector<fs::path> files, TensorMetadata inputs)
      : FileListReader(std::move(files)), inputs_(std::move(inputs)) {}
  std::string kind() const override { return "array folder"; }
  TensorMap read(size_t index) const override {
    const std::string file = path(index);
    if (lower_extension(files_.at(index)) == ".npz") return read_npz(file);
    TensorMap feed;
    feed.set(only_input(inputs_, file, "an .npy file"), read_npy(file));
    return feed;
  }
  std::optional<std::string> rerun_inputs(size_t index) const override {
    if (lower_extension(files_.at(index)) == ".npz") return path(index);
    return std::nullopt;
  }

 private:
  TensorMetadata inputs_;
};

// Item `index` of every array along `axis`, the axis kept with size 1.
Tensor slice_item(const Tensor& t, int64_t axis, int64_t index) {
  Shape shape = t.shape();
  const int64_t count = shape[static_cast<size_t>(axis)];
  int64_t outer = 1, inner = static_cast<int64_t>(dtype_size(t.dtype()));
  for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  for (int64_t d = axis + 1; d < t.rank(); ++d) inner *= shape[static_cast<size_t>(d)];
  shape[static_cast<size_t>(axis)] = 1;
  Tensor out(t.dtype(), shape);
  const auto* src = static_cast<const std::byte*>(t.raw_data());
  auto* dst = static_cast<std::byte*>(out.raw_data());
  for (int64_t o = 0; o < outer; ++o)
    std::copy_n(src + (o * count + index) * inner, inner, dst + o * inner);
  return out;
}

// Arrays holding many samples along a stated axis: sample i is item j of file k.
class BatchedArrayReader final : public DatasetReader {
 public:
  BatchedArrayReader(std::vector<fs::path> files, TensorMetadata inputs, int64_t axis)
      : files_(std::move(files), std::move(inputs)), axis_(axis) {
    for (size_t f = 0; f < files_.size(); ++f) {
      const TensorMap arrays = files_.read(f);
      std::optional<int64_t> count;
      for (const auto& [name, t] : arrays) {
        PARITY_CHECK(axis_ < t.rank(), kInvalidArgument, "sample file '", files_.path(f), "': array '", name, "' has ",
                     t.rank(), " axes, no --batch-axis ", axis_);
        PARITY_CHECK(!count || *count == t.dim(axis_), kInvalidArgument, "sample file '", files_.path(f),
                     "': its arrays hold different numbers of samples along axis ", axis_);
        count = t.dim(axis_);
      }
      for (int64_t j = 0; j < count.value_or(0); ++j) items_.emplace_back(f, j);
    }
  }
  std::string kind() const override { return "batched array folder"; }
  size_t size() const override { return items_.size(); }
  std::string name(size_t index) const override {
    return str_cat(files_.name(items_.at(index).first), "[", items_.at(index).second, "]");
  }
  std::string path(size_t index) const override { return files_.path(items_.at(index).first); }
  TensorMap read(size_t index) const override {
    const auto [file, item] = items_.at(index);
    if (cached_file_ != file) {  // samples are read in order: one file read per file
      cached_ = files_.read(file);
      cached_file_ = file;
    }
    TensorMap sample;
    for (const auto& [name, t] : cached_) sample.set(name, slice_item(t, axis_, item));
    return sample;
  }

 private:
  ArrayFolderReader files_;
  int64_t axis_;
  std::vector<std::pair<size_t, int64_t>> items_;  // (file, item)
  mutable std::optional<size_t> cached_file_;
  mutable TensorMap cached_;
};

class OnnxTestDataReader final : public FileListReader {
 public:
  explicit OnnxTestDataReader(std::vector<fs::path> sets) : FileListReader(std::move(sets)) {}
  std::string kind() const override { return "onnx test data"; }
  TensorMap read(size_t index) const override {
    auto feeds = compare::load_onnx_test_data(path(index), compare::OnnxTestData::kInputs);
    PARITY_CHECK_AT(feeds && feeds->size() == 1, {.file = path(index)}, kInvalidModel, "sample '", path(index),
                    "' holds no input_K.pb files");
    return std::move(feeds->front());
  }
  std::optional<std::string> rerun_inputs(size_t index) const override { return path(index); }
  std::optional<TensorMap> stored_outputs(size_t index) const override {
    auto outputs = compare::load_onnx_test_data(path(index), compare::OnnxTestData::kOutputs);
    PARITY_CHECK_AT(outputs && outputs->size() == 1, {.file = path(index)}, kNotFound, "sample '", path(index),
                    "' holds no output_K.pb files");
    return std::move(outputs->front());
  }
};

// Polygraphy's inputs JSON is one document: it is read once, whole (use a folder for big datasets).
class InputsJsonReader final : public DatasetReader {
 public:
  explicit InputsJsonReader(std::string file) : file_(std::move(file)), feeds_(read_inputs_json(file_)) {}
  std::string kind() const override { return "inputs JSON"; }
  size_t size() const override { return feeds_.size(); }
  std::string name(size_t index) const override { return str_cat("iteration_", index); }
  std::string path(size_t index) const override { return str_cat(file_, "[", index, "]"); }
  TensorMap read(size_t index) const override { return feeds_.at(index).clone(); }

 private:
  std::string file_;
  std::vector<TensorMap> feeds_;
};

// Images decoded and resized by parity's own kernels (ImageDecoder, Resize) in a small graph.
class ImageFolderReader final : public FileListReader {
 public:
  ImageFolderReader(std::vector<fs::path> files, TensorMetadata inputs, ImagePreprocessing pre)
      : FileListReader(std::move(files)), pre_(std::move(pre)),
        input_(only_input(inputs, files_.empty() ? std::string() : files_.front().string(), "an image")),
        session_(runtime::Session::create(decode_model()).value()) {
    const size_t channels = pre_.channel_order == "GRAY" ? 1 : 3;
    for (auto* values : {&pre_.mean, &pre_.std})
      PARITY_CHECK(values->size() == 1 || values->size() == channels, kInvalidArgument, "image preprocessing: ",
                   values == &pre_.mean ? "--mean" : "--std", " has ", values->size(), " values for ", channels,
                   " channel(s)");
    for (double s : pre_.std) PARITY_CHECK(s != 0, kInvalidArgument, "image preprocessing: --std values must not be 0");
  }
  std::string kind() const override { return "image folder"; }

  TensorMap read(size_t index) const override {
    const std::string file = path(index);
    const std::string bytes = with_error_context({.file = file}, [&] { return formats::read_binary_file(file); });
    TensorMap feed{{"encoded", Tensor::from_bytes(DType::kUInt8, {static_cast<int64_t>(bytes.size())}, bytes.data(), bytes.size())}};
    TensorMap decoded;
    try {
      decoded = session_.run(feed);
    } catch (const Error& e) {
      ErrorContext context = e.context();
      context.file = file;
      throw Error(ErrorCode::kInvalidModel, str_cat("sample '", file, "': ", e.what()), std::move(context));
    }
    TensorMap out;
    out.set(input_, lay_out(decoded.at("pixels")));
    return out;
  }

 private:
  onnx::ModelProto decode_model() const {
    onnx::ModelProto model;
    model.set_ir_version(9);
    model.add_opset_import()->set_version(20);
    onnx::GraphProto* graph = model.mutable_graph();
    graph->set_name("decode_image");
    auto* in = graph->add_input();
    in->set_name("encoded");
    in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::UINT8);
    in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("bytes");
    auto* decode = graph->add_node();
    decode->set_op_type("ImageDecoder");
    decode->add_input("encoded");
    decode->add_output("decoded");
    auto* format = decode->add_attribute();
    format->set_name("pixel_format");
    format->set_type(onnx::AttributeProto::STRING);
    format->set_s(pre_.channel_order == "GRAY" ? "Grayscale" : pre_.channel_order);
    auto* cast = graph->add_node();
    cast->set_op_type("Cast");
    cast->add_input("decoded");
    cast->add_output(pre_.resize ? "float_pixels" : "pixels");
    auto* to = cast->add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto::INT);
    to->set_i(onnx::TensorProto::FLOAT);
    if (pre_.resize) {
      auto* sizes = graph->add_initializer();
      sizes->set_name("sizes");
      sizes->set_data_type(onnx::TensorProto::INT64);
      sizes->add_dims(3);
      sizes->add_int64_data(pre_.resize->first);
      sizes->add_int64_data(pre_.resize->second);
      sizes->add_int64_data(pre_.channel_order == "GRAY" ? 1 : 3);
      auto* resize = graph->add_node();
      resize->set_op_type("Resize");
      for (const char* name : {"float_pixels", "", "", "sizes"}) resize->add_input(name);
      resize->add_output("pixels");
      auto* mode = resize->add_attribute();
      mode->set_name("mode");
      mode->set_type(onnx::AttributeProto::STRING);
      mode->set_s("linear");
    }
    auto* out = graph->add_output();
    out->set_name("pixels");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    return model;
  }

  // [H, W, C] float pixels -> the model's layout, scaled and normalized.
  Tensor lay_out(const Tensor& hwc) const {
    const int64_t h = hwc.dim(0), w = hwc.dim(1), c = hwc.dim(2);
    const bool planar = pre_.layout == "NCHW" || pre_.layout == "CHW";
    const bool batched = pre_.layout.front() == 'N';
    Shape shape = planar ? Shape{c, h, w} : Shape{h, w, c};
    if (batched) shape.insert(shape.begin(), 1);
    Tensor out(DType::kFloat32, shape);
    const float* src = hwc.data<float>();
    float* dst = out.data<float>();
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int64_t k = 0; k < c; ++k) {
          const double mean = pre_.mean[pre_.mean.size() == 1 ? 0 : static_cast<size_t>(k)];
          const double std = pre_.std[pre_.std.size() == 1 ? 0 : static_cast<size_t>(k)];
          const double v = (src[(y * w + x) * c + k] * pre_.scale - mean) / std;
          dst[planar ? (k * h + y) * w + x : (y * w + x) * c + k] = static_cast<float>(v);
        }
    return out;
  }

  ImagePreprocessing pre_;
  std::string input_;
  runtime::Session session_;
};

}  // namespace

TensorMap read_reference_outputs(const std::string& dir, const std::string& sample_name, const TensorMetadata& outputs) {
  const fs::path stem = fs::path(dir) / fs::path(sample_name).stem();
  std::error_code ec;
  if (fs::exists(stem.string() + ".npz", ec)) return read_npz(stem.string() + ".npz");
  if (fs::exists(stem.string() + ".npy", ec)) {
    PARITY_CHECK(outputs.size() == 1, kInvalidArgument, "reference output '", stem.string(), ".npy' holds one output, "
                 "but the model has ", outputs.size(), "; store an .npz with one array per output");
    TensorMap out;
    out.set(outputs.begin()->name, read_npy(stem.string() + ".npy"));
    return out;
  }
  throw Error(ErrorCode::kNotFound, str_cat("--reference-outputs: no ", stem.string(), ".npz or .npy for sample '",
                                            sample_name, "'"));
}

std::unique_ptr<DatasetReader> open_dataset(const std::string& path, const DatasetOptions& options) {
  std::error_code ec;
  PARITY_CHECK(fs::exists(path, ec), kNotFound, "dataset '", path, "' does not exist");
  if (!fs::is_directory(path, ec)) {
    PARITY_CHECK(lower_extension(path) == ".json", kInvalidArgument, "dataset '", path,
                 "' is a file but not a Polygraphy inputs JSON (.json); a dataset is a folder of .npy/.npz files, "
                 "images or test_data_set_N folders, or an inputs JSON");
    auto reader = std::make_unique<InputsJsonReader>(path);
    PARITY_CHECK(reader->size() > 0, kInvalidArgument, "dataset '", path, "' holds no iterations");
    return reader;
  }
  if (auto sets = compare::backend_data_sets(path); !sets.empty())
    return std::make_unique<OnnxTestDataReader>(std::move(sets));
  auto arrays = files_in(path, [](const std::string& ext) { return ext == ".npy" || ext == ".npz"; });
  auto images = files_in(path, is_image_extension);
  PARITY_CHECK(arrays.empty() || images.empty(), kInvalidArgument, "dataset '", path, "' mixes .npy/.npz files (",
               arrays.size(), ") and images (", images.size(), "); keep one kind per folder");
  if (!arrays.empty() && options.batch_axis) {
    PARITY_CHECK(*options.batch_axis >= 0, kInvalidArgument, "--batch-axis must be >= 0, got ", *options.batch_axis);
    return std::make_unique<BatchedArrayReader>(std::move(arrays), options.inputs, *options.batch_axis);
  }
  PARITY_CHECK(!options.batch_axis, kInvalidArgument, "--batch-axis: dataset '", path,
               "' holds no .npy/.npz files");
  if (!arrays.empty()) return std::make_unique<ArrayFolderReader>(std::move(arrays), options.inputs);
  if (!images.empty()) return std::make_unique<ImageFolderReader>(std::move(images), options.inputs, options.image);
  throw Error(ErrorCode::kInvalidArgument,
              str_cat("dataset '", path, "' holds no samples: expected .npy/.npz files, images (JPEG, PNG, WebP, TIFF, "
                      "BMP, PNM) or test_data_set_N folders"));
}

}  // namespace parity::tools::validation
