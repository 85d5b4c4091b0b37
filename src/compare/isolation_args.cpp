#include "compare/isolation_args.h"

#include "core/text.h"

namespace parity::compare {

void IsolationArgs::add_to(options::ArgParser& parser) const {
  parser.group("Runner isolation");
  parser.add({.flags = {"--use-subprocess"},
              .help = "Run each runner in its own process: a runner that crashes, aborts, hangs or runs out of "
                      "memory FAILS with the reason while the others are still compared and saved",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--no-subprocess"},
              .help = "Run every runner in parity's own process, also those that run in a subprocess by default "
                      "because they are known to crash on some models (opencv)",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--runner-timeout"},
              .help = "With --use-subprocess: seconds a runner may take (activation and all iterations)",
              .metavar = "S"});
  parser.add({.flags = {"--runner-memory-limit"},
              .help = "With --use-subprocess: address space a runner's process may use (e.g. 4G, 512M)",
              .metavar = "SIZE"});
}

Isolation IsolationArgs::parse(const options::Args& args) const {
  Isolation isolation;
  isolation.enabled = args.flag("use_subprocess");
  PARITY_CHECK(!(isolation.enabled && args.flag("no_subprocess")), kInvalidArgument,
               "--use-subprocess and --no-subprocess contradict each other; give one");
  if (auto timeout = args.get("runner_timeout")) {
    const std::optional<double> seconds = args.get_double("runner_timeout");
    PARITY_CHECK(seconds && *seconds > 0, kInvalidArgument, "--runner-timeout '", *timeout,
                 "' must be a number of seconds above 0");
    isolation.timeout_s = *seconds;
  }
  if (auto size = args.get("runner_memory_limit")) {
    isolation.memory_limit_bytes = parse_size(*size, "--runner-memory-limit");
    PARITY_CHECK(isolation.memory_limit_bytes > 0, kInvalidArgument, "--runner-memory-limit must be above 0");
  }
  PARITY_CHECK(isolation.enabled || (isolation.timeout_s == 0 && isolation.memory_limit_bytes == 0), kInvalidArgument,
               "--runner-timeout and --runner-memory-limit need --use-subprocess (a runner in parity's own process "
               "cannot be stopped safely)");
  return isolation;
}

}  // namespace parity::compare
