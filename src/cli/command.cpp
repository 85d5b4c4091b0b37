#include "cli/command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "cli/command_parser.h"
#include "cli/manual.h"
#include "core/formats/file_io.h"
#include "core/log_format.h"
#include "core/logger.h"
#include "runners/extension.h"
#include "runtime/cpu_isa.h"
#include "tools/version_report.h"

namespace parity::cli {

CommandRegistry& CommandRegistry::instance() {
  static CommandRegistry registry;
  return registry;
}

void CommandRegistry::add(CommandFactory factory) { factories_.push_back(std::move(factory)); }

std::vector<std::unique_ptr<Command>> CommandRegistry::create_all() const {
  std::vector<std::unique_ptr<Command>> out;
  for (const auto& f : factories_) out.push_back(f());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a->name() < b->name(); });
  return out;
}

void add_logging_options(options::ArgParser& parser) {
  parser.group("Logging");
  parser.add({.flags = {"-v", "--verbose"}, .help = "Increase logging verbosity (repeatable)", .arity = options::Arity::kCount});
  parser.add({.flags = {"-q", "--quiet"}, .help = "Decrease logging verbosity (repeatable)", .arity = options::Arity::kCount});
  parser.add({.flags = {"--verbosity"},
              .help = "Logging threshold: ultra_verbose, super_verbose, extra_verbose, verbose, info, "
                      "warning, error, critical",
              .metavar = "LEVEL"});
  parser.add({.flags = {"--silent"}, .help = "Print nothing", .arity = options::Arity::kFlag});
  parser.add({.flags = {"--log-file"}, .help = "Also write logging output to this file", .metavar = "PATH"});
  parser.add({.flags = {"--no-color"}, .help = "Never colour output (colours are only used on a terminal)",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--log-format"},
              .help = "Log line format: timestamp (prefix the time), no-colors (as --no-color), line-info "
                      "(accepted; parity's log lines carry no source locations)",
              .metavar = "FORMAT", .arity = options::Arity::kOneOrMore,
              .choices = {"timestamp", "line-info", "no-colors"}});
}

void apply_logging_options(const options::Args& args) {
  Logger& log = logger();
  if (auto level = args.get("verbosity")) {
    auto s = severity_from_name(*level);
    PARITY_CHECK(s, kInvalidArgument, "unknown --verbosity '", *level,
                 "'; use one of: ultra_verbose, super_verbose, extra_verbose, verbose, info, warning, "
                 "error, critical");
    log.set_severity(*s);
  }
  log.adjust_verbosity(args.count("verbose") - args.count("quiet"));
  if (args.flag("silent")) log.set_severity(Severity::kSilent);
  if (args.flag("no_color")) log.set_colors(false);
  if (auto path = args.get("log_file")) log.set_log_file(*path);
  const std::vector<std::string> formats = args.list("log_format");
  auto wants = [&](const char* format) { return std::find(formats.begin(), formats.end(), format) != formats.end(); };
  if (wants("no-colors")) log.set_colors(false);
  if (wants("timestamp")) set_log_timestamps(true);
  // Polygraphy prefixes the Python file and line that logged; parity's messages come from C++
  // code whose locations mean nothing to a user, so the format is accepted and changes nothing.
  if (wants("line-info")) log.verbose("--log-format line-info: parity's log lines carry no source locations");
}

namespace {

std::string joined_command(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

std::string& command_line_storage() {
  static std::string line;
  return line;
}

// Where parity's own options end: `--check CMD...` (the debug tools) takes the rest of the line
// as another command's, whose --extension or --help are not parity's.
size_t own_tokens_end(const std::vector<std::string>& tokens) {
  return static_cast<size_t>(std::find(tokens.begin(), tokens.end(), "--check") - tokens.begin());
}

// Extensions come first: their runners add flags and option groups to the commands' parsers.
// `--extension PATH` may precede the subcommand (removed from tokens here) or stand among its
// options (kept: every command's parser defines it). Returns the paths given that are unavailable
// (reported once logging is set up) or throws when a leading --extension has no PATH.
std::vector<std::pair<std::string, Status>> load_extensions(std::vector<std::string>& tokens) {
  runners::load_default_extensions();
  std::vector<std::string> paths;
  while (!tokens.empty() && (tokens[0] == "--extension" || tokens[0].rfind("--extension=", 0) == 0)) {
    if (tokens[0] == "--extension") {
      PARITY_CHECK(tokens.size() >= 2, kInvalidArgument, "--extension needs a PATH");
      paths.push_back(tokens[1]);
      tokens.erase(tokens.begin(), tokens.begin() + 2);
    } else {
      paths.push_back(tokens[0].substr(std::string("--extension=").size()));
      tokens.erase(tokens.begin());
    }
  }
  for (size_t i = 0; i < own_tokens_end(tokens); ++i) {
    if (tokens[i] == "--extension" && i + 1 < tokens.size())
      paths.push_back(tokens[i + 1]);
    else if (tokens[i].rfind("--extension=", 0) == 0)
      paths.push_back(tokens[i].substr(std::string("--extension=").size()));
  }
  std::vector<std::pair<std::string, Status>> unavailable;
  for (const auto& path : paths) {
    Status status = runners::load_extension(path);
    if (!status.is_ok()) unavailable.emplace_back(path, std::move(status));
  }
  return unavailable;
}

// Logging options a Polygraphy user may put between a tool and its subtool
// (`inspect -v model M`); the value-taking ones consume the next token.
bool is_logging_flag(const std::string& t) {
  if (t == "--verbose" || t == "--quiet" || t == "--silent" || t == "--no-color") return true;
  return t.size() >= 2 && t[0] == '-' && (t[1] == 'v' || t[1] == 'q') && t.find_first_not_of(t[1], 1) == std::string::npos;
}
bool is_logging_option_with_value(const std::string& t) { return t == "--verbosity" || t == "--log-file"; }

// Moves logging options found right after a tool word behind its subtool word, where the
// subtool's parser reads them: `inspect -v model M` becomes `inspect model -v M`.
void hoist_tool_level_logging(std::vector<std::string>& tokens, const std::vector<std::unique_ptr<Command>>& commands) {
  if (tokens.size() < 3) return;
  const bool is_tool = std::any_of(commands.begin(), commands.end(),
                                   [&](const auto& c) { return c->name().rfind(tokens[0] + " ", 0) == 0; });
  if (!is_tool) return;
  std::vector<std::string> moved;
  size_t i = 1;
  while (i < tokens.size()) {
    const std::string& t = tokens[i];
    const bool inline_value = t.rfind("--verbosity=", 0) == 0 || t.rfind("--log-file=", 0) == 0;
    if (is_logging_option_with_value(t) && i + 1 < tokens.size()) {
      moved.insert(moved.end(), {t, tokens[i + 1]});
      i += 2;
    } else if (is_logging_flag(t) || inline_value) {
      moved.push_back(t);
      ++i;
    } else {
      break;
    }
  }
  if (moved.empty() || i >= tokens.size()) return;
  std::vector<std::string> out = {tokens[0], tokens[i]};
  out.insert(out.end(), moved.begin(), moved.end());
  out.insert(out.end(), tokens.begin() + static_cast<long>(i) + 1, tokens.end());
  tokens = std::move(out);
}

// `polygraphy -v` / `--version` print "Polygraphy | Version: V | Path: [...]"; parity's first line
// says the same of itself, and the lines after it what a bug report needs (tools/version_report.h).
void print_version() {
  std::fputs(tools::format_version_report(tools::collect_version_report({})).c_str(), stdout);
  std::fflush(stdout);
}

}  // namespace

const std::string& current_command_line() { return command_line_storage(); }

/// --isa caps oneDNN's JIT for the whole process (runtime::cap_dnnl_isa), which only works before
/// its first primitive: hence here, before the command runs. parity's own kernels take the cap
/// from SessionOptions (the runners and the plan build read the same option).
void apply_isa_option(const options::Args& args) {
  const std::optional<std::string> isa = args.get("isa");
  if (!isa) return;
  const std::optional<runtime::KernelIsa> cap = runtime::parse_kernel_isa(*isa);
  PARITY_CHECK(cap.has_value(), kInvalidArgument, "--isa must be native, avx512, avx2 or baseline, got '", *isa, "'");
  if (!runtime::cap_dnnl_isa(*cap)) logger().warning("--isa ", *isa, ": oneDNN's ISA could not be capped in this process");
}

options::ArgParser make_command_parser(Command& command) {
  options::ArgParser parser("parity " + command.name(), command.summary());
  parser.group("Options");
  parser.add({.flags = {"-h", "--help"}, .help = "Show this help and exit", .arity = options::Arity::kFlag});
  command.add_options(parser);
  parser.group("Extensions");
  parser.add({.flags = {"--extension"},
              .help = "Load an extension module (a shared library, or a folder of them) before running; "
                      "repeatable. Also: $PARITY_EXTENSION_PATH and <prefix>/lib/parity/extensions",
              .metavar = "PATH"});  // one PATH per occurrence, as the pre-scan reads it
  add_logging_options(parser);
  return parser;
}

int main_entry(int argc, char** argv) {
  const auto start = std::chrono::steady_clock::now();
  const std::string command_line = joined_command(argc, argv);
  auto commands = CommandRegistry::instance().create_all();
  command_line_storage() = command_line;
  std::vector<std::string> tokens(argv + 1, argv + argc);
  std::vector<std::pair<std::string, Status>> unavailable_extensions;
  try {
    unavailable_extensions = load_extensions(tokens);
  } catch (const Error& e) {
    std::fprintf(stderr, "[E] %s\n", e.what());
    return kExitFailed;
  }

  if (tokens.empty() || tokens[0] == "-h" || tokens[0] == "--help") {
    std::fputs(top_level_help(commands).c_str(), stdout);
    return tokens.empty() ? kExitFailed : kExitPassed;
  }
  if (tokens[0] == "--version" || (tokens[0] == "-v" && tokens.size() == 1)) {
    print_version();
    return kExitPassed;
  }
  if (tokens[0] == "help") {
    try {
      return run_help(std::vector<std::string>(tokens.begin() + 1, tokens.end()), commands);
    } catch (const Error& e) {
      std::fprintf(stderr, "[E] %s\n", e.what());
      return kExitFailed;
    }
  }
  hoist_tool_level_logging(tokens, commands);
  // Polygraphy-style spelling of `parity runners`.
  if (tokens[0] == "--list-runners") tokens[0] = "runners";

  // Find the command whose words match the longest prefix of the tokens.
  Command* chosen = nullptr;
  size_t words_used = 0;
  for (const auto& c : commands) {
    std::vector<std::string> words;
    std::string name = c->name();
    for (size_t pos = 0; pos != std::string::npos;) {
      size_t sp = name.find(' ', pos);
      words.push_back(name.substr(pos, sp == std::string::npos ? sp : sp - pos));
      pos = sp == std::string::npos ? sp : sp + 1;
    }
    if (words.size() > tokens.size() || words.size() <= words_used) continue;
    if (std::equal(words.begin(), words.end(), tokens.begin())) {
      chosen = c.get();
      words_used = words.size();
    }
  }
  if (!chosen) {
    // A tool name with subtools ("inspect") or a typo: list what exists under that word.
    std::vector<std::string> under;
    for (const auto& c : commands)
      if (c->name().rfind(tokens[0] + " ", 0) == 0) under.push_back(c->name());
    if (!under.empty()) {
      const bool wants_help = tokens.size() == 1 || tokens[1] == "-h" || tokens[1] == "--help";
      if (!wants_help) std::fprintf(stderr, "[E] unknown subcommand 'parity %s %s'\n", tokens[0].c_str(), tokens[1].c_str());
      std::printf("usage: parity %s <subcommand> [options]\n\nSubcommands:\n", tokens[0].c_str());
      for (const auto& c : commands)
        if (c->name().rfind(tokens[0] + " ", 0) == 0)
          std::printf("  %-26s %s\n", c->name().c_str(), c->summary().c_str());
      return wants_help ? kExitPassed : kExitFailed;
    }
    std::fprintf(stderr, "[E] unknown command '%s'; run `parity --help` to list commands\n", tokens[0].c_str());
    return kExitFailed;
  }

  const options::ArgParser parser = make_command_parser(*chosen);
  std::vector<std::string> rest(tokens.begin() + static_cast<long>(words_used), tokens.end());
  const auto own_end = rest.begin() + static_cast<long>(own_tokens_end(rest));
  if (std::find(rest.begin(), own_end, "-h") != own_end || std::find(rest.begin(), own_end, "--help") != own_end) {
    std::printf("%s", parser.help().c_str());
    return kExitPassed;
  }

  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  auto finish_line = [&](bool passed) {
    const std::string runtime = fmt::format("{:.3f}", elapsed());
    if (passed && chosen->logs_passed_line())
      logger().finish("PASSED | Runtime: ", runtime, "s | Command: ", command_line);
    else if (!passed)
      logger().error("FAILED | Runtime: ", runtime, "s | Command: ", command_line);
  };

  int code = kExitFailed;
  // A command never writes over a file it read (its model, weights, loaded data).
  struct InputTracking {
    InputTracking() { formats::set_input_tracking(true); }
    ~InputTracking() { formats::set_input_tracking(false); }
  } tracking;
  try {
    options::Args args = parser.parse(rest);
    apply_logging_options(args);
    apply_isa_option(args);
    for (const auto& [path, status] : unavailable_extensions)
      logger().warning("--extension ", path, " is unavailable: ", status.message());
    code = chosen->run(args);
  } catch (const Error& e) {
    if (e.is_internal()) {
      logger().critical("internal error (this is a bug in parity; please report it): ", e.what());
      finish_line(false);
      return kExitInternal;
    }
    logger().error(e.what());
    finish_line(false);
    return kExitFailed;
  } catch (const std::bad_alloc&) {
    logger().error("out of memory");
    finish_line(false);
    return kExitFailed;
  } catch (const std::exception& e) {
    logger().critical("internal error (this is a bug in parity; please report it): ", e.what());
    finish_line(false);
    return kExitInternal;
  }
  finish_line(code == kExitPassed);
  return code;
}

}  // namespace parity::cli
