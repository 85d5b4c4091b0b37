#include "core/formats/polygraphy_json.h"

#include <nlohmann/json.hpp>

#include "core/formats/base64.h"
#include "core/formats/file_io.h"
#include "core/formats/npy.h"
#include "core/formats/polygraphy_json_detail.h"

namespace parity {

using Json = nlohmann::ordered_json;

namespace {

constexpr const char* kClassKey = "polygraphy_class";
// Files written before Polygraphy 0.35 mark a class with a key of this prefix.
constexpr std::string_view kLegacyClassPrefix = "__polygraphy_encoded_";

std::string describe(const Json& j) {
  if (j.is_object()) {
    if (auto cls = polygraphy_json::class_of(j)) return "a " + *cls + " object";
    return "an object";
  }
  return std::string("a JSON ") + j.type_name();
}

Json encode_ndarray(const Tensor& tensor, const std::string& name) {
  std::string npy;
  try {
    npy = npy_to_bytes(tensor);
  } catch (const Error& e) {
    throw e.prefixed("tensor '" + name + "'").with_missing({.tensor = name});
  }
  Json j = Json::object();
  j["array"] = base64_encode(npy);
  j[kClassKey] = "ndarray";
  return j;
}

Json encode_lazy_array(const Tensor& tensor, const std::string& name) {
  Json j = Json::object();
  j["values"] = encode_ndarray(tensor, name);
  j[kClassKey] = "LazyArray";
  return j;
}

Json encode_tensor_map(const TensorMap& map, bool lazy) {
  Json j = Json::object();
  for (const auto& [name, tensor] : map)
    j[name] = lazy ? encode_lazy_array(tensor, name) : encode_ndarray(tensor, name);
  return j;
}

Json parse_json(const std::string& text, const std::string& what) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    // Keep the line short: drop nlohmann's "[json.exception...] " tag and its echo of the input.
    std::string message = e.what();
    if (message.rfind("[json.exception", 0) == 0 && message.find("] ") != std::string::npos)
      message = message.substr(message.find("] ") + 2);
    if (const size_t echo = message.find("; last read:"); echo != std::string::npos) message.resize(echo);
    fail(ErrorCode::kInvalidModel, what, ": invalid JSON: ", message);
  }
}

std::string dump(const Json& j) {
  // Python's json.dumps(indent=4) escapes non-ASCII characters (ensure_ascii=True).
  return j.dump(4, ' ', true);
}

}  // namespace

namespace polygraphy_json {

std::optional<std::string> class_of(const Json& j) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(kClassKey);
  if (it != j.end() && it->is_string()) return it->get<std::string>();
  for (auto item = j.begin(); item != j.end(); ++item)
    if (item.key().rfind(kLegacyClassPrefix, 0) == 0) return item.key().substr(kLegacyClassPrefix.size());
  return std::nullopt;
}

[[noreturn]] void unknown_class(const std::string& cls, const std::string& what) {
  if (cls == "Tensor")
    fail(ErrorCode::kUnsupported, what, ": holds a torch.Tensor (polygraphy_class 'Tensor'); parity "
         "reads numpy arrays only: save the data with numpy");
  fail(ErrorCode::kInvalidModel, what, ": unknown polygraphy_class '", cls, "'");
}

Tensor decode_array(const Json& j, const std::string& what) {
  const auto cls = class_of(j);
  PARITY_CHECK(cls, kInvalidModel, what, ": expected an encoded array, found ", describe(j));
  if (*cls == "LazyArray" || *cls == "LazyNumpyArray") {
    auto values = j.find("values");
    PARITY_CHECK(values != j.end(), kInvalidModel, what, ": ", *cls, " without 'values'");
    return decode_array(*values, what);
  }
  if (*cls != "ndarray") unknown_class(*cls, what);
  auto array = j.find("array");
  PARITY_CHECK(array != j.end() && array->is_string(), kInvalidModel, what,
               ": ndarray without an 'array' string");
  return npy_from_string(base64_decode(array->get_ref<const std::string&>(), what), what);
}

TensorMap decode_tensor_map(const Json& j, const std::string& what) {
  PARITY_CHECK(j.is_object(), kInvalidModel, what, ": expected {name: array} object, found ", describe(j));
  if (auto cls = class_of(j)) {
    if (*cls != "ndarray" && *cls != "LazyArray" && *cls != "LazyNumpyArray") unknown_class(*cls, what);
    fail(ErrorCode::kInvalidModel, what, ": expected {name: array} object, found ", describe(j));
  }
  TensorMap map;
  for (auto it = j.begin(); it != j.end(); ++it)
    map.set(it.key(), decode_array(it.value(), what + ", tensor '" + it.key() + "'"));
  return map;
}

IterationResult decode_iteration_result(const Json& j, const std::string& what) {
  const auto cls = class_of(j);
  PARITY_CHECK(cls, kInvalidModel, what, ": expected an IterationResult, found ", describe(j));
  if (*cls != "IterationResult") unknown_class(*cls, what);
  IterationResult result;
  auto name = j.find("runner_name");
  if (name != j.end() && name->is_string()) result.runner_name = name->get<std::string>();
  auto runtime = j.find("runtime");
  if (runtime != j.end() && runtime->is_number()) result.runtime = runtime->get<double>();
  auto outputs = j.find("outputs");
  PARITY_CHECK(outputs != j.end(), kInvalidModel, what, ": IterationResult without 'outputs'");
  result.outputs = decode_tensor_map(*outputs, what);
  return result;
}

RunResults decode_run_results(const Json& j, const std::string& what) {
  const auto cls = class_of(j);
  PARITY_CHECK(cls, kInvalidModel, what, ": not a Polygraphy RunResults file (found ", describe(j), ")");
  if (*cls != "RunResults") {
    if (*cls == "ndarray" || *cls == "LazyArray" || *cls == "LazyNumpyArray" || *cls == "IterationResult")
      fail(ErrorCode::kInvalidModel, what, ": not a Polygraphy RunResults file (found ", describe(j), ")");
    unknown_class(*cls, what);
  }
  auto lst = j.find("lst");
  PARITY_CHECK(lst != j.end() && lst->is_array(), kInvalidModel, what, ": RunResults without a 'lst' list");
  RunResults results;
  for (size_t r = 0; r < lst->size(); ++r) {
    const Json& pair = (*lst)[r];
    PARITY_CHECK(pair.is_array() && pair.size() == 2 && pair[0].is_string() && pair[1].is_array(),
                 kInvalidModel, what, ": RunResults entry ", r, " is not [runner_name, [iterations]]");
    const std::string runner = pair[0].get<std::string>();
    std::vector<IterationResult> iterations;
    for (size_t i = 0; i < pair[1].size(); ++i)
      iterations.push_back(decode_iteration_result(
          pair[1][i], what + ", runner '" + runner + "', iteration " + std::to_string(i)));
    results.add(runner, std::move(iterations));
  }
  return results;
}

std::vector<TensorMap> decode_inputs(const Json& j, const std::string& what) {
  std::vector<TensorMap> iterations;
  if (j.is_object()) {
    if (auto cls = class_of(j)) {
      if (*cls == "RunResults")
        fail(ErrorCode::kInvalidModel, what, ": holds RunResults (outputs), not a list of inputs");
      if (*cls != "ndarray" && *cls != "LazyArray" && *cls != "LazyNumpyArray") unknown_class(*cls, what);
    }
    iterations.push_back(decode_tensor_map(j, what));
    return iterations;
  }
  PARITY_CHECK(j.is_array(), kInvalidModel, what, ": expected a list of {name: array} objects, found ",
               describe(j));
  for (size_t i = 0; i < j.size(); ++i)
    iterations.push_back(decode_tensor_map(j[i], what + ", iteration " + std::to_string(i)));
  return iterations;
}

Json parse(const std::string& text, const std::string& what) { return parse_json(text, what); }

}  // namespace polygraphy_json

RunResults run_results_from_json(const std::string& text, const std::string& what) {
  return polygraphy_json::decode_run_results(parse_json(text, what), what);
}

std::string run_results_to_json(const RunResults& results) {
  Json lst = Json::array();
  for (const auto& [runner, iterations] : results.runs) {
    Json encoded_iterations = Json::array();
    for (const auto& iteration : iterations) {
      Json it = Json::object();
      it["outputs"] = encode_tensor_map(iteration.outputs, /*lazy=*/true);
      it["runtime"] = iteration.runtime ? Json(*iteration.runtime) : Json(nullptr);
      it["runner_name"] = iteration.runner_name;
      it[kClassKey] = "IterationResult";
      encoded_iterations.push_back(std::move(it));
    }
    lst.push_back(Json::array({Json(runner), std::move(encoded_iterations)}));
  }
  Json j = Json::object();
  j["lst"] = std::move(lst);
  j[kClassKey] = "RunResults";
  return dump(j);
}

std::vector<TensorMap> inputs_from_json(const std::string& text, const std::string& what) {
  return polygraphy_json::decode_inputs(parse_json(text, what), what);
}

std::string inputs_to_json(const std::vector<TensorMap>& iterations) {
  Json j = Json::array();
  for (const auto& map : iterations) j.push_back(encode_tensor_map(map, /*lazy=*/false));
  return dump(j);
}

RunResults read_run_results(const std::string& path) {
  return with_error_context({.file = path},
                            [&] { return run_results_from_json(formats::read_binary_file(path), path); });
}

void write_run_results(const std::string& path, const RunResults& results) {
  formats::write_binary_file(path, run_results_to_json(results));
}

std::vector<TensorMap> read_inputs_json(const std::string& path) {
  return with_error_context({.file = path}, [&] { return inputs_from_json(formats::read_binary_file(path), path); });
}

std::vector<TensorMap> read_inputs_json(const std::vector<std::string>& paths) {
  std::vector<TensorMap> all;
  for (const auto& path : paths)
    for (auto& map : read_inputs_json(path)) all.push_back(std::move(map));
  return all;
}

void write_inputs_json(const std::string& path, const std::vector<TensorMap>& iterations) {
  formats::write_binary_file(path, inputs_to_json(iterations));
}

}  // namespace parity
