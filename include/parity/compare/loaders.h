// Loaders: lazy, composable callables that produce models and runners (Polygraphy's loader
// idiom). CamelCase names are lazy (they return a callable; nothing happens until it is called),
// snake_case names are the immediately evaluated forms:
//
//   auto load = ModifyOutputs(OnnxFromPath("model.onnx"), {"mark", "all"});
//   auto runner = RunnerFromOnnx("ort", load);   // the model is loaded on activate()
//
// Models are onnx::ModelProto (include <onnx/onnx_pb.h> to edit them); `extend` lets user code
// modify what a loader returns, for anything the loaders do not cover.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "runners/registry.h"
#include "model/graph.h"
#include "runners/runner.h"

#include "model/onnx_fwd.h"

namespace parity::compare::loaders {

/// A deferred step that produces a T when called (Polygraphy's lazy loaders).
template <typename T>
using Loader = std::function<T()>;
using Model = std::shared_ptr<onnx::ModelProto>;  ///< A loaded ONNX model, shared between loaders.
using ModelLoader = Loader<Model>;  ///< A loader of an ONNX model.
using BytesLoader = Loader<std::string>;  ///< A loader of serialized bytes.

// Immediate forms -----------------------------------------------------------------------------

/// Reads a file's bytes. Throws kNotFound / kIo naming the path.
std::string bytes_from_path(const std::string& path);
/// Parses a serialized ModelProto. Throws kInvalidModel.
Model onnx_from_bytes(const std::string& bytes, const std::string& what = "model bytes");
/// Reads an ONNX model file (external data stays where it is: save next to the original).
Model onnx_from_path(const std::string& path);
std::string bytes_from_onnx(const onnx::ModelProto& model);  ///< Serializes a model. Throws kInvalidArgument when protobuf cannot (past its 2 GiB limit).
/// Writes a model (atomically). Throws kIo.
void save_onnx(const onnx::ModelProto& model, const std::string& path);
/// Sets the graph outputs: `outputs` lists names to make outputs (existing outputs not listed
/// are dropped), or is {"mark", "all"} to add every value a node produces, after the existing
/// outputs; `exclude` then removes names. Value types come from ONNX shape inference where
/// known. Unknown names are errors listing what exists.
void modify_outputs(onnx::ModelProto& model, const std::vector<std::string>& outputs,
                    const std::vector<std::string>& exclude = {});
/// The model of an editable graph (model::Graph::to_model), for loaders and runners. External data
/// stays referenced relative to the graph's base_dir: pass that folder on as the runner's base_dir.
Model onnx_from_graph(const model::Graph& graph);
/// The editable graph IR of a model, so that code edits it without libonnx's protobuf classes.
std::shared_ptr<model::Graph> graph_from_onnx(const onnx::ModelProto& model);
/// True when some initializer keeps its data in an external file.
bool uses_external_data(const onnx::ModelProto& model);
/// Names of every value produced by a node of the main graph, in node order.
std::vector<std::string> produced_value_names(const onnx::ModelProto& model);
/// The type of every value that has one, from the model and from libonnx's shape inference on a
/// copy (best effort: a model it rejects keeps the types it records): what marked outputs declare.
std::map<std::string, onnx::ValueInfoProto> inferred_value_infos(const onnx::ModelProto& model);

// Lazy forms ----------------------------------------------------------------------------------

BytesLoader BytesFromPath(std::string path);  ///< Lazy bytes_from_path().
ModelLoader OnnxFromBytes(BytesLoader bytes);  ///< Lazy onnx_from_bytes().
ModelLoader OnnxFromPath(std::string path);  ///< Lazy onnx_from_path().
BytesLoader BytesFromOnnx(ModelLoader model);  ///< Lazy bytes_from_onnx().
/// Saves the model when called and passes it on, so it chains with other loaders.
ModelLoader SaveOnnx(ModelLoader model, std::string path);
/// Lazy modify_outputs() on the loaded model.
ModelLoader ModifyOutputs(ModelLoader model, std::vector<std::string> outputs,
                          std::vector<std::string> exclude = {});

/// A runner of a registered runtime ("ref", "ort", ...) whose model comes from a loader: the
/// loader runs on activate(), the model is written to a temporary file (in `base_dir` when the
/// model has external data, so the data resolves; else in the temp folder) and handed to the
/// runtime. Throws kUnavailable naming the
/// registered runners when `runner_name` is unknown.
/// `runner_options` are the runtimes' own options (empty: defaults). `name` names the runner (empty:
/// Polygraphy's "<runtime>-runner-N<counter>-<date>-<time>").
std::unique_ptr<runners::Runner> RunnerFromOnnx(const std::string& runner_name, ModelLoader model,
                                       std::string base_dir = {}, const runners::RunnerOptions& runner_options = {},
                                       std::string name = {});

/// Wraps a loader so that `fn` sees (and may modify) what it returns: fn(T&) modifies in place;
/// if fn returns a T instead, that replaces the value (Polygraphy's func.extend).
template <typename T, typename Fn>
Loader<T> extend(Loader<T> base, Fn fn) {
  return [base = std::move(base), fn = std::move(fn)]() -> T {
    T value = base();
    if constexpr (std::is_invocable_r_v<T, Fn, T&> && !std::is_void_v<std::invoke_result_t<Fn, T&>>) {
      return fn(value);
    } else {
      fn(value);
      return value;
    }
  };
}

}  // namespace parity::compare::loaders
