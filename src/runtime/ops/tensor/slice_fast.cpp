// Spec: https://onnx.ai/onnx/operators/onnx__Slice.html
// Optimized Slice (any fixed-size dtype), beside the reference kernel in slice.cpp.
//
// A slice whose elements are one contiguous run of the input (a range along the outermost dim
// of size > 1, the dims inside it taken whole: ShuffleNetV2 splits every block's input into two
// channel halves this way, 26 slices per run) returns a view of the input's buffer instead of a
// copy. Other slices are written without zero-filling the output first, with size-1 dims dropped
// and dims that stay adjacent in the source merged, so each contiguous run is one memcpy.
// Strings and opset-1 attributes run the reference kernel; parameters are resolved by the same
// code as the reference (slice_window.h), so bad ones fail the same way.
//
// Channels-last hand-off (runtime/channels_last.h): a channels-last input is read through its
// channels-last strides, and a channels-last output is written with its dims walked in (N, H, W, C)
// order, so any slice works in either layout. ShuffleNetV2 splits each block's input into channel
// halves that go to a convolution and a Concat: both read channels-last, and the channel shuffle
// between blocks then stays channels-last. The planner hands Slice a channels-last input only
// where its output is handed off too (passes_layout_through).
#include "runtime/channels_last.h"
#include "runtime/ops/tensor/slice_window.h"
#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {

/// Storage that is another tensor's buffer, kept alive by holding that tensor.
class SharedBufferStorage final : public Storage {
 public:
  explicit SharedBufferStorage(Tensor base) : base_(std::move(base)) {}
  std::byte* data() override { return static_cast<std::byte*>(base_.raw_data()); }
  size_t size_bytes() const override { return base_.size_bytes(); }

 private:
  Tensor base_;
};

/// The `shape`-sized run of `base` starting at flat element `first`, sharing base's buffer.
Tensor sub_range(const Tensor& base, int64_t first, const Shape& shape) {
  return Tensor(base.dtype(), shape, std::make_shared<SharedBufferStorage>(base),
                static_cast<size_t>(first) * dtype_size(base.dtype()));
}

class FastSlice final : public Kernel, public ChannelsLastKernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    auto reference = init.create_reference_kernel();
    tensor_ops::SliceAttrs attrs = tensor_ops::SliceAttrs::parse(init);
    if (attrs.from_attrs) return nullptr;
    return std::unique_ptr<Kernel>(new FastSlice(std::move(attrs), std::move(reference)));
  }

  bool can_read_channels_last(size_t input) const override { return input == 0; }
  void read_channels_last(size_t input) override { channels_last_input_ = input == 0; }
  bool can_write_channels_last() const override { return channels_last_input_; }
  void write_channels_last() override { channels_last_output_ = true; }
  bool passes_layout_through() const override { return true; }

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    if (data.dtype() == DType::kString) {
      reference_->compute(ctx);
      return;
    }
    const tensor_ops::SliceWindow w = tensor_ops::resolve_slice_window(attrs_, data.shape(), ctx);
    // Source offset and strides per output dim, in the input's own layout.
    int64_t offset = w.source_offset(data.shape());
    std::vector<int64_t> strides = w.source_strides(data.shape());
    if (channels_last_input_) {
      strides = channels_last_strides(data.shape());
      offset = 0;
      for (size_t d = 0; d < strides.size(); ++d) {
        offset += w.first[d] * strides[d];
        strides[d] *= w.step[d];
      }
    }
    // The output's dims in the order its elements are stored: (N, H, W, C) when channels-last.
    Shape out_order = w.out_shape;
    if (channels_last_output_) {
      out_order.push_back(out_order[1]);
      out_order.erase(out_order.begin() + 1);
      strides.push_back(strides[1]);
      strides.erase(strides.begin() + 1);
    }
    if (shape_numel(w.out_shape) > 0 && is_contiguous_run(out_order, strides)) {
      ctx.set_output(0, Value(sub_range(data, offset, w.out_shape)));
      return;
    }
    Tensor& out = ctx.allocate_output_uninitialized(0, data.dtype(), w.out_shape);
    if (out.numel() == 0) return;
    // Drop size-1 dims, then merge each dim into the one outside it when the source keeps them
    // adjacent (outer stride = inner stride * inner size).
    Shape shape;
    std::vector<int64_t> merged_strides;
    for (size_t d = 0; d < out_order.size(); ++d) {
      if (out_order[d] == 1) continue;
      shape.push_back(out_order[d]);
      merged_strides.push_back(strides[d]);
    }
    for (size_t d = shape.size(); d-- > 1;)
      if (merged_strides[d - 1] == merged_strides[d] * shape[d]) {
        shape[d - 1] *= shape[d];
        merged_strides[d - 1] = merged_strides[d];
        shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(d));
        merged_strides.erase(merged_strides.begin() + static_cast<std::ptrdiff_t>(d));
      }
    tensor_ops::visit_storage_type(data.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      tensor_ops::strided_copy(tensor_ops::elements<S>(data), offset, merged_strides, shape,
                               tensor_ops::elements<S>(out));
    });
  }

 private:
  FastSlice(tensor_ops::SliceAttrs attrs, std::unique_ptr<Kernel> reference)
      : attrs_(std::move(attrs)), reference_(std::move(reference)) {}

  /// Whether output element i is source element offset + i: every dim of size > 1 moves the
  /// source by its row-major stride in the output.
  static bool is_contiguous_run(const Shape& out_shape, const std::vector<int64_t>& source_strides) {
    const std::vector<int64_t> out_strides = shape_strides(out_shape);
    for (size_t d = 0; d < out_shape.size(); ++d)
      if (out_shape[d] > 1 && source_strides[d] != out_strides[d]) return false;
    return true;
  }

  tensor_ops::SliceAttrs attrs_;
  std::unique_ptr<Kernel> reference_;
  bool channels_last_input_ = false;
  bool channels_last_output_ = false;
};

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("", "Slice", (1, 10), FastSlice);

}  // namespace parity::runtime
