#include "compare/isolation_args.h"

#include "core/text.h"

namespace parity::compare {

IsolationArgs::IsolationArgs() {
  using options::Given;
  section("Runner isolation");
  add({.flags = {"--use-subprocess"},
       .help = "Run each runner in its own process: a runner that crashes, aborts, hangs or runs out of "
               "memory FAILS with the reason while the others are still compared and saved",
       .arity = options::Arity::kFlag},
      [](IsolationSettings& s, const Given& given) { s.isolation.enabled = given.given(); });
  add({.flags = {"--no-subprocess"},
       .help = "Run every runner in parity's own process, also those that run in a subprocess by default "
               "because they are known to crash on some models (opencv)",
       .arity = options::Arity::kFlag},
      [](IsolationSettings& s, const Given& given) {
        PARITY_CHECK(!(s.isolation.enabled && given.given()), kInvalidArgument,
                     "--use-subprocess and --no-subprocess contradict each other; give one");
        s.isolate_crash_prone = !given.given();
      });
  add({.flags = {"--runner-timeout"},
       .help = "With --use-subprocess: seconds a runner may take (activation and all iterations)",
       .metavar = "S"},
      [](IsolationSettings& s, const Given& given) {
        if (auto timeout = given.value()) {
          const double seconds = parse_double(*timeout, given.flag);
          PARITY_CHECK(seconds > 0, kInvalidArgument, "--runner-timeout '", *timeout,
                       "' must be a number of seconds above 0");
          s.isolation.timeout_s = seconds;
        }
      });
  add({.flags = {"--runner-memory-limit"},
       .help = "With --use-subprocess: address space a runner's process may use (e.g. 4G, 512M)",
       .metavar = "SIZE"},
      [](IsolationSettings& s, const Given& given) {
        if (auto size = given.value()) {
          s.isolation.memory_limit_bytes = parse_size(*size, given.flag);
          PARITY_CHECK(s.isolation.memory_limit_bytes > 0, kInvalidArgument, "--runner-memory-limit must be above 0");
        }
      });
  check([](IsolationSettings& s) {
    const Isolation& isolation = s.isolation;
    PARITY_CHECK(isolation.enabled || (isolation.timeout_s == 0 && isolation.memory_limit_bytes == 0),
                 kInvalidArgument,
                 "--runner-timeout and --runner-memory-limit need --use-subprocess (a runner in parity's own process "
                 "cannot be stopped safely)");
  });
}

}  // namespace parity::compare
