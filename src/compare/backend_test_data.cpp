#include "compare/backend_test_data.h"

// onnx_pb.h first: it defines the ONNX_API the generated onnx-data.pb.h uses.
#include <onnx/onnx_pb.h>

#include <onnx/onnx-data.pb.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "core/status.h"
#include "core/text.h"
#include "model/proto_convert.h"

namespace parity::compare {

namespace fs = std::filesystem;
using runtime::Value;

namespace {

constexpr const char* kDataSetPrefix = "test_data_set_";
constexpr const char* kFp64Prefix = "fp64:";

Value value_from_sequence(const onnx::SequenceProto& seq, const fs::path& base);

Value value_from_optional(const onnx::OptionalProto& opt, const fs::path& base) {
  if (opt.has_tensor_value()) return Value(model::tensor_from_proto(opt.tensor_value(), base));
  if (opt.has_sequence_value()) return value_from_sequence(opt.sequence_value(), base);
  if (opt.elem_type() == onnx::OptionalProto::TENSOR || opt.elem_type() == onnx::OptionalProto::SEQUENCE ||
      opt.elem_type() == onnx::OptionalProto::UNDEFINED)
    return Value::none();
  fail(ErrorCode::kUnsupported, "optional test values holding maps or optionals are not supported");
}

Value value_from_sequence(const onnx::SequenceProto& seq, const fs::path& base) {
  PARITY_CHECK(seq.sequence_values_size() == 0 && seq.map_values_size() == 0 && seq.optional_values_size() == 0,
               kUnsupported, "sequences of sequences, maps or optionals are not supported");
  std::vector<Tensor> items;
  DType dtype = DType::kUndefined;
  for (const auto& t : seq.tensor_values()) {
    items.push_back(model::tensor_from_proto(t, base));
    dtype = items.back().dtype();
  }
  return Value::sequence(std::move(items), dtype);
}

/// input_0.pb, input_1.pb, ... up to the first missing number.
std::vector<fs::path> numbered_files(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int i = 0;; ++i) {
    fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p);
  }
  return files;
}

/// The graph inputs input_K.pb files feed, in order (see load_backend_data_set).
std::vector<int> fed_inputs(const onnx::GraphProto& graph, size_t files) {
  std::vector<int> all(graph.input_size());
  for (int i = 0; i < graph.input_size(); ++i) all[i] = i;
  if (files == all.size()) return all;
  std::set<std::string> initializers;
  for (const auto& init : graph.initializer()) initializers.insert(init.name());
  std::vector<int> fed;
  for (int i : all)
    if (!initializers.count(graph.input(i).name())) fed.push_back(i);
  return fed;
}

}  // namespace

std::vector<fs::path> backend_data_sets(const fs::path& test_dir) {
  std::vector<std::pair<int, fs::path>> sets;
  const std::string prefix = kDataSetPrefix;
  for (const auto& e : fs::directory_iterator(test_dir)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name.rfind(prefix, 0) != 0) continue;
    const std::string number = name.substr(prefix.size());
    if (number.empty() || !std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    sets.emplace_back(std::stoi(number), e.path());
  }
  std::sort(sets.begin(), sets.end());
  std::vector<fs::path> out;
  for (auto& s : sets) out.push_back(s.second);
  return out;
}

Value load_backend_value(const fs::path& path, const onnx::TypeProto& type) {
  std::ifstream in(path, std::ios::binary);
  PARITY_CHECK(in, kNotFound, "cannot open '", path.string(), "'");
  if (type.has_sequence_type()) {
    onnx::SequenceProto seq;
    PARITY_CHECK(seq.ParseFromIstream(&in), kInvalidModel, "'", path.string(), "' is not a SequenceProto");
    return value_from_sequence(seq, path.parent_path());
  }
  if (type.has_optional_type()) {
    onnx::OptionalProto opt;
    PARITY_CHECK(opt.ParseFromIstream(&in), kInvalidModel, "'", path.string(), "' is not an OptionalProto");
    return value_from_optional(opt, path.parent_path());
  }
  PARITY_CHECK(type.has_tensor_type() || type.value_case() == onnx::TypeProto::VALUE_NOT_SET, kUnsupported,
               "'", path.string(), "': map and sparse tensor test values are not supported");
  onnx::TensorProto proto;
  PARITY_CHECK(proto.ParseFromIstream(&in), kInvalidModel, "'", path.string(), "' is not a TensorProto");
  Tensor t = model::tensor_from_proto(proto, path.parent_path());
  if (type.has_tensor_type() && type.tensor_type().elem_type() == onnx::TensorProto::BFLOAT16 &&
      t.dtype() == DType::kUInt16)
    t = Tensor::from_bytes(DType::kBFloat16, t.shape(), t.raw_data(), t.size_bytes());
  return Value(std::move(t));
}

BackendDataSet load_backend_data_set(const fs::path& set_dir, const onnx::GraphProto& graph) {
  BackendDataSet set{.dir = set_dir};
  const auto input_files = numbered_files(set_dir, "input_");
  const auto output_files = numbered_files(set_dir, "output_");
  const std::vector<int> fed = fed_inputs(graph, input_files.size());
  PARITY_CHECK(input_files.size() <= fed.size(), kInvalidModel, set_dir.string(), " has ", input_files.size(),
               " inputs but the model takes ", fed.size());
  PARITY_CHECK(static_cast<int>(output_files.size()) <= graph.output_size(), kInvalidModel, set_dir.string(),
               " has ", output_files.size(), " outputs but the model has ", graph.output_size());
  for (size_t k = 0; k < input_files.size(); ++k) {
    const auto& info = graph.input(fed[k]);
    set.inputs.emplace_back(info.name(), load_backend_value(input_files[k], info.type()));
  }
  for (size_t k = 0; k < output_files.size(); ++k) {
    const auto& info = graph.output(static_cast<int>(k));
    set.outputs.emplace_back(info.name(), load_backend_value(output_files[k], info.type()));
  }
  return set;
}

BackendSkips BackendSkips::load(const fs::path& path) {
  std::ifstream in(path);
  PARITY_CHECK(in, kNotFound, "cannot open skip file '", path.string(), "'");
  BackendSkips skips;
  std::string line;
  while (std::getline(in, line)) {
    const auto hash = line.find('#');
    const std::string id = trim(line.substr(0, hash));
    if (id.empty()) continue;
    skips.entries_[id] =
        hash == std::string::npos ? std::string("listed in the skip file") : trim(line.substr(hash + 1));
  }
  return skips;
}

fs::path BackendSkips::source_tree_file(const fs::path& source_dir) {
  return source_dir / "tests" / "runtime" / "conformance_skips.txt";
}

std::optional<std::string> BackendSkips::reason(const std::string& id, bool fp64) const {
  if (auto it = entries_.find(id); it != entries_.end()) return it->second;
  if (fp64)
    if (auto it = entries_.find(kFp64Prefix + id); it != entries_.end()) return it->second;
  return std::nullopt;
}

}  // namespace parity::compare
