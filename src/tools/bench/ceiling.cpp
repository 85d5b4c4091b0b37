#include "tools/bench/ceiling.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "core/tensor_map.h"
#include "runtime/session.h"

namespace parity::tools::bench {

namespace {

constexpr int64_t kSize = 1024;

void add_float_info(onnx::ValueInfoProto* info, const std::string& name) {
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  tensor->mutable_shape()->add_dim()->set_dim_value(kSize);
  tensor->mutable_shape()->add_dim()->set_dim_value(kSize);
}

/// y = x @ w, x fed, w a constant initializer (the weights layout a model's MatMul has).
onnx::ModelProto sgemm_model() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  auto* graph = model.mutable_graph();
  graph->set_name("sgemm");
  add_float_info(graph->add_input(), "x");
  add_float_info(graph->add_output(), "y");
  auto* w = graph->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(kSize);
  w->add_dims(kSize);
  std::vector<float> values(kSize * kSize);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 17) * 0.01f - 0.08f;
  w->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  auto* node = graph->add_node();
  node->set_op_type("MatMul");
  node->add_input("x");
  node->add_input("w");
  node->add_output("y");
  return model;
}

}  // namespace

double measure_sgemm_gflops(int threads, double seconds) {
  runtime::SessionOptions options;
  options.threads = threads;
  const runtime::Session session = runtime::Session::create(sgemm_model(), options).value();
  Tensor x = Tensor::uninitialized(DType::kFloat32, {kSize, kSize});
  std::fill_n(x.data<float>(), x.numel(), 0.5f);
  const TensorMap feed{{"x", x}};
  session.run(feed);  // warm-up: packing, first-touch
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  double best = 1e30;
  for (int runs = 0; runs < 3 || std::chrono::duration<double>(Clock::now() - start).count() < seconds; ++runs) {
    const Clock::time_point t0 = Clock::now();
    session.run(feed);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return 2.0 * static_cast<double>(kSize * kSize * kSize) / best / 1e9;
}

}  // namespace parity::tools::bench
