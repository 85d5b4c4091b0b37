// OpenCV DNN runner (the libparity_runner_opencv module): imports an ONNX model with
// cv::dnn::readNetFromONNX and runs it on OpenCV's CPU backend.
//
// OpenCV's importer rejects many models; the first node it cannot take is reported by index, name
// and op type, which is itself an answer to "can I deploy this model with OpenCV?".
#include <onnx/onnx_pb.h>

#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>

#include <fstream>
#include <regex>
#include <set>

#include "core/logger.h"
#include "model/proto_convert.h"
#include "runners/opencv/opencv_options.h"
#include "runners/peer_module.h"

namespace parity::runners {
namespace {

// The part of an OpenCV error message that explains it, on one line: "OpenCV(4.6.0) file:line:
// error: (-2:Unspecified error) Can't create layer ... in function 'f'" -> "Can't create layer ...".
std::string opencv_reason(const std::string& what) {
  std::string text = what;
  // Nested errors repeat the "OpenCV(4.6.0) file:line: error: (code:kind) " prefix; keep the innermost.
  static const std::regex kPrefix(R"(OpenCV\([^)]*\) [^ ]*:[0-9]+: error: \([^)]*\) ?)");
  std::smatch m;
  std::string::const_iterator start = text.cbegin();
  size_t last = std::string::npos;
  while (std::regex_search(start, text.cend(), m, kPrefix)) {
    last = static_cast<size_t>(m[0].second - text.cbegin());
    start = m[0].second;
  }
  if (last != std::string::npos) text = text.substr(last);
  static const std::regex kFunction(R"( ?in function '[^']*')");
  text = std::regex_replace(text, kFunction, "");
  // CV_Check messages continue on lines starting with "> ".
  static const std::regex kContinuation(R"(\s*\n[> ]*)");
  text = std::regex_replace(text, kContinuation, " ");
  static const std::regex kSpaces(R"(\s+)");
  text = std::regex_replace(text, kSpaces, " ");
  while (!text.empty() && (text.back() == ' ' || text.back() == '>')) text.pop_back();
  while (!text.empty() && text.front() == ' ') text.erase(0, 1);
  return text.empty() ? std::string("(OpenCV gave no reason)") : text;
}

class OpenCvRunner final : public Runner {
 public:
  OpenCvRunner(std::string model_path, OpenCvRunnerOptions options)
      : Runner(make_runner_name("opencv")), model_path_(std::move(model_path)), options_(options) {}

 protected:
  void activate_impl() override;
  void deactivate_impl() override { net_ = cv::dnn::Net(); }
  TensorMetadata input_metadata_impl() override { return inputs_; }
  TensorMap infer_impl(const TensorMap& feed) override;

 private:
  void read_graph_io();
  [[noreturn]] void fail_import(const cv::Exception& e);
  Tensor to_tensor(const cv::Mat& mat, const TensorMeta* declared) const;

  std::string model_path_;
  OpenCvRunnerOptions options_;
  onnx::GraphProto graph_;  // nodes and I/O only (initializers dropped after reading)
  TensorMetadata inputs_;
  TensorMetadata outputs_;
  cv::dnn::Net net_;
};

void OpenCvRunner::read_graph_io() {
  std::ifstream in(model_path_, std::ios::binary);
  PARITY_CHECK(in, kNotFound, "cannot open model ", model_path_);
  onnx::ModelProto model;
  PARITY_CHECK(model.ParseFromIstream(&in), kInvalidModel, model_path_, " is not a valid ONNX model");
  graph_ = model.graph();
  std::set<std::string> initializers;
  for (const auto& init : graph_.initializer()) initializers.insert(init.name());
  graph_.clear_initializer();
  inputs_ = TensorMetadata();
  outputs_ = TensorMetadata();
  for (const auto& input : graph_.input()) {
    if (initializers.count(input.name())) continue;
    TensorMeta meta = model::meta_from_value_info(input);
    inputs_.add(meta.name, meta.dtype, meta.shape);
  }
  for (const auto& output : graph_.output()) {
    TensorMeta meta = model::meta_from_value_info(output);
    outputs_.add(meta.name, meta.dtype, meta.shape);
  }
}

void OpenCvRunner::fail_import(const cv::Exception& e) {
  const std::string what = e.what();
  // "Node [TopK@ai.onnx]:(onnx_node_output_0!values) parse error: ..." names the node OpenCV rejected.
  static const std::regex kNode(R"(Node \[([^@\]]*)@([^\]]*)\]:\(([^)]*)\))");
  std::smatch m;
  if (!std::regex_search(what, m, kNode))
    fail(ErrorCode::kUnsupported, "OpenCV DNN cannot import ", model_path_, ": ", opencv_reason(what));
  const std::string op = m[1], domain = m[2], label = m[3];
  // OpenCV labels nodes "onnx_node!<name>", or "onnx_node_output_<i>!<i-th output>" when unnamed.
  const size_t bang = label.find('!');
  const std::string kind = bang == std::string::npos ? std::string() : label.substr(0, bang);
  const std::string key = bang == std::string::npos ? label : label.substr(bang + 1);
  const std::string output_prefix = "onnx_node_output_";
  int output_index = -1;
  if (kind.rfind(output_prefix, 0) == 0) output_index = std::atoi(kind.c_str() + output_prefix.size());
  int index = -1;
  for (int i = 0; i < graph_.node_size() && index < 0; ++i) {
    const auto& node = graph_.node(i);
    if (output_index >= 0 ? output_index < node.output_size() && node.output(output_index) == key : node.name() == key)
      index = i;
  }
  std::string where = index >= 0 ? str_cat("node #", index, " ") : std::string("node ");
  where += output_index >= 0 ? str_cat("(unnamed, output '", key, "')") : str_cat("'", key, "'");
  fail(ErrorCode::kUnsupported, "OpenCV DNN cannot import ", model_path_, ": first unsupported node is ", where,
       ", op ", op, " (domain ", domain, "): ", opencv_reason(what));
}

void OpenCvRunner::activate_impl() {
  read_graph_io();
  if (!logger().enabled(Severity::kVerbose))
    cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);  // errors reach the user via us
  if (options_.threads > 0) cv::setNumThreads(options_.threads);
  try {
    net_ = cv::dnn::readNetFromONNX(model_path_);
  } catch (const cv::Exception& e) {
    fail_import(e);
  }
  PARITY_CHECK(!net_.empty(), kUnsupported, "OpenCV DNN imported an empty network from ", model_path_);
  // OpenCV imports Dropout as a one-output identity; asking its forward() for the mask reads past the
  // layer's outputs and crashes, so refuse that output here.
  for (const auto& node : graph_.node())
    if (node.op_type() == "Dropout")
      for (int k = 1; k < node.output_size(); ++k)
        PARITY_CHECK(node.output(k).empty() || !outputs_.contains(node.output(k)), kUnsupported,
                     "OpenCV DNN cannot produce output '", node.output(k), "' of ", model_path_,
                     ": it computes only the first output of Dropout (no mask)");
  net_.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
  net_.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
  net_.enableFusion(options_.fusion);
}

// OpenCV's DNN module computes in float32 and takes float32 or uint8 input blobs.
cv::Mat to_blob(const std::string& name, const Tensor& tensor) {
  PARITY_CHECK(tensor.dtype() != DType::kString && !is_complex(tensor.dtype()), kUnsupported,
               "OpenCV DNN cannot take ", dtype_name(tensor.dtype()), " input '", name, "'");
  const Tensor source = tensor.dtype() == DType::kUInt8 || tensor.dtype() == DType::kFloat32
                            ? tensor
                            : tensor.cast(DType::kFloat32);
  std::vector<int> dims;
  for (int64_t d : source.shape()) dims.push_back(static_cast<int>(d));
  if (dims.empty()) dims.push_back(1);  // OpenCV has no 0-d Mat
  const int type = source.dtype() == DType::kUInt8 ? CV_8U : CV_32F;
  // Wrap, then clone: the net keeps the blob past this call.
  cv::Mat view(static_cast<int>(dims.size()), dims.data(), type, const_cast<void*>(source.raw_data()));
  return view.clone();
}

Tensor OpenCvRunner::to_tensor(const cv::Mat& mat, const TensorMeta* declared) const {
  Shape shape;
  for (int i = 0; i < mat.dims; ++i) shape.push_back(mat.size[i]);
  const cv::Mat dense = mat.isContinuous() ? mat : mat.clone();
  Tensor out;
  switch (dense.depth()) {
    case CV_32F: out = Tensor::from_bytes(DType::kFloat32, shape, dense.data, dense.total() * 4); break;
    case CV_32S: out = Tensor::from_bytes(DType::kInt32, shape, dense.data, dense.total() * 4); break;
    case CV_8U: out = Tensor::from_bytes(DType::kUInt8, shape, dense.data, dense.total()); break;
    case CV_64F: out = Tensor::from_bytes(DType::kFloat64, shape, dense.data, dense.total() * 8); break;
    default: fail(ErrorCode::kUnsupported, "OpenCV DNN returned an output of OpenCV depth ", dense.depth());
  }
  if (!declared) return out;
  // OpenCV drops or adds unit dimensions (e.g. 1-D outputs come back 2-D); restore the model's shape
  // when it is known (at most one dynamic dimension, inferred from the element count).
  if (!declared->shape.unknown_rank) {
    Shape want;
    int dynamic = -1;
    int64_t known = 1;
    for (size_t i = 0; i < declared->shape.dims.size(); ++i) {
      const Dim& d = declared->shape.dims[i];
      if (d.is_static()) {
        want.push_back(d.value);
        known *= d.value;
      } else if (dynamic < 0) {
        dynamic = static_cast<int>(i);
        want.push_back(-1);
      } else {
        dynamic = -2;  // two or more: cannot infer
      }
    }
    if (dynamic == -1 && known == out.numel()) {
      out = out.reshaped(want);
    } else if (dynamic >= 0 && known > 0 && out.numel() % known == 0) {
      want[static_cast<size_t>(dynamic)] = out.numel() / known;
      out = out.reshaped(want);
    }
  }
  // The model's dtype (e.g. int64 indices), as the other runners report it.
  if (declared->dtype != DType::kUndefined && declared->dtype != out.dtype() && declared->dtype != DType::kString)
    out = out.cast(declared->dtype);
  return out;
}

TensorMap OpenCvRunner::infer_impl(const TensorMap& feed) {
  std::vector<cv::String> output_names;
  for (const auto& o : outputs_) output_names.push_back(o.name);
  std::vector<cv::Mat> results;
  try {
    for (const auto& meta : inputs_)
      if (const Tensor* t = feed.find(meta.name)) net_.setInput(to_blob(meta.name, *t), meta.name);
    net_.forward(results, output_names);
  } catch (const cv::Exception& e) {
    fail(ErrorCode::kRuntime, "OpenCV DNN failed to run ", model_path_, ": ", opencv_reason(e.what()));
  }
  PARITY_CHECK(results.size() == output_names.size(), kRuntime, "OpenCV DNN returned ", results.size(),
               " outputs for ", output_names.size(), " requested");
  TensorMap out;
  for (size_t i = 0; i < results.size(); ++i)
    out.set(output_names[i], to_tensor(results[i], outputs_.find(output_names[i])));
  return out;
}

std::string opencv_version() { return CV_VERSION; }

std::unique_ptr<Runner> create_opencv_runner(const RunnerConfig& config) {
  return std::make_unique<OpenCvRunner>(config.model_path, config.options.get_or(OpenCvRunnerOptions{}));
}

}  // namespace
}  // namespace parity::runners

PARITY_PEER_MODULE(parity::runners::opencv_version, parity::runners::create_opencv_runner)
