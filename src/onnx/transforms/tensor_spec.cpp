#include "onnx/transforms/tensor_spec.h"

#include <cctype>

#include "cli/args.h"

namespace parity::transforms {

namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::optional<DType> parse_dtype_field(const std::string& text, const std::string& what) {
  if (text == "auto") return std::nullopt;
  auto dtype = dtype_from_name(text);
  PARITY_CHECK(dtype.has_value(), kInvalidArgument, what, ": unknown dtype '", text,
               "' (use a name like float32, float16, int64, bool, or auto)");
  return dtype;
}

}  // namespace

DimShape parse_dim_shape(const std::string& text, const std::string& what) {
  std::string body = trim(text);
  if (!body.empty() && (body.front() == '[' || body.front() == '(')) {
    const char close = body.front() == '[' ? ']' : ')';
    PARITY_CHECK(body.back() == close, kInvalidArgument, what, ": unbalanced brackets in shape '", text, "'");
    body = body.substr(1, body.size() - 2);
  }
  DimShape shape;
  if (trim(body).empty()) return shape;
  size_t start = 0;
  while (start <= body.size()) {
    size_t end = body.find(',', start);
    if (end == std::string::npos) end = body.size();
    std::string field = trim(body.substr(start, end - start));
    if (field.size() >= 2 && (field.front() == '\'' || field.front() == '"') && field.back() == field.front())
      field = field.substr(1, field.size() - 2);
    PARITY_CHECK(!field.empty(), kInvalidArgument, what, ": empty dimension in shape '", text, "'");
    const bool numeric = field.find_first_not_of("-0123456789") == std::string::npos;
    if (numeric) {
      const int64_t value = cli::parse_int(field, what);
      PARITY_CHECK(value >= -1, kInvalidArgument, what, ": negative dimension ", value, " in shape '", text, "'");
      shape.dims.push_back(value >= 0 ? Dim(value) : Dim::dynamic());
    } else if (field == "?") {
      shape.dims.push_back(Dim::dynamic());
    } else {
      shape.dims.push_back(Dim::dynamic(field));
    }
    start = end + 1;
  }
  return shape;
}

TensorSpec parse_input_spec(const std::string& text, const std::string& option) {
  // name:shape:dtype; names may contain ':' so split from the right, outside brackets.
  auto [rest, dtype_text] = cli::split_name_value(text);
  TensorSpec spec;
  if (rest.empty()) {  // just a name
    spec.name = dtype_text;
  } else {
    auto [name, shape_text] = cli::split_name_value(rest);
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
  auto [name, dtype_text] = cli::split_name_value(text);
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

}  // namespace parity::transforms
