// The ONNX backend test layout (onnx/backend/test/data): one folder per test holding model.onnx
// and test_data_set_N/{input,output}_K.pb, and parity's skip file for it. One loader for
// `parity test onnx-backend` and every test that runs backend cases.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/session.h"
#include "runtime/value.h"

#include "model/onnx_fwd.h"

namespace parity::compare {

/// The test_data_set_N folders of a test folder, in N order (empty when there are none).
std::vector<std::filesystem::path> backend_data_sets(const std::filesystem::path& test_dir);

/// Reads one .pb file as the kind of value `type` declares: a TensorProto, SequenceProto or
/// OptionalProto (as ONNX's backend runner does). bfloat16 data stored as uint16 bit patterns (numpy
/// has no bfloat16) becomes bfloat16. Throws kNotFound / kInvalidModel / kUnsupported.
runtime::Value load_backend_value(const std::filesystem::path& path, const onnx::TypeProto& type);

/// One data set of a test, matched to its model's graph.
struct BackendDataSet {
  std::filesystem::path dir;
  runtime::NamedValues inputs;   // (graph input name, value), in feed order
  runtime::NamedValues outputs;  // (graph output name, expected value), output_0 first
};

/// Loads a data set. input_K.pb feeds the K-th graph input that is not an initializer, or the
/// K-th graph input when the set has a file for every graph input (an initializer overridden);
/// output_K.pb is the expected value of the K-th graph output.
BackendDataSet load_backend_data_set(const std::filesystem::path& set_dir, const onnx::GraphProto& graph);

/// The skip file: "<folder>/<test>  # reason" per line; an entry prefixed "fp64:" applies only
/// to the ref runner's fp64-oracle mode (tests whose expected data encodes float32 rounding).
class BackendSkips {
 public:
  /// Throws kNotFound when the file cannot be read.
  static BackendSkips load(const std::filesystem::path& path);
  /// parity's own skip file, tests/runtime/conformance_skips.txt of `source_dir`.
  static std::filesystem::path source_tree_file(const std::filesystem::path& source_dir);

  /// Why test `id` ("node/test_bernoulli") is skipped in this mode; nullopt when it runs.
  std::optional<std::string> reason(const std::string& id, bool fp64) const;
  size_t size() const { return entries_.size(); }

 private:
  std::map<std::string, std::string> entries_;  // id (with its "fp64:" prefix) -> reason
};

}  // namespace parity::compare
