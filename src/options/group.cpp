#include "options/group.h"

namespace parity::options::detail {

Given given(const Args& args, const OptionSpec& spec) {
  // The first long spelling, as the options' own messages name them (--rtol, not --rel-tol).
  std::string flag = spec.flags.empty() ? spec.metavar : spec.flags.front();
  for (const auto& f : spec.flags)
    if (f.rfind("--", 0) == 0) {
      flag = f;
      break;
    }
  PARITY_ASSERT(args.declares(spec.dest), "option group reads ", flag, " (dest '", spec.dest,
                "') from a parser that does not define it: add the group to the parser before parsing");
  return Given{flag, args.count(spec.dest), args.list(spec.dest)};
}

}  // namespace parity::options::detail
