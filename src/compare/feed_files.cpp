#include "compare/feed_files.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include <onnx/onnx_pb.h>

#include "core/formats/file_io.h"
#include "core/formats/npz.h"
#include "core/formats/polygraphy_json.h"
#include "core/logger.h"
#include "model/proto_convert.h"

namespace parity::compare {

namespace fs = std::filesystem;

namespace {
bool has_extension(const fs::path& p, const std::string& ext) {
  std::string e = p.extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  return e == ext;
}
// The <prefix>K.pb files (input_K.pb or output_K.pb) of an ONNX test-data folder, in K order.
std::vector<fs::path> onnx_data_files(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<long, fs::path>> numbered;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || name.rfind(prefix, 0) != 0 || !has_extension(entry.path(), ".pb")) continue;
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - 3);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    numbered.emplace_back(std::stol(digits), entry.path());
  }
  std::sort(numbered.begin(), numbered.end());
  std::vector<fs::path> files;
  for (auto& [k, p] : numbered) files.push_back(std::move(p));
  return files;
}

// One iteration from an ONNX test-data folder: each <prefix>K.pb is a TensorProto named after the
// input it feeds or the output it holds (as onnx's numpy_helper writes them).
TensorMap read_onnx_data_files(const std::vector<fs::path>& files, const std::string& prefix) {
  TensorMap tensors;
  for (const auto& file : files) {
    const std::string bytes = formats::read_binary_file(file.string());
    onnx::TensorProto proto;
    PARITY_CHECK(proto.ParseFromString(bytes), kInvalidModel, file.string(), " is not a serialized TensorProto");
    PARITY_CHECK(!proto.name().empty(), kInvalidModel, file.string(), " holds a tensor without a name; parity matches ",
                 prefix, "K.pb files to model tensors by name");
    tensors.set(proto.name(), model::tensor_from_proto(proto, file.parent_path()));
  }
  return tensors;
}

}  // namespace

std::optional<std::vector<TensorMap>> load_onnx_test_data(const std::string& path, OnnxTestData which) {
  const std::string prefix = which == OnnxTestData::kInputs ? "input_" : "output_";
  // input_K.pb / output_K.pb files, or test_data_set_N folders of them (one iteration each).
  if (auto files = onnx_data_files(path, prefix); !files.empty())
    return std::vector<TensorMap>{read_onnx_data_files(files, prefix)};
  std::vector<fs::path> sets;
  for (const auto& entry : fs::directory_iterator(path)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.rfind("test_data_set_", 0) == 0 && name.size() > 14 &&
        name.find_first_not_of("0123456789", 14) == std::string::npos)
      sets.push_back(entry.path());
  }
  if (sets.empty()) return std::nullopt;
  std::sort(sets.begin(), sets.end(), [](const fs::path& a, const fs::path& b) {
    return std::stol(a.filename().string().substr(14)) < std::stol(b.filename().string().substr(14));
  });
  std::vector<TensorMap> iterations;
  for (const auto& set : sets) {
    auto files = onnx_data_files(set, prefix);
    PARITY_CHECK(!files.empty(), kNotFound, "ONNX test data set '", set.string(), "' holds no ", prefix, "K.pb files");
    iterations.push_back(read_onnx_data_files(files, prefix));
  }
  logger().info("Loaded ", iterations.size(), " iteration(s) from the ONNX test data sets in ", path);
  return iterations;
}

std::vector<TensorMap> load_feeds(const std::string& path) {
  std::error_code ec;
  PARITY_CHECK(fs::exists(path, ec), kNotFound, "input data '", path, "' does not exist");
  if (fs::is_directory(path, ec)) {
    if (auto feeds = load_onnx_test_data(path, OnnxTestData::kInputs)) return *feeds;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(path))
      if (entry.is_regular_file() && has_extension(entry.path(), ".npz")) files.push_back(entry.path());
    PARITY_CHECK(!files.empty(), kNotFound, "folder '", path, "' holds no .npz files");
    std::sort(files.begin(), files.end());
    std::vector<TensorMap> feeds;
    for (const auto& f : files) feeds.push_back(read_npz(f.string()));
    logger().info("Loaded ", feeds.size(), " iteration(s) from ", files.size(), " .npz file(s) in ", path);
    return feeds;
  }
  if (has_extension(path, ".npz")) return {read_npz(path)};
  return read_inputs_json(path);
}

std::vector<TensorMap> load_feeds(const std::vector<std::string>& paths) {
  std::vector<TensorMap> all;
  for (const auto& p : paths) {
    auto feeds = load_feeds(p);
    all.insert(all.end(), std::make_move_iterator(feeds.begin()), std::make_move_iterator(feeds.end()));
  }
  return all;
}

void save_feeds(const std::string& path, const std::vector<TensorMap>& feeds) {
  if (has_extension(path, ".npz")) {
    PARITY_CHECK(feeds.size() == 1, kInvalidArgument, "an .npz file holds one iteration, but there are ",
                 feeds.size(), "; save to a .json file instead");
    write_npz(path, feeds[0]);
  } else {
    write_inputs_json(path, feeds);
  }
  logger().info("Saving inference input data to ", path);
}

Tensor cast_to_input_float_type(const Tensor& loaded, const TensorMeta& input) {
  const DType want = input.dtype;
  if (want == DType::kUndefined || loaded.dtype() == want || !is_floating(loaded.dtype()) || !is_floating(want))
    return loaded;
  logger().warning("Input tensor: ", input.name, " | Buffer dtype (", dtype_name(loaded.dtype()),
                   ") does not match expected input dtype (", dtype_name(want), "), attempting to cast.");
  return loaded.cast(want);
}

TensorMap cast_to_input_float_types(const TensorMap& feed, const TensorMetadata& inputs) {
  TensorMap fitted;
  for (const auto& [name, tensor] : feed) {
    const TensorMeta* input = inputs.find(name);
    fitted.set(name, input ? cast_to_input_float_type(tensor, *input) : tensor);
  }
  return fitted;
}

namespace {

// --load-inputs: the files' feeds, fitted to the model's float types once its inputs are known.
class LoadedFeeds : public FeedSource {
 public:
  explicit LoadedFeeds(std::vector<TensorMap> feeds) : feeds_(std::move(feeds)) {}
  void set_input_metadata(const TensorMetadata& metadata) override { metadata_ = metadata; }
  std::optional<TensorMap> feed(size_t index) override {
    if (index >= feeds_.size()) return std::nullopt;
    return metadata_ ? cast_to_input_float_types(feeds_[index], *metadata_) : feeds_[index];
  }

 private:
  std::vector<TensorMap> feeds_;
  std::optional<TensorMetadata> metadata_;
};

}  // namespace

std::unique_ptr<FeedSource> make_feed_source(const options::DataLoaderOptions& options, int64_t iterations) {
  if (!options.load_inputs.empty()) return std::make_unique<LoadedFeeds>(load_feeds(options.load_inputs));
  auto loader = std::make_unique<DataLoader>();
  if (options.seed) loader->seed(*options.seed);
  loader->iterations(iterations);
  for (const auto& r : options.val_ranges) loader->val_range(r.input, {r.min, r.max});
  for (const auto& s : options.input_shapes) loader->input_shape(s.input, s.shape);
  return loader;
}

}  // namespace parity::compare
