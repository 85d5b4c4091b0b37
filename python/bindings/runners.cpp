// ONNX models, plans and runners: Polygraphy's backend loaders and runners over parity's own.
#include <onnx/onnx_pb.h>
#include <pybind11/stl.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bindings/arrays.h"
#include "bindings/bindings.h"
#include "bindings/models.h"
#include "bindings/python_object.h"
#include "compare/plan_loaders.h"
#include "options/args.h"
#include "runners/registry.h"
#include "runtime/profiles.h"
#include "tools/plan_build.h"

namespace parity::python {

namespace loaders = compare::loaders;

Model model_from_python(const py::handle& value) {
  if (py::isinstance<OnnxModel>(value)) return value.cast<const OnnxModel&>().model;
  if (py::isinstance<py::bytes>(value)) return loaders::onnx_from_bytes(value.cast<std::string>());
  if (py::hasattr(value, "SerializeToString"))  // an onnx.ModelProto of the onnx package
    return loaders::onnx_from_bytes(value.attr("SerializeToString")().cast<std::string>(), "onnx.ModelProto");
  if (py::isinstance<py::str>(value) || py::hasattr(value, "__fspath__"))
    return loaders::onnx_from_path(py::str(value));
  throw py::type_error("expected an ONNX model (parity OnnxModel, onnx.ModelProto, bytes or a path), got a " +
                       std::string(py::str(py::type::handle_of(value).attr("__name__"))));
}

namespace {

/// A loader as Polygraphy has them: a value, or a callable that returns one when called.
py::object resolve_loader(const py::object& source) {
  if (py::isinstance<OnnxModel>(source) || py::isinstance<py::bytes>(source) || py::isinstance<py::str>(source) ||
      !PyCallable_Check(source.ptr()))
    return source;
  return source();
}

loaders::ModelLoader model_loader(py::object source) {
  return [held = share(std::move(source))]() {
    py::gil_scoped_acquire gil;
    return model_from_python(resolve_loader(*held));
  };
}

loaders::Plan plan_from_python(const py::handle& value) {
  if (py::isinstance<Plan>(value)) return value.cast<const Plan&>().plan;
  if (py::isinstance<py::bytes>(value)) return loaders::plan_from_bytes(value.cast<std::string>());
  return loaders::plan_from_onnx(*model_from_python(value));
}

/// The runtime's own option group (the CLI's --threads, --precision, ...) parsed from `tokens`.
runners::RunnerOptions runner_options(const std::string& runtime, const std::vector<std::string>& tokens) {
  const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find(runtime);
  return info ? info->parse_options(tokens) : runners::RunnerOptions{};
}

py::dict infer(PyRunner& self, const py::handle& feed, bool check_inputs, bool copy_outputs) {
  runners::Runner& runner = self.get();
  const TensorMap tensors = tensor_map_from_dict(feed, "feed_dict");
  TensorMap outputs;
  {
    py::gil_scoped_release release;
    outputs = runner.infer(tensors, check_inputs);
  }
  return dict_from_tensor_map(outputs, copy_outputs);
}

/// A runner written in Python (a subclass of parity.backend.base.BaseRunner implementing
/// activate_impl, get_input_metadata_impl, infer_impl and deactivate_impl, as in Polygraphy), so it
/// can join Comparator.run. It holds its Python object weakly: the object owns it.
class PythonRunner : public runners::Runner {
 public:
  PythonRunner(const py::handle& self, std::string name) : runners::Runner(std::move(name)), self_(share(py::weakref(self))) {}

 protected:
  void activate_impl() override { call_optional("activate_impl"); }
  void deactivate_impl() override { call_optional("deactivate_impl"); }
  TensorMetadata input_metadata_impl() override {
    py::gil_scoped_acquire gil;
    return metadata_from_python(self().attr("get_input_metadata_impl")());
  }
  TensorMap infer_impl(const TensorMap& feed) override {
    py::gil_scoped_acquire gil;
    py::object outputs = self().attr("infer_impl")(dict_from_tensor_map(feed, false));
    // Copied: the Python code may reuse or change its arrays after returning them.
    return tensor_map_from_dict(outputs, "the outputs of " + name() + "'s infer_impl").clone();
  }

 private:
  py::object self() {
    py::object object = (*self_)();
    if (object.is_none()) throw py::value_error("the Python runner " + name() + " no longer exists");
    return object;
  }
  void call_optional(const char* method) {
    py::gil_scoped_acquire gil;
    py::object object = self();
    if (py::hasattr(object, method)) object.attr(method)();
  }

  SharedObject self_;
};

std::unique_ptr<PyRunner> make_python_runner(const py::object& self, const std::string& name, const std::string& prefix) {
  auto made = std::make_unique<PyRunner>();
  made->runner = std::make_unique<PythonRunner>(self, name.empty() ? runners::make_runner_name(prefix) : name);
  return made;
}

/// Seconds of each of `iterations` Runner::infer calls made from C++ on one converted feed: what the
/// Python call costs without the binding, for the overhead benchmark (bench/python_overhead.py).
std::vector<double> time_native_infer(PyRunner& self, const py::handle& feed, int iterations) {
  runners::Runner& runner = self.get();
  const TensorMap tensors = tensor_map_from_dict(feed, "feed_dict");
  std::vector<double> seconds;
  py::gil_scoped_release release;
  for (int i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    TensorMap outputs = runner.infer(tensors);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return seconds;
}

std::unique_ptr<PyRunner> make_onnx_runner(const std::string& runtime, py::object model,
                                           const std::vector<std::string>& options, const std::string& base_dir,
                                           const std::string& name) {
  auto made = std::make_unique<PyRunner>();
  made->runner = loaders::RunnerFromOnnx(runtime, model_loader(std::move(model)), base_dir,
                                         runner_options(runtime, options), name);
  return made;
}

std::unique_ptr<PyRunner> make_plan_runner(py::object plan, const std::string& name) {
  auto made = std::make_unique<PyRunner>();
  made->runner = loaders::RunnerFromPlan(
      [held = share(std::move(plan))]() {
        py::gil_scoped_acquire gil;
        return plan_from_python(resolve_loader(*held));
      },
      name);
  return made;
}

/// Polygraphy's Profile list: one (min, opt, max) triple of {input: shape} per profile.
std::vector<runtime::OptimizationProfile> profiles_from_python(const py::handle& profiles) {
  std::vector<std::string> min_items, opt_items, max_items;
  auto shape_text = [](const std::string& name, const py::handle& shape) {
    std::string text = name + ":[";
    bool first = true;
    for (py::handle dim : shape) {
      text += (first ? "" : ",") + std::to_string(dim.cast<int64_t>());
      first = false;
    }
    return text + "]";
  };
  for (py::handle profile : profiles) {
    for (py::handle item : profile.attr("items")()) {
      py::tuple pair = py::reinterpret_borrow<py::tuple>(item);
      const std::string name = py::str(pair[0]);
      py::object bounds = pair[1];
      min_items.push_back(shape_text(name, bounds.attr("min")));
      opt_items.push_back(shape_text(name, bounds.attr("opt")));
      max_items.push_back(shape_text(name, bounds.attr("max")));
    }
  }
  return runtime::profiles_from_min_opt_max(min_items, opt_items, max_items);
}

/// int8 scales from a parity.backend.plan.Calibrator: its cache when the file exists, else the fp32
/// model run over its data loader's feeds (the same calibration as `convert --int8`).
std::map<std::string, float> calibrated_scales(const Model& model, const py::object& calibrator) {
  tools::PlanBuildOptions options;
  options.precision.int8 = true;
  if (py::object cache = calibrator.attr("cache"); !cache.is_none()) options.calibration_cache = std::string(py::str(cache));
  options.calibration_algorithm = calibrator.attr("algorithm").cast<std::string>();
  SharedObject data_loader = share(calibrator.attr("data_loader"));
  options.calibration_feeds = [data_loader] {
    py::gil_scoped_acquire gil;
    return feed_source_from_python(*data_loader);
  };
  const model::Model owned(std::make_unique<onnx::ModelProto>(*model));
  py::gil_scoped_release release;
  return tools::calibration_scales(owned, {}, options);
}

Plan build_plan(const py::handle& network, const py::handle& config) {
  loaders::BuildConfig build;
  py::object calibrator = py::none();
  if (!config.is_none()) {
    build.fp16 = config.attr("fp16").cast<bool>();
    build.bf16 = config.attr("bf16").cast<bool>();
    build.int8 = config.attr("int8").cast<bool>();
    build.threads = config.attr("threads").cast<int>();
    build.fuse = config.attr("fuse").cast<bool>();
    if (!config.attr("profiles").is_none()) build.profiles = profiles_from_python(config.attr("profiles"));
    calibrator = py::getattr(config, "calibrator", py::none());
  }
  Model model = model_from_python(network);
  if (build.int8 && !calibrator.is_none()) build.int8_scales = calibrated_scales(model, calibrator);
  py::gil_scoped_release release;
  return Plan{loaders::plan_from_onnx(*model, build)};
}

py::list value_names(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values) {
  py::list names;
  for (const auto& value : values) names.append(value.name());
  return names;
}

}  // namespace

void bind_runners(py::module_& m) {
  py::class_<OnnxModel>(m, "OnnxModel", "An ONNX model held by parity (an onnx::ModelProto in C++).")
      .def_property("name", [](const OnnxModel& self) { return self.model->graph().name(); },
                    [](OnnxModel& self, const std::string& name) { self.model->mutable_graph()->set_name(name); },
                    "The graph's name.")
      .def_property_readonly("inputs", [](const OnnxModel& self) { return value_names(self.model->graph().input()); },
                             "Names of the graph inputs.")
      .def_property_readonly("outputs", [](const OnnxModel& self) { return value_names(self.model->graph().output()); },
                             "Names of the graph outputs.")
      .def_property_readonly("nodes",
                             [](const OnnxModel& self) {
                               py::list nodes;
                               for (const auto& node : self.model->graph().node())
                                 nodes.append(py::make_tuple(node.name(), node.op_type()));
                               return nodes;
                             },
                             "(name, op_type) of every node of the main graph, in order.")
      .def_property_readonly("opset",
                             [](const OnnxModel& self) -> int64_t {
                               for (const auto& import : self.model->opset_import())
                                 if (import.domain().empty() || import.domain() == "ai.onnx") return import.version();
                               return 0;
                             },
                             "The default domain's opset.")
      .def("mark_outputs",
           [](OnnxModel& self, const std::vector<std::string>& outputs, const std::vector<std::string>& exclude) {
             loaders::modify_outputs(*self.model, outputs, exclude);
           },
           py::arg("outputs"), py::arg("exclude") = std::vector<std::string>{},
           "Sets the graph outputs (ModifyOutputs): names, or ['mark', 'all'] for every value.")
      .def("copy", [](const OnnxModel& self) { return OnnxModel{std::make_shared<onnx::ModelProto>(*self.model)}; },
           "An independent copy.")
      .def("SerializeToString", [](const OnnxModel& self) { return py::bytes(loaders::bytes_from_onnx(*self.model)); },
           "The serialized ModelProto (as onnx.ModelProto.SerializeToString).")
      .def("__repr__", [](const OnnxModel& self) {
        return "<parity OnnxModel '" + self.model->graph().name() + "', " +
               std::to_string(self.model->graph().node_size()) + " nodes>";
      });
  m.def("onnx_from_path", [](const std::string& path) { return OnnxModel{loaders::onnx_from_path(path)}; },
        py::arg("path"), "Reads an ONNX model file.");
  m.def("onnx_from_bytes",
        [](const py::bytes& bytes) { return OnnxModel{loaders::onnx_from_bytes(std::string(bytes))}; },
        py::arg("bytes"), "Parses a serialized ModelProto.");
  m.def("to_onnx_model", [](const py::object& value) { return OnnxModel{model_from_python(value)}; },
        py::arg("model"), "An OnnxModel from an OnnxModel, onnx.ModelProto, bytes or a path.");
  m.def("bytes_from_onnx", [](const py::object& model) { return py::bytes(loaders::bytes_from_onnx(*model_from_python(model))); },
        py::arg("model"));
  m.def("save_onnx", [](const py::object& model, const std::string& path) { loaders::save_onnx(*model_from_python(model), path); },
        py::arg("model"), py::arg("path"), "Writes a model (atomically).");
  m.def("bytes_from_path", [](const std::string& path) { return py::bytes(loaders::bytes_from_path(path)); },
        py::arg("path"));

  py::class_<Plan>(m, "Plan", "A built parity plan (the engine): the ref runtime's planned session.")
      .def("serialize", [](const Plan& self) { return py::bytes(loaders::bytes_from_plan(*self.plan)); },
           "The plan file's bytes.")
      .def("save", [](const Plan& self, const std::string& path) { loaders::save_plan(*self.plan, path); },
           py::arg("path"));
  m.def("build_plan", &build_plan, py::arg("network"), py::arg("config") = py::none(),
        "Plans an ONNX model with a CreateConfig (fp16, bf16, int8, profiles, threads, fuse).");
  m.def("plan_from_bytes", [](const py::bytes& bytes) { return Plan{loaders::plan_from_bytes(std::string(bytes))}; },
        py::arg("bytes"));
  m.def("plan_from_path", [](const std::string& path) { return Plan{loaders::plan_from_path(path)}; }, py::arg("path"));

  py::class_<PyRunner>(m, "Runner", "A parity runner (runners/runner.h): activate, infer, deactivate.")
      .def_property_readonly("name", [](PyRunner& self) { return self.get().name(); })
      .def_property_readonly("is_active", [](PyRunner& self) { return self.runner && self.runner->is_active(); })
      .def("activate",
           [](PyRunner& self) {
             runners::Runner& runner = self.get();
             py::gil_scoped_release release;
             runner.activate();
           })
      .def("deactivate",
           [](PyRunner& self) {
             runners::Runner& runner = self.get();
             py::gil_scoped_release release;
             runner.deactivate();
           })
      .def("close", [](PyRunner& self) {
        if (self.runner && self.runner->is_active()) {
          py::gil_scoped_release release;
          self.runner->deactivate();
        }
        self.runner.reset();
      })
      .def("get_input_metadata", [](PyRunner& self) { return metadata_to_list(self.get().input_metadata()); })
      .def("infer", &infer, py::arg("feed_dict"), py::arg("check_inputs") = true, py::arg("copy_outputs") = true)
      .def("last_inference_time", [](PyRunner& self) { return self.get().last_inference_time(); });
  m.def("time_native_infer", &time_native_infer, py::arg("runner"), py::arg("feed_dict"), py::arg("iterations"),
        "Seconds of each Runner::infer call made from C++ on one feed (for the overhead benchmark).");
  m.def("make_onnx_runner", &make_onnx_runner, py::arg("runtime"), py::arg("model"),
        py::arg("options") = std::vector<std::string>{}, py::arg("base_dir") = std::string(), py::arg("name") = std::string(),
        "A runner of a registered runtime ('ref', 'ort', ...) over a model or model loader; `options` are the "
        "runtime's CLI options (['--precision', 'fp64']).");
  m.def("make_python_runner", &make_python_runner, py::arg("self"), py::arg("name") = std::string(),
        py::arg("prefix") = std::string("custom"),
        "The C++ side of a runner written in Python (its *_impl methods are called with the GIL).");
  m.def("make_plan_runner", &make_plan_runner, py::arg("plan"), py::arg("name") = std::string(),
        "The ref runner over a plan, plan bytes, an ONNX model, or a loader of one of them.");
  m.def("runner_names", [] {
    std::vector<std::string> names;
    for (const auto& info : runners::RunnerRegistry::instance().all()) names.push_back(info.name);
    return names;
  });
}

}  // namespace parity::python
