// Spec: https://onnx.ai/onnx/operators/onnx__SequenceMap.html
// SequenceMap.
#include "runtime/kernel.h"
#include "runtime/subgraph.h"

namespace parity::runtime {
namespace {

class SequenceMap : public Kernel {
 public:
  explicit SequenceMap(const KernelInit& init) : body_(init.subgraph("body")) {
    if (body_->num_inputs() != init.num_inputs() || body_->num_outputs() != init.num_outputs())
      init.fail("the body must take one input per node input and produce one output per node output");
  }
  void compute(KernelContext& ctx) const override {
    const Value& first = ctx.input_value(0);
    if (!first.is_sequence()) ctx.fail("input 0 must be a sequence");
    const size_t n = first.sequence_items().size();
    for (size_t i = 1; i < ctx.num_inputs(); ++i)
      if (ctx.input_value(i).is_sequence() && ctx.input_value(i).sequence_items().size() != n)
        ctx.fail("input sequences have different lengths");
    std::vector<std::vector<Tensor>> outs(ctx.num_outputs());
    for (size_t k = 0; k < n; ++k) {
      std::vector<Value> inputs;
      for (size_t i = 0; i < ctx.num_inputs(); ++i) {
        const Value& v = ctx.input_value(i);
        inputs.push_back(v.is_sequence() ? Value(v.sequence_items()[k]) : v);
      }
      auto results = ctx.run_subgraph(*body_, std::move(inputs));
      for (size_t j = 0; j < results.size(); ++j) outs[j].push_back(results[j].tensor());
    }
    for (size_t j = 0; j < outs.size(); ++j) {
      DType d = outs[j].empty() ? compute_dtype(body_->output_meta()[j].dtype, ctx.precision()) : outs[j].front().dtype();
      ctx.set_output(j, Value::sequence(std::move(outs[j]), d));
    }
  }

 private:
  std::shared_ptr<Subgraph> body_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "SequenceMap", 17, SequenceMap);

}  // namespace parity::runtime
