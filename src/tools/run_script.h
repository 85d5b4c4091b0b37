// `parity run ... --gen-script FILE.cpp`: writes a standalone C++ program (and a CMake snippet to
// build it) that does what the command line would do through parity's public C++ API, without
// running anything: Polygraphy's `--gen-script`, which turns a command line into an API script.
#pragma once

#include <string>
#include <vector>

#include "options/args.h"

namespace parity::tools {

/// The program and its CMake snippet.
struct RunScript {
  std::string program;  // FILE.cpp
  std::string cmake;    // FILE.cmake: include() it after find_package(parity) or on its own
};

/// Builds the program for `parity run` with these parsed options. `runner_names` are the selected
/// runners in command-line order; `command_line` is quoted in the program's header; `target` names
/// the executable the CMake snippet defines. Options the generator cannot express (e.g.
/// --postprocess) are a kInvalidArgument error naming them.
RunScript generate_run_script(const options::Args& args, const std::vector<std::string>& runner_names,
                              const std::string& command_line, const std::string& target);

/// The CMake snippet that builds TARGET.cpp (beside it) against an installed parity; `generator`
/// names the command in its header comment.
std::string program_cmake_snippet(const std::string& target, const std::string& generator);

/// Writes FILE.cpp and, beside it, the snippet as FILE.cmake (FILE without its extension).
/// Returns the snippet's path.
std::string write_run_script(const std::string& path, const RunScript& script);

/// `--gen-script FILE.cpp` in one call: the program for `command_line` (with its --gen-script
/// option left out of the quoted line), its executable named after FILE, written as FILE.cpp and
/// FILE.cmake. Returns the snippet's path.
std::string write_run_script_for(const std::string& path, const options::Args& args,
                                 const std::vector<std::string>& runner_names, std::string command_line);

}  // namespace parity::tools
