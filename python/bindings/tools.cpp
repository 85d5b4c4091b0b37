// The logger and the CLI in-process (parity.tools.main).
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <memory>

#include <string>
#include <vector>

#include "bindings/bindings.h"
#include "cli/command.h"
#include "bindings/models.h"
#include "core/logger.h"
#include "tools/navigator/package.h"

namespace parity::python {

namespace {

int run_cli(const std::vector<std::string>& arguments) {
  std::vector<std::string> tokens{"parity"};
  tokens.insert(tokens.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& token : tokens) argv.push_back(token.data());
  argv.push_back(nullptr);
  py::gil_scoped_release release;
  const int code = cli::main_entry(static_cast<int>(tokens.size()), argv.data());
  std::fflush(stdout);
  std::fflush(stderr);
  return code;
}

namespace nav = tools::navigator;

/// The step states of one format x runtime, {step: "OK" | "FAIL" | "SKIPPED" | "NOT_RUN"}.
py::dict cell_steps(const nav::RuntimeStatus& runtime) {
  py::dict steps;
  for (const auto& [name, step] : runtime.steps) steps[py::str(name)] = nav::step_state_name(step.state);
  return steps;
}

void bind_package(py::module_& m) {
  py::class_<nav::PackageDescriptor>(m, "PackageDescriptor", "A navigator workspace (tools/navigator/package.h).")
      .def(py::init<std::filesystem::path>(), py::arg("workspace"))
      .def_static("load",
                  [](const std::filesystem::path& package, const std::filesystem::path& target, bool retest) {
                    nav::LoadOptions options;
                    options.retest = retest;
                    py::gil_scoped_release release;
                    return nav::PackageDescriptor::load(package, target, options);
                  },
                  py::arg("package"), py::arg("target"), py::arg("retest") = true)
      .def_property_readonly("workspace", &nav::PackageDescriptor::workspace)
      .def("get_formats_status", &nav::PackageDescriptor::get_formats_status)
      .def("get_formats_performance", &nav::PackageDescriptor::get_formats_performance)
      .def("get_status", &nav::PackageDescriptor::get_status, py::arg("format"), py::arg("runtime") = py::none())
      .def("get_model", &nav::PackageDescriptor::get_model, py::arg("format"))
      .def("get_runner",
           [](const nav::PackageDescriptor& self, const std::string& format, const std::string& runtime) {
             auto made = std::make_unique<PyRunner>();
             made->runner = self.get_runner(format, runtime);
             return made;
           },
           py::arg("format"), py::arg("runtime"))
      .def("set_verified", &nav::PackageDescriptor::set_verified, py::arg("format"), py::arg("runtime"),
           py::arg("verified") = true)
      .def("save",
           [](const nav::PackageDescriptor& self, const std::filesystem::path& path, bool keep_data, bool override_file) {
             py::gil_scoped_release release;
             self.save(path, nav::SaveOptions{.keep_data = keep_data, .override = override_file});
           },
           py::arg("path"), py::arg("keep_data") = true, py::arg("override") = false)
      .def("cells",
           [](const nav::PackageDescriptor& self) {
             py::list cells;
             for (const auto& format : self.status().formats)
               for (const auto& runtime : format.runtimes)
                 cells.append(py::make_tuple(format.format, runtime.runtime, cell_steps(runtime)));
             return cells;
           },
           "(format, runtime, {step: state}) of every cell.");
}

}  // namespace

void bind_tools(py::module_& m) {
  bind_package(m);
  m.def("cli_main", &run_cli, py::arg("arguments"),
        "Runs a parity command in this process (arguments without the program name); returns its exit code.");
  m.def("set_severity",
        [](const std::string& name) {
          auto severity = severity_from_name(name);
          if (!severity) throw py::value_error("unknown log severity '" + name + "'");
          logger().set_severity(*severity);
        },
        py::arg("name"), "Sets the threshold of parity's logger (verbose, info, warning, error, ...).");
  m.def("severity", [] { return static_cast<int>(logger().severity()); }, "The logger's threshold as a number.");
  m.def("set_severity_level", [](int level) { logger().set_severity(static_cast<Severity>(level)); }, py::arg("level"));
  m.def("log",
        [](int level, const std::string& message) {
          py::gil_scoped_release release;
          logger().log(static_cast<Severity>(level), message);
        },
        py::arg("level"), py::arg("message"));
}

}  // namespace parity::python
