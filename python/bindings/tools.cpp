// The logger and the CLI in-process (parity.tools.main).
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bindings/bindings.h"
#include "cli/command.h"
#include "core/logger.h"

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

}  // namespace

void bind_tools(py::module_& m) {
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
