// Datasets for `parity validate`: samples read one at a time by index, so a dataset is never held
// in memory and any rank can read any share of it. Users implement DatasetReader for their own
// storage; open_dataset() reads the layouts parity knows.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/metadata.h"
#include "core/tensor_map.h"

namespace parity::tools::validation {

class DatasetReader {
 public:
  virtual ~DatasetReader() = default;
  /// "npy folder", "onnx test data", "inputs JSON", "image folder" (for the summary).
  virtual std::string kind() const = 0;
  virtual size_t size() const = 0;
  /// The sample's name in reports ("cat_001.png", "test_data_set_3"); unique in the dataset.
  virtual std::string name(size_t index) const = 0;
  /// The file (or folder) the sample comes from, named in errors about it.
  virtual std::string path(size_t index) const = 0;
  /// The sample's feed. Throws parity::Error naming path(index) when it cannot be read.
  virtual TensorMap read(size_t index) const = 0;
  /// A file `parity run --load-inputs` reads as exactly this sample, when the sample is one
  /// (an .npz file, a test_data_set_N folder); nullopt otherwise.
  virtual std::optional<std::string> rerun_inputs(size_t index) const {
    (void)index;
    return std::nullopt;
  }
  /// The outputs stored with the sample (an ONNX test-data set's output_K.pb), when the layout
  /// has them; `--reference-outputs dataset` compares with these.
  virtual std::optional<TensorMap> stored_outputs(size_t index) const {
    (void)index;
    return std::nullopt;
  }
};

/// Reference outputs stored per sample: DIR/<sample stem>.npz (one array per output) or
/// DIR/<sample stem>.npy (the model's only output). Throws kNotFound naming the files looked for.
TensorMap read_reference_outputs(const std::string& dir, const std::string& sample_name, const TensorMetadata& outputs);

/// How image samples become tensors: decoded (JPEG, PNG, WebP, TIFF, BMP, PNM), resized, scaled,
/// normalized per channel, laid out.
struct ImagePreprocessing {
  std::string layout = "NCHW";        // NCHW, NHWC, CHW, HWC
  std::string channel_order = "RGB";  // RGB, BGR, GRAY
  std::optional<std::pair<int64_t, int64_t>> resize;  // height, width (bilinear)
  double scale = 1.0 / 255.0;          // applied first: pixel * scale
  std::vector<double> mean{0.0};       // then (x - mean[c]) / std[c]; one value for all channels or one per channel
  std::vector<double> std{1.0};
};

struct DatasetOptions {
  /// The model's inputs: a sample holding one unnamed tensor (.npy, an image) feeds the only input.
  TensorMetadata inputs;
  ImagePreprocessing image;
  /// .npy/.npz files hold many samples stacked along this axis (every array of a file the same
  /// number); each sample keeps the axis, with size 1. Files are read once more when the dataset
  /// is opened, to count their samples.
  std::optional<int64_t> batch_axis;
};

/// Opens PATH as one of: a folder of .npy/.npz files (one sample each, in name order), an ONNX
/// test-data folder (test_data_set_N folders of input_K.pb, in N order), a Polygraphy inputs JSON
/// (one sample per iteration), or a folder of images. Throws kNotFound / kInvalidArgument naming
/// the path when it is none of them or is empty.
std::unique_ptr<DatasetReader> open_dataset(const std::string& path, const DatasetOptions& options);

}  // namespace parity::tools::validation
