// Loading and saving feeds (inference inputs) as files: Polygraphy's inputs JSON, .npz archives
// (one iteration each) and folders of .npz files (one iteration per file, in name order).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compare/data_loader.h"
#include "core/metadata.h"
#include "core/tensor_map.h"
#include "options/data_loader_args.h"

namespace parity::compare {

/// Which files of an ONNX test-data folder to read.
enum class OnnxTestData { kInputs, kOutputs };
/** \var OnnxTestData::kInputs
    The input_K.pb files. */
/** \var OnnxTestData::kOutputs
    The output_K.pb files. */
/// Reads the folder `path` as ONNX test data: input_K.pb (or output_K.pb) TensorProtos named after
/// their tensors, or test_data_set_N folders of them (one iteration each, in N order). nullopt when
/// the folder holds neither; throws kInvalidModel / kNotFound naming the file for bad data.
std::optional<std::vector<TensorMap>> load_onnx_test_data(const std::string& path, OnnxTestData which);

/// Loads the iterations stored at `path`: an ONNX test-data folder (input_K.pb files named after
/// their inputs, or test_data_set_N folders of them, one iteration each), an inputs JSON list
/// (Polygraphy --save-inputs), an
/// .npz archive or a folder of .npz files. Throws kNotFound / kInvalidModel naming the path.
std::vector<TensorMap> load_feeds(const std::string& path);
/// Loads several paths and concatenates their iterations (Polygraphy's --load-inputs).
std::vector<TensorMap> load_feeds(const std::vector<std::string>& paths);
/// Saves feeds as Polygraphy's inputs JSON (.json) or, for a path ending in .npz with a single
/// iteration, as an .npz archive.
void save_feeds(const std::string& path, const std::vector<TensorMap>& feeds);

/// A loaded input fitted to the input it feeds, as Polygraphy fits loaded data: a floating-point
/// buffer of another floating-point type than `input` expects (e.g. numpy's default float64 for a
/// float32 input) is cast to it, with a warning naming the input. Anything else is returned as is.
Tensor cast_to_input_float_type(const Tensor& loaded, const TensorMeta& input);

/// cast_to_input_float_type for every tensor of `feed` that names an input of `inputs`.
TensorMap cast_to_input_float_types(const TensorMap& feed, const TensorMetadata& inputs);

/// The feeds the data-loader options ask for: the iterations of --load-inputs (cast to the inputs'
/// float types once set_input_metadata names them), or `iterations` generated feeds with the
/// options' seed, value ranges and input shapes.
std::unique_ptr<FeedSource> make_feed_source(const options::DataLoaderOptions& options, int64_t iterations);

}  // namespace parity::compare
