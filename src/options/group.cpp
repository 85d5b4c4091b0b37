#include "options/group.h"

namespace parity::options::detail {

namespace {

// The first long spelling, as the options' own messages name them (--rtol, not --rel-tol).
std::string message_flag(const OptionSpec& spec) {
  std::string flag = spec.flags.empty() ? spec.metavar : spec.flags.front();
  for (const auto& f : spec.flags)
    if (f.rfind("--", 0) == 0) {
      flag = f;
      break;
    }
  return flag;
}

}  // namespace

Given given(const Args& args, const OptionSpec& spec) {
  const std::string flag = message_flag(spec);
  PARITY_ASSERT(args.declares(spec.dest), "option group reads ", flag, " (dest '", spec.dest,
                "') from a parser that does not define it: add the group to the parser before parsing");
  return Given{flag, args.count(spec.dest), args.list(spec.dest)};
}

Given given_if_defined(const Args& args, const OptionSpec& spec) {
  if (args.declares(spec.dest)) return given(args, spec);
  Given none{message_flag(spec), 0, {}};
  if (spec.default_value) none.values.push_back(*spec.default_value);
  return none;
}

}  // namespace parity::options::detail
