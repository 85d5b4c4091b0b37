#include "cli/command.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include "core/logger.h"
#include "core/version.h"

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

void add_logging_options(ArgParser& parser) {
  parser.group("Logging");
  parser.add({.flags = {"-v", "--verbose"}, .help = "Increase logging verbosity (repeatable)", .arity = Arity::kCount});
  parser.add({.flags = {"-q", "--quiet"}, .help = "Decrease logging verbosity (repeatable)", .arity = Arity::kCount});
  parser.add({.flags = {"--verbosity"},
              .help = "Logging threshold: ultra_verbose, super_verbose, extra_verbose, verbose, info, "
                      "warning, error, critical",
              .metavar = "LEVEL"});
  parser.add({.flags = {"--silent"}, .help = "Print nothing", .arity = Arity::kFlag});
  parser.add({.flags = {"--log-file"}, .help = "Also write logging output to this file", .metavar = "PATH"});
  parser.add({.flags = {"--no-color"}, .help = "Never colour output (colours are only used on a terminal)",
              .arity = Arity::kFlag});
}

void apply_logging_options(const Args& args) {
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
}

namespace {

std::string joined_command(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

void print_top_help(const std::vector<std::unique_ptr<Command>>& commands) {
  std::printf("usage: parity [--help] [--version] [--list-runners] <command> [<subcommand>] [options]\n\n");
  std::printf("parity: debug, validate and package deep-learning models across inference runtimes.\n\n");
  std::printf("Commands:\n");
  for (const auto& c : commands) std::printf("  %-26s %s\n", c->name().c_str(), c->summary().c_str());
  std::printf("\nRun `parity <command> --help` for a command's options.\n");
}

}  // namespace

int main_entry(int argc, char** argv) {
  const auto start = std::chrono::steady_clock::now();
  const std::string command_line = joined_command(argc, argv);
  auto commands = CommandRegistry::instance().create_all();
  std::vector<std::string> tokens(argv + 1, argv + argc);

  if (tokens.empty() || tokens[0] == "-h" || tokens[0] == "--help") {
    print_top_help(commands);
    return tokens.empty() ? kExitFailed : kExitPassed;
  }
  if (tokens[0] == "--version") {
    std::printf("parity %s\n", kParityVersion);
    return kExitPassed;
  }
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

  ArgParser parser("parity " + chosen->name(), chosen->summary());
  parser.group("Options");
  parser.add({.flags = {"-h", "--help"}, .help = "Show this help and exit", .arity = Arity::kFlag});
  chosen->add_options(parser);
  add_logging_options(parser);
  std::vector<std::string> rest(tokens.begin() + static_cast<long>(words_used), tokens.end());
  if (std::find(rest.begin(), rest.end(), "-h") != rest.end() ||
      std::find(rest.begin(), rest.end(), "--help") != rest.end()) {
    std::printf("%s", parser.help().c_str());
    return kExitPassed;
  }

  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  auto finish_line = [&](bool passed) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.3f", elapsed());
    if (passed)
      logger().finish("PASSED | Runtime: ", buf, "s | Command: ", command_line);
    else
      logger().error("FAILED | Runtime: ", buf, "s | Command: ", command_line);
  };

  int code = kExitFailed;
  try {
    Args args = parser.parse(rest);
    apply_logging_options(args);
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
