// TensorProto <-> Tensor for the low-precision types: float8 one byte per element, int4/uint4/
// float4e2m1/int2/uint2 packed low bits first, in raw_data or one packed byte per int32_data entry.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "core/low_precision.h"
#include "core/status.h"
#include "model/proto_convert.h"

namespace parity::model {
namespace {

TEST(LowPrecisionProto, PackedRawDataRoundTripsWithOddCounts) {
  for (DType d : {kInt4, kUInt4, kFloat4E2M1, kInt2, kUInt2}) {
    for (int64_t n : {1, 3, 5, 7}) {
      std::vector<float> values;
      for (int64_t i = 0; i < n; ++i) values.push_back(static_cast<float>(i % 2));
      const Tensor t = Tensor::from_vector<float>({n}, values).cast(d);
      onnx::TensorProto proto;
      tensor_to_proto(t, &proto, "x");
      EXPECT_EQ(proto.raw_data().size(), packed_size_bytes(d, n)) << dtype_name(d) << " n=" << n;
      const Tensor back = tensor_from_proto(proto, {});
      EXPECT_TRUE(back.bit_equal(t)) << dtype_name(d) << " n=" << n;
    }
  }
}

TEST(LowPrecisionProto, Int32DataHoldsPackedBytesOrFloat8Patterns) {
  onnx::TensorProto proto;
  proto.set_data_type(static_cast<int>(kInt4));
  proto.add_dims(3);
  proto.add_int32_data(0x9F);  // elements 0, 1: -1, -7
  proto.add_int32_data(0x07);  // element 2: 7 (high nibble is padding)
  const Tensor t = tensor_from_proto(proto, {});
  EXPECT_EQ(t.value_as_double(0), -1);
  EXPECT_EQ(t.value_as_double(1), -7);
  EXPECT_EQ(t.value_as_double(2), 7);

  onnx::TensorProto f8;
  f8.set_data_type(static_cast<int>(kFloat8E5M2));
  f8.add_dims(2);
  f8.add_int32_data(0x3C);  // 1.0
  f8.add_int32_data(0xFC);  // -inf
  const Tensor g = tensor_from_proto(f8, {});
  EXPECT_EQ(g.value_as_double(0), 1.0);
  EXPECT_EQ(g.value_as_double(1), -INFINITY);
}

TEST(LowPrecisionProto, WrongByteCountIsAnInvalidModelError) {
  onnx::TensorProto proto;
  proto.set_name("w");
  proto.set_data_type(static_cast<int>(kUInt4));
  proto.add_dims(5);
  proto.set_raw_data(std::string(5, '\0'));  // unpacked size: packed needs 3
  try {
    tensor_from_proto(proto, {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidModel);
    EXPECT_NE(std::string(e.what()).find("needs 3 bytes"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace parity::model
