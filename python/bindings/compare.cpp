// Polygraphy's comparator module over parity's: DataLoader, Comparator, RunResults, compare
// functions and AccuracyResult.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bindings/arrays.h"
#include "bindings/bindings.h"
#include "bindings/models.h"
#include "bindings/python_object.h"
#include "compare/comparator.h"
#include "compare/compare_func.h"
#include "compare/data_loader.h"
#include "core/formats/polygraphy_json.h"
#include "runners/runner.h"

namespace parity::python {

namespace {

using compare::ValueRange;

std::optional<ValueRange> range_from_python(const py::handle& value) {
  if (value.is_none()) return std::nullopt;
  py::sequence pair = py::reinterpret_borrow<py::sequence>(value);
  if (pair.size() != 2) throw py::value_error("a value range is a (min, max) pair");
  return ValueRange{pair[0].cast<double>(), pair[1].cast<double>()};
}

/// Polygraphy's DataLoader: parity's (the same values for the same seed), plus the deprecated
/// int_range and float_range, which apply by dtype once the model's inputs are known.
class PyDataLoader : public compare::FeedSource {
 public:
  PyDataLoader(int64_t seed, int64_t iterations, const py::handle& val_range, const py::handle& int_range,
               const py::handle& float_range, const py::handle& input_metadata)
      : int_range_(range_from_python(int_range)), float_range_(range_from_python(float_range)) {
    loader_.seed(seed).iterations(iterations);
    if (py::isinstance<py::dict>(val_range)) {
      for (auto [name, range] : py::reinterpret_borrow<py::dict>(val_range)) {
        const std::string key = py::str(name);
        loader_.val_range(key, *range_from_python(range));
        if (!key.empty()) named_ranges_.insert(key);
      }
    } else if (auto range = range_from_python(val_range)) {
      loader_.val_range("", *range);
    }
    if (!input_metadata.is_none()) set_input_metadata(metadata_from_python(input_metadata));
  }

  void set_input_metadata(const TensorMetadata& metadata) override {
    for (const TensorMeta& meta : metadata) {
      if (named_ranges_.count(meta.name)) continue;
      const bool is_float = meta.dtype == DType::kFloat32 || meta.dtype == DType::kFloat16 ||
                            meta.dtype == DType::kFloat64 || meta.dtype == DType::kBFloat16;
      const std::optional<ValueRange>& range = is_float ? float_range_ : int_range_;
      if (range) loader_.val_range(meta.name, *range);
    }
    loader_.set_input_metadata(metadata);
    has_metadata_ = true;
  }
  std::optional<TensorMap> feed(size_t index) override { return loader_.feed(index); }

  py::dict item(int64_t index) {
    if (!has_metadata_)
      throw py::value_error("the DataLoader does not know the model's inputs yet: give it input_metadata");
    if (index < 0 || index >= loader_.iteration_count()) throw py::index_error("DataLoader index out of range");
    TensorMap feed;
    {
      py::gil_scoped_release release;
      feed = loader_.generate(static_cast<size_t>(index));
    }
    return dict_from_tensor_map(feed, false);
  }
  int64_t size() const { return loader_.iteration_count(); }
  int64_t seed() const { return loader_.seed_value(); }

 private:
  compare::DataLoader loader_;
  std::optional<ValueRange> int_range_, float_range_;
  std::set<std::string> named_ranges_;
  bool has_metadata_ = false;
};

/// Any Python iterable of feed dicts (a list, a generator). A data loader with an
/// `input_metadata` attribute is told the inputs first, as Polygraphy's Comparator does.
/// Consumers may read the feeds more than once (entropy calibration makes two passes): an
/// iterable that makes a fresh iterator each time (a list, a loader class) is iterated again,
/// while a one-shot iterator (a generator) keeps the feeds it gave for the next pass.
class IterableFeeds : public compare::FeedSource {
 public:
  explicit IterableFeeds(py::object iterable) : iterable_(share(std::move(iterable))) {}

  void set_input_metadata(const TensorMetadata& metadata) override {
    py::gil_scoped_acquire gil;
    if (py::hasattr(*iterable_, "input_metadata")) {
      try {
        iterable_->attr("input_metadata") = metadata_to_list(metadata);
      } catch (const py::error_already_set&) {
        // A read-only property: the loader knows its inputs itself.
      }
    }
  }
  std::optional<TensorMap> feed(size_t index) override {
    py::gil_scoped_acquire gil;
    if (index < kept_.size()) return kept_[index];
    if (index < next_index_ || !iterator_) restart();
    while (next_index_ < index) {
      if (!next_feed()) return std::nullopt;
    }
    return next_feed();
  }

 private:
  void restart() {
    iterator_ = share(py::iter(*iterable_));
    one_shot_ = iterator_->is(*iterable_);
    next_index_ = 0;
  }
  std::optional<TensorMap> next_feed() {
    PyObject* next = PyIter_Next(iterator_->ptr());
    if (!next) {
      if (PyErr_Occurred()) throw py::error_already_set();
      return std::nullopt;
    }
    py::object feed = py::reinterpret_steal<py::object>(next);
    TensorMap map = tensor_map_from_dict(feed, "feed " + std::to_string(next_index_) + " of the data loader");
    if (one_shot_ && next_index_ == kept_.size()) kept_.push_back(map);
    ++next_index_;
    return map;
  }

  SharedObject iterable_;
  SharedObject iterator_;
  bool one_shot_ = false;
  size_t next_index_ = 0;
  std::vector<TensorMap> kept_;  // a one-shot iterator's feeds, for later passes
};

/// A compare function as Polygraphy's CompareFunc.* return it.
struct PyCompareFunc {
  compare::CompareFunc func;
};

template <typename T>
compare::PerOutput<T> per_output(const py::handle& value, T fallback) {
  compare::PerOutput<T> out(fallback);
  if (value.is_none()) return out;
  if (py::isinstance<py::dict>(value)) {
    for (auto [name, v] : py::reinterpret_borrow<py::dict>(value)) out.set(py::str(name), v.template cast<T>());
    return out;
  }
  out.set("", value.template cast<T>());
  return out;
}

compare::ErrorStat error_stat(const py::handle& value) {
  auto stat = compare::error_stat_from_name(value.cast<std::string>());
  if (!stat) throw py::value_error("unknown check_error_stat '" + value.cast<std::string>() + "'");
  return *stat;
}

PyCompareFunc simple(bool check_shapes, const py::object& rtol, const py::object& atol, bool fail_fast,
                     const py::object& check_error_stat, bool infinities_compare_equal, const py::object& error_quantile) {
  compare::SimpleCompareOptions options;
  options.check_shapes = check_shapes;
  options.rtol = per_output<double>(rtol, 1e-5);
  options.atol = per_output<double>(atol, 1e-5);
  options.fail_fast = fail_fast;
  options.infinities_compare_equal = infinities_compare_equal;
  options.error_quantile = per_output<double>(error_quantile, 0.99);
  if (py::isinstance<py::dict>(check_error_stat)) {
    compare::PerOutput<compare::ErrorStat> stats(compare::ErrorStat::kElemwise);
    for (auto [name, v] : py::reinterpret_borrow<py::dict>(check_error_stat)) stats.set(py::str(name), error_stat(v));
    options.check_error_stat = stats;
  } else if (!check_error_stat.is_none()) {
    options.check_error_stat = error_stat(check_error_stat);
  }
  return {compare::compare_funcs::simple(options)};
}

PyCompareFunc indices(const py::object& index_tolerance, bool fail_fast) {
  compare::IndicesCompareOptions options;
  options.index_tolerance = per_output<int64_t>(index_tolerance, 0);
  options.fail_fast = fail_fast;
  return {compare::compare_funcs::indices(options)};
}

py::dict iteration_outputs(const IterationResult& iteration) { return dict_from_tensor_map(iteration.outputs, false); }

/// A DataLoader that Python owns, used from C++ while the Python object is kept alive.
class BorrowedDataLoader : public compare::FeedSource {
 public:
  explicit BorrowedDataLoader(py::object loader)
      : loader_(&loader.cast<PyDataLoader&>()), keep_alive_(share(std::move(loader))) {}
  void set_input_metadata(const TensorMetadata& metadata) override { loader_->set_input_metadata(metadata); }
  std::optional<TensorMap> feed(size_t index) override { return loader_->feed(index); }

 private:
  PyDataLoader* loader_;
  SharedObject keep_alive_;
};

RunResults run(const std::vector<PyRunner*>& py_runners, const py::object& data_loader, int warm_up) {
  std::vector<runners::Runner*> runners;
  for (PyRunner* runner : py_runners) runners.push_back(&runner->get());
  std::unique_ptr<compare::FeedSource> feeds = feed_source_from_python(data_loader);
  compare::RunOptions options;
  options.warm_up = warm_up;
  py::gil_scoped_release release;
  return compare::Comparator::run(runners, *feeds, options);
}

}  // namespace

std::unique_ptr<compare::FeedSource> feed_source_from_python(const py::object& data_loader) {
  if (data_loader.is_none()) return std::make_unique<compare::DataLoader>();
  if (py::isinstance<PyDataLoader>(data_loader)) return std::make_unique<BorrowedDataLoader>(data_loader);
  return std::make_unique<IterableFeeds>(data_loader);
}

void bind_compare(py::module_& m) {
  py::class_<PyDataLoader>(m, "DataLoader", "Seeded random inputs, bit-identical to Polygraphy's DataLoader.")
      .def(py::init<int64_t, int64_t, py::object, py::object, py::object, py::object>(), py::arg("seed") = 1,
           py::arg("iterations") = 1, py::arg("val_range") = py::none(), py::arg("int_range") = py::none(),
           py::arg("float_range") = py::none(), py::arg("input_metadata") = py::none())
      .def_property("input_metadata", [](const PyDataLoader&) { return py::none(); },
                    [](PyDataLoader& self, const py::object& metadata) { self.set_input_metadata(metadata_from_python(metadata)); })
      .def_property_readonly("seed", &PyDataLoader::seed)
      .def("__len__", &PyDataLoader::size)
      .def("__getitem__", &PyDataLoader::item, py::arg("index"));

  py::class_<IterationResult>(m, "IterationResult", "The outputs of one inference (Polygraphy's IterationResult).")
      .def_readonly("runner_name", &IterationResult::runner_name)
      .def_readonly("runtime", &IterationResult::runtime)
      .def("keys", [](const IterationResult& self) { return self.outputs.names(); })
      .def("__len__", [](const IterationResult& self) { return self.outputs.size(); })
      .def("__contains__", [](const IterationResult& self, const std::string& name) { return self.outputs.contains(name); })
      .def("__getitem__", [](const IterationResult& self, const std::string& name) {
        const Tensor* tensor = self.outputs.find(name);
        if (!tensor) throw py::key_error(name);
        return array_from_tensor(*tensor);
      })
      .def("items", [](const IterationResult& self) { return iteration_outputs(self).attr("items")(); })
      .def("values", [](const IterationResult& self) { return iteration_outputs(self).attr("values")(); })
      .def("as_dict", &iteration_outputs, "The outputs as {name: numpy.ndarray}.")
      .def("__iter__", [](const IterationResult& self) { return py::iter(py::cast(self.outputs.names())); });

  py::class_<RunResults>(m, "RunResults", "Per-runner iteration results in run order (Polygraphy's RunResults).")
      .def(py::init<>())
      .def("__len__", &RunResults::size)
      .def("keys", [](const RunResults& self) {
        std::vector<std::string> names;
        for (const auto& run : self.runs) names.push_back(run.first);
        return names;
      })
      .def("runner_iterations", [](RunResults& self, size_t index) -> std::vector<IterationResult>& {
        if (index >= self.runs.size()) throw py::index_error("RunResults index out of range");
        return self.runs[index].second;
      }, py::return_value_policy::reference_internal)
      .def("add_iterations",
           [](RunResults& self, const std::string& runner_name, const py::list& iterations) {
             std::vector<IterationResult> results;
             for (py::handle outputs : iterations)
               results.push_back({tensor_map_from_dict(outputs, "outputs of " + runner_name).clone(), std::nullopt, runner_name});
             self.add(runner_name, std::move(results));
           },
           py::arg("runner_name"), py::arg("iterations"), "Appends a runner's iterations (a list of output dicts).")
      .def("save", [](const RunResults& self, const std::string& path) { write_run_results(path, self); }, py::arg("path"),
           "Writes Polygraphy's JSON (run --save-outputs), readable by parity and polygraphy inspect data.")
      .def_static("load", &read_run_results, py::arg("path"), "Reads a RunResults JSON file.");

  m.def("save_inputs",
        [](const py::list& feeds, const std::string& path) {
          std::vector<TensorMap> iterations;
          for (py::handle feed : feeds) iterations.push_back(tensor_map_from_dict(feed, "feed"));
          write_inputs_json(path, iterations);
        },
        py::arg("feeds"), py::arg("path"), "Writes a list of feed dicts as Polygraphy's --save-inputs JSON.");
  m.def("load_inputs",
        [](const std::string& path) {
          py::list out;
          for (const TensorMap& feed : read_inputs_json(path)) out.append(dict_from_tensor_map(feed, false));
          return out;
        },
        py::arg("path"), "Reads a --save-inputs JSON file as a list of feed dicts.");

  py::class_<PyCompareFunc>(m, "CompareFunc", "A function that compares two IterationResults.");
  m.def("compare_func_simple", &simple, py::arg("check_shapes") = true, py::arg("rtol") = py::none(),
        py::arg("atol") = py::none(), py::arg("fail_fast") = false, py::arg("check_error_stat") = py::none(),
        py::arg("infinities_compare_equal") = false, py::arg("error_quantile") = py::none());
  m.def("compare_func_indices", &indices, py::arg("index_tolerance") = py::none(), py::arg("fail_fast") = false);

  py::class_<compare::OutputCompareResult>(m, "OutputCompareResult")
      .def("__bool__", [](const compare::OutputCompareResult& self) { return self.passed; })
      .def_readonly("passed", &compare::OutputCompareResult::passed)
      .def_readonly("max_absdiff", &compare::OutputCompareResult::max_absdiff)
      .def_readonly("max_reldiff", &compare::OutputCompareResult::max_reldiff)
      .def_readonly("mean_absdiff", &compare::OutputCompareResult::mean_absdiff)
      .def_readonly("mean_reldiff", &compare::OutputCompareResult::mean_reldiff)
      .def_readonly("median_absdiff", &compare::OutputCompareResult::median_absdiff)
      .def_readonly("median_reldiff", &compare::OutputCompareResult::median_reldiff)
      .def("__repr__", &compare::OutputCompareResult::to_string);

  py::class_<compare::AccuracyResult>(m, "AccuracyResult", "Per runner pair, one {output: OutputCompareResult} per iteration.")
      .def("__bool__", [](const compare::AccuracyResult& self) { return static_cast<bool>(self); })
      .def("stats", [](const compare::AccuracyResult& self, size_t pair) {
        const auto stats = self.stats(pair);
        return py::make_tuple(stats.passed, stats.failed, stats.total);
      }, py::arg("runner_pair_index") = 0, "(passed, failed, total) iterations of a runner pair.")
      .def("percentage", &compare::AccuracyResult::percentage, py::arg("runner_pair_index") = 0,
           "Fraction of iterations that passed.")
      .def("items", [](const compare::AccuracyResult& self) {
        py::list out;
        for (const auto& pair : self.pairs()) {
          py::list iterations;
          for (const auto& match : pair.iterations) {
            py::dict outputs;
            for (const auto& [name, result] : match) outputs[py::str(name)] = py::cast(result);
            iterations.append(outputs);
          }
          out.append(py::make_tuple(py::make_tuple(pair.runner0, pair.runner1), iterations));
        }
        return out;
      })
      .def("__len__", [](const compare::AccuracyResult& self) { return self.pairs().size(); });

  m.def("comparator_run", &run, py::arg("runners"), py::arg("data_loader") = py::none(), py::arg("warm_up") = 0,
        "Runs each runner on every feed of the data loader (activating it for the run).");
  m.def("compare_accuracy",
        [](const RunResults& results, const std::optional<PyCompareFunc>& func,
           std::optional<std::vector<std::pair<size_t, size_t>>> comparisons, bool fail_fast) {
          py::gil_scoped_release release;
          return compare::Comparator::compare_accuracy(results, func ? func->func : compare::CompareFunc{},
                                                       std::move(comparisons), fail_fast);
        },
        py::arg("run_results"), py::arg("compare_func") = py::none(), py::arg("comparisons") = py::none(),
        py::arg("fail_fast") = false);
  m.def("validate",
        [](const RunResults& results, bool check_inf, bool check_nan, bool fail_fast) {
          py::gil_scoped_release release;
          return compare::Comparator::validate(results, check_inf, check_nan, fail_fast);
        },
        py::arg("run_results"), py::arg("check_inf") = false, py::arg("check_nan") = true, py::arg("fail_fast") = false);
}

}  // namespace parity::python
