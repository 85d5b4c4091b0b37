#include "model/transforms/tensor_spec.h"

#include "core/text.h"

namespace parity::model::transforms {

namespace {

std::optional<DType> parse_dtype_field(const std::string& text, const std::string& what) {
  if (text == "auto") return std::nullopt;
  auto dtype = dtype_from_name(text);
  PARITY_CHECK(dtype.has_value(), kInvalidArgument, what, ": unknown dtype '", text,
               "' (use a name like float32, float16, int64, bool, or auto)");
  return dtype;
}

}  // namespace

TensorSpec parse_input_spec(const std::string& text, const std::string& option) {
  // name:shape:dtype; names may contain ':' so split from the right, outside brackets.
  auto [rest, dtype_text] = split_name_value(text);
  TensorSpec spec;
  if (rest.empty()) {  // just a name
    spec.name = dtype_text;
  } else {
    auto [name, shape_text] = split_name_value(rest);
    if (name.empty()) {
      // Two fields: name:shape or name:dtype, told apart by the brackets of a shape.
      spec.name = shape_text;
      const bool is_shape = !dtype_text.empty() && (dtype_text.front() == '[' || dtype_text.front() == '(');
      if (is_shape) spec.shape = parse_dim_shape(dtype_text, option + " " + spec.name);
      else spec.dtype = parse_dtype_field(dtype_text, option + " " + spec.name);
      PARITY_CHECK(!spec.name.empty(), kInvalidArgument, option, ": empty tensor name in '", text, "'");
      return spec;
    }
    spec.name = name;
    if (shape_text != "auto") spec.shape = parse_dim_shape(shape_text, option + " " + name);
    spec.dtype = parse_dtype_field(dtype_text, option + " " + name);
  }
  PARITY_CHECK(!spec.name.empty(), kInvalidArgument, option, ": empty tensor name in '", text, "'");
  return spec;
}

TensorSpec parse_output_spec(const std::string& text, const std::string& option) {
  auto [name, dtype_text] = split_name_value(text);
  TensorSpec spec;
  if (name.empty()) {
    spec.name = dtype_text;
  } else {
    spec.name = name;
    spec.dtype = parse_dtype_field(dtype_text, option + " " + name);
  }
  PARITY_CHECK(!spec.name.empty(), kInvalidArgument, option, ": empty tensor name in '", text, "'");
  return spec;
}

}  // namespace parity::model::transforms
