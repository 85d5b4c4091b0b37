#include "options/args.h"

#include "options/refused_option.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string_view>

namespace parity::options {

bool Args::has(const std::string& dest) const {
  return counts_.count(dest) > 0 || values_.count(dest) > 0;
}

int Args::count(const std::string& dest) const {
  auto it = counts_.find(dest);
  return it == counts_.end() ? 0 : it->second;
}

std::optional<std::string> Args::get(const std::string& dest) const {
  auto it = values_.find(dest);
  if (it != values_.end() && !it->second.empty()) return it->second.back();
  auto d = defaults_.find(dest);
  if (d != defaults_.end()) return d->second;
  return std::nullopt;
}

std::string Args::get_or(const std::string& dest, const std::string& fallback) const {
  auto v = get(dest);
  return v ? *v : fallback;
}

std::vector<std::string> Args::list(const std::string& dest) const {
  auto it = values_.find(dest);
  if (it != values_.end()) return it->second;
  auto d = defaults_.find(dest);
  if (d != defaults_.end()) return {d->second};
  return {};
}

std::optional<double> Args::get_double(const std::string& dest) const {
  auto v = get(dest);
  if (!v) return std::nullopt;
  return parse_double(*v, "--" + dest);
}

std::optional<int64_t> Args::get_int(const std::string& dest) const {
  auto v = get(dest);
  if (!v) return std::nullopt;
  return parse_int(*v, "--" + dest);
}

void Args::add_value(const std::string& dest, std::string value) {
  values_[dest].push_back(std::move(value));
}

void Args::add_presence(const std::string& dest) {
  counts_[dest]++;
  occurrences_.push_back(dest);
  if (std::find(order_.begin(), order_.end(), dest) == order_.end()) order_.push_back(dest);
}

void Args::set_default(const std::string& dest, std::string value) { defaults_[dest] = std::move(value); }

namespace {
// The dest of a refused option: no option of a command can be named so.
constexpr std::string_view kRefusedDestPrefix = "refused:";
}  // namespace

OptionSpec refused_option(const std::string& flag, std::string message) {
  return OptionSpec{.flags = {flag}, .dest = std::string(kRefusedDestPrefix) + flag, .help = std::move(message),
                    .arity = Arity::kFlag};
}

bool is_refused(const OptionSpec& spec) { return spec.dest.rfind(kRefusedDestPrefix, 0) == 0; }

ArgParser::ArgParser(std::string prog, std::string description)
    : prog_(std::move(prog)), description_(std::move(description)) {}

ArgParser& ArgParser::group(std::string title) {
  current_group_ = std::move(title);
  return *this;
}

std::string default_dest(const OptionSpec& spec) {
  PARITY_ASSERT(!spec.flags.empty(), "positional option needs a dest");
  std::string longest;
  for (const auto& f : spec.flags)
    if (f.size() > longest.size()) longest = f;
  size_t start = longest.find_first_not_of('-');
  std::string dest = longest.substr(start);
  std::replace(dest.begin(), dest.end(), '-', '_');
  return dest;
}

ArgParser& ArgParser::add(OptionSpec spec) {
  if (spec.dest.empty()) spec.dest = default_dest(spec);
  for (const auto& f : spec.flags)
    PARITY_ASSERT(!find_flag(f), "option ", f, " defined twice for ", prog_);
  if (spec.group.empty()) spec.group = current_group_;
  if (spec.metavar.empty()) {
    spec.metavar = spec.dest;
    std::transform(spec.metavar.begin(), spec.metavar.end(), spec.metavar.begin(),
                   [](unsigned char c) { return std::toupper(c); });
  }
  options_.push_back(std::move(spec));
  return *this;
}

const OptionSpec* ArgParser::find_flag(const std::string& flag) const {
  for (const auto& o : options_)
    if (std::find(o.flags.begin(), o.flags.end(), flag) != o.flags.end()) return &o;
  return nullptr;
}

bool ArgParser::looks_like_option(const std::string& token) const {
  if (token.size() < 2 || token[0] != '-') return false;
  // Negative numbers ("-5", "-1e-3", "-.5") are values, as in argparse.
  const char c = token[1];
  if ((c >= '0' && c <= '9') || c == '.') return false;
  return true;
}

Args ArgParser::parse(const std::vector<std::string>& tokens) const {
  Args args;
  std::vector<const OptionSpec*> positionals;
  for (const auto& o : options_)
    if (o.flags.empty()) positionals.push_back(&o);
  size_t next_positional = 0;
  bool only_positionals = false;

  auto check_choice = [&](const OptionSpec& spec, const std::string& value, const std::string& shown) {
    if (spec.choices.empty()) return;
    PARITY_CHECK(std::find(spec.choices.begin(), spec.choices.end(), value) != spec.choices.end(),
                 kInvalidArgument, prog_, ": invalid choice '", value, "' for ", shown,
                 " (choose from ", [&] {
                   std::string s;
                   for (size_t i = 0; i < spec.choices.size(); ++i) s += (i ? ", " : "") + spec.choices[i];
                   return s;
                 }(), ")");
  };

  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& tok = tokens[i];
    if (!only_positionals && tok == "--") {
      only_positionals = true;
      continue;
    }
    if (!only_positionals && looks_like_option(tok)) {
      std::string flag = tok;
      std::optional<std::string> inline_value;
      if (auto eq = tok.find('='); eq != std::string::npos && tok.rfind("--", 0) == 0) {
        flag = tok.substr(0, eq);
        inline_value = tok.substr(eq + 1);
      }
      const OptionSpec* spec = find_flag(flag);
      // argparse's bundled counts: -vvv is -v three times.
      if (!spec && !inline_value && flag.size() > 2 && flag[1] != '-' &&
          flag.find_first_not_of(flag[1], 1) == std::string::npos) {
        const OptionSpec* single = find_flag(flag.substr(0, 2));
        if (single && single->arity == Arity::kCount) {
          for (size_t k = 1; k < flag.size(); ++k) args.add_presence(single->dest);
          continue;
        }
      }
      if (!spec) {
        // Suggest options sharing a prefix, to make typos cheap to fix.
        std::vector<std::string> near;
        const std::string stem = flag.substr(0, std::min<size_t>(flag.size(), 5));
        for (const auto& o : options_)
          for (const auto& f : o.flags)
            if (!is_refused(o) && f.rfind(stem, 0) == 0) near.push_back(f);
        fail(ErrorCode::kInvalidArgument, prog_, ": unrecognized option '", flag, "'",
             near.empty() ? std::string("; see --help") : "; did you mean: " + [&] {
               std::string s;
               for (size_t k = 0; k < near.size() && k < 5; ++k) s += (k ? ", " : "") + near[k];
               return s;
             }() + "?");
      }
      PARITY_CHECK(!is_refused(*spec), kInvalidArgument, spec->help);
      switch (spec->arity) {
        case Arity::kFlag:
        case Arity::kCount:
          PARITY_CHECK(!inline_value, kInvalidArgument, prog_, ": option ", flag, " takes no value");
          args.add_presence(spec->dest);
          break;
        case Arity::kOne: {
          std::string value;
          if (inline_value) {
            value = *inline_value;
          } else {
            PARITY_CHECK(i + 1 < tokens.size() && !looks_like_option(tokens[i + 1]), kInvalidArgument,
                         prog_, ": option ", flag, " expects a value (", spec->metavar, ")");
            value = tokens[++i];
          }
          check_choice(*spec, value, flag);
          args.add_presence(spec->dest);
          args.add_value(spec->dest, value);
          break;
        }
        case Arity::kRemainder:
          // The rest of the line belongs to the option (e.g. `--check cmd --its-own-flags`).
          args.add_presence(spec->dest);
          if (inline_value) args.add_value(spec->dest, *inline_value);
          while (i + 1 < tokens.size()) args.add_value(spec->dest, tokens[++i]);
          PARITY_CHECK(!args.list(spec->dest).empty(), kInvalidArgument, prog_, ": option ", flag,
                       " expects a command line (", spec->metavar, " ...)");
          break;
        case Arity::kOneOrMore:
        case Arity::kAny: {
          size_t taken = 0;
          args.add_presence(spec->dest);
          if (inline_value) {
            check_choice(*spec, *inline_value, flag);
            args.add_value(spec->dest, *inline_value);
            ++taken;
          }
          while (i + 1 < tokens.size() && !looks_like_option(tokens[i + 1]) && tokens[i + 1] != "--") {
            // A list option stops at the next positional only when all values are taken;
            // like argparse, it is greedy, so positionals must come before list options.
            check_choice(*spec, tokens[i + 1], flag);
            args.add_value(spec->dest, tokens[++i]);
            ++taken;
          }
          PARITY_CHECK(spec->arity == Arity::kAny || taken > 0, kInvalidArgument, prog_, ": option ",
                       flag, " expects at least one value (", spec->metavar, ")");
          break;
        }
      }
      continue;
    }
    // Positional.
    PARITY_CHECK(next_positional < positionals.size(), kInvalidArgument, prog_,
                 ": unexpected argument '", tok, "'");
    const OptionSpec* spec = positionals[next_positional];
    check_choice(*spec, tok, spec->metavar);
    args.add_presence(spec->dest);
    args.add_value(spec->dest, tok);
    if (spec->arity != Arity::kOneOrMore && spec->arity != Arity::kAny) ++next_positional;
  }

  for (const auto& o : options_) {
    args.declare(o.dest);
    if (o.default_value && !args.has(o.dest)) args.set_default(o.dest, *o.default_value);
    if (o.required && !args.has(o.dest))
      fail(ErrorCode::kInvalidArgument, prog_, ": missing required ",
           o.flags.empty() ? "argument " + o.metavar : "option " + o.flags.back());
  }
  return args;
}

std::string ArgParser::help() const {
  std::ostringstream os;
  os << "usage: " << prog_;
  for (const auto& o : options_)
    if (o.flags.empty())
      os << " " << o.metavar << (o.arity == Arity::kOneOrMore ? " [" + o.metavar + " ...]" : "");
  os << " [options]\n\n" << description_ << "\n";
  std::vector<std::string> groups;
  for (const auto& o : options_)
    if (!is_refused(o) && std::find(groups.begin(), groups.end(), o.group) == groups.end()) groups.push_back(o.group);
  for (const auto& g : groups) {
    os << "\n" << g << ":\n";
    for (const auto& o : options_) {
      if (o.group != g || is_refused(o)) continue;
      std::string left = "  ";
      if (o.flags.empty()) {
        left += o.metavar;
      } else {
        for (size_t i = 0; i < o.flags.size(); ++i) left += (i ? ", " : "") + o.flags[i];
        if (o.arity == Arity::kOne) left += " " + o.metavar;
        if (o.arity == Arity::kOneOrMore) left += " " + o.metavar + " [" + o.metavar + " ...]";
        if (o.arity == Arity::kAny) left += " [" + o.metavar + " ...]";
        if (o.arity == Arity::kRemainder) left += " " + o.metavar + " ...";
      }
      os << left;
      std::string help = o.help;
      if (!o.choices.empty()) {
        help += " {";
        for (size_t i = 0; i < o.choices.size(); ++i) help += (i ? "," : "") + o.choices[i];
        help += "}";
      }
      if (o.default_value && !o.default_value->empty()) help += " (default: " + *o.default_value + ")";
      if (left.size() >= 32) {
        os << "\n" << std::string(32, ' ');
      } else {
        os << std::string(32 - left.size(), ' ');
      }
      os << help << "\n";
    }
  }
  if (!epilog_.empty()) os << "\n" << epilog_ << "\n";
  return os.str();
}

}  // namespace parity::options
