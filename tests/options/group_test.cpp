// Typed option groups: each conversion, cross-option checks, nested groups, and that reading a
// group from a parser it was not added to is a programming error rather than a silent default.
#include "options/any_group.h"
#include "options/group.h"

#include <gtest/gtest.h>

namespace parity::options {
namespace {

enum class Mode { kFast, kExact };

struct Inner {
  double tolerance = 0.5;
};

struct Settings {
  std::string name = "none";
  std::optional<std::string> label;
  int64_t iterations = 1;
  std::optional<double> scale;
  bool fast = false;
  bool check_shapes = true;
  int verbosity = 0;
  std::vector<std::string> files;
  std::vector<int64_t> sizes;
  Mode mode = Mode::kFast;
  std::optional<uint64_t> bytes;
  Inner inner;
};

Group<Inner> inner_group() {
  Group<Inner> g;
  g.section("Inner");
  g.add({.flags = {"--tolerance"}, .metavar = "TOL"}, field(&Inner::tolerance));
  g.check([](Inner& i) { PARITY_CHECK(i.tolerance >= 0, kInvalidArgument, "--tolerance must not be negative"); });
  return g;
}

Group<Settings> settings_group() {
  Group<Settings> g;
  g.section("Test options");
  g.add({.flags = {"--name"}}, field(&Settings::name));
  g.add({.flags = {"--label"}}, field(&Settings::label));
  g.add({.flags = {"--iterations", "--iters"}, .dest = "iterations"}, field(&Settings::iterations));
  g.add({.flags = {"--scale"}}, field(&Settings::scale));
  g.add({.flags = {"--fast"}, .arity = Arity::kFlag}, field(&Settings::fast));
  g.add({.flags = {"--no-shape-check"}, .arity = Arity::kFlag}, unless(&Settings::check_shapes));
  g.add({.flags = {"-v", "--verbose"}, .arity = Arity::kCount}, count(&Settings::verbosity));
  g.add({.flags = {"--files"}, .arity = Arity::kOneOrMore}, field(&Settings::files));
  g.add({.flags = {"--sizes"}, .arity = Arity::kOneOrMore}, field(&Settings::sizes));
  g.add({.flags = {"--mode"}, .choices = {"fast", "exact"}},
        choice(&Settings::mode, {{"fast", Mode::kFast}, {"exact", Mode::kExact}}));
  g.add({.flags = {"--bytes"}}, convert(&Settings::bytes, [](const std::string& text, const std::string& flag) {
          return parse_size(text, flag);
        }));
  g.include(inner_group(), &Settings::inner);
  g.check([](Settings& s) {
    PARITY_CHECK(!(s.fast && s.mode == Mode::kExact), kInvalidArgument, "--fast and --mode exact contradict");
  });
  return g;
}

Settings parse(const std::vector<std::string>& argv) {
  ArgParser parser("parity test", "desc");
  const auto group = settings_group();
  group.add_to(parser);
  return group.parse(parser.parse(argv));
}

TEST(OptionGroup, DefaultsAreTheStructs) {
  const Settings s = parse({});
  EXPECT_EQ(s.name, "none");
  EXPECT_FALSE(s.label);
  EXPECT_EQ(s.iterations, 1);
  EXPECT_FALSE(s.scale);
  EXPECT_FALSE(s.fast);
  EXPECT_TRUE(s.check_shapes);
  EXPECT_EQ(s.verbosity, 0);
  EXPECT_TRUE(s.files.empty());
  EXPECT_EQ(s.mode, Mode::kFast);
  EXPECT_FALSE(s.bytes);
  EXPECT_DOUBLE_EQ(s.inner.tolerance, 0.5);
}

TEST(OptionGroup, EachConversion) {
  const Settings s = parse({"--name", "a", "--label=b", "--iters", "7", "--scale", "-2.5", "--no-shape-check", "-vv",
                            "--files", "x", "y", "--sizes", "1", "2", "--mode", "exact", "--bytes", "2K",
                            "--tolerance", "0.25"});
  EXPECT_EQ(s.name, "a");
  EXPECT_EQ(s.label, "b");
  EXPECT_EQ(s.iterations, 7);
  EXPECT_EQ(s.scale, -2.5);
  EXPECT_FALSE(s.check_shapes);
  EXPECT_EQ(s.verbosity, 2);
  EXPECT_EQ(s.files, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(s.sizes, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(s.mode, Mode::kExact);
  EXPECT_EQ(s.bytes, 2048u);
  EXPECT_DOUBLE_EQ(s.inner.tolerance, 0.25);
  EXPECT_TRUE(parse({"--fast"}).fast);
}

TEST(OptionGroup, BadValuesNameTheOption) {
  auto message = [](const std::vector<std::string>& argv) {
    try {
      parse(argv);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({"--iterations", "x"}).find("--iterations"), std::string::npos);
  EXPECT_NE(message({"--scale", "x"}).find("--scale"), std::string::npos);
  EXPECT_NE(message({"--sizes", "1", "x"}).find("--sizes"), std::string::npos);
  EXPECT_NE(message({"--bytes", "lots"}).find("--bytes"), std::string::npos);
  EXPECT_NE(message({"--fast", "--mode", "exact"}).find("contradict"), std::string::npos);
  EXPECT_NE(message({"--tolerance", "-1"}).find("must not be negative"), std::string::npos);
}

TEST(OptionGroup, ChoiceOutsideTheMapIsAnError) {
  Group<Settings> g;
  g.add({.flags = {"--mode"}}, choice(&Settings::mode, {{"fast", Mode::kFast}}));
  ArgParser parser("parity test", "desc");
  g.add_to(parser);
  EXPECT_THROW(g.parse(parser.parse({"--mode", "slow"})), Error);
}

TEST(OptionGroup, ParsingArgsOfAParserWithoutTheGroupIsAProgrammingError) {
  ArgParser parser("parity test", "desc");
  parser.add({.flags = {"--name"}});
  try {
    settings_group().parse(parser.parse({"--name", "a"}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInternal);
    EXPECT_NE(std::string(e.what()).find("--label"), std::string::npos);
  }
}

TEST(OptionGroup, HelpListsTheSectionsAndAnyGiven) {
  ArgParser parser("parity test", "desc");
  const auto group = settings_group();
  group.add_to(parser);
  const std::string help = parser.help();
  EXPECT_NE(help.find("Test options:"), std::string::npos);
  EXPECT_NE(help.find("Inner:"), std::string::npos);
  EXPECT_NE(help.find("--iterations, --iters"), std::string::npos);
  EXPECT_FALSE(group.any_given(parser.parse({})));
  EXPECT_TRUE(group.any_given(parser.parse({"--tolerance", "1"})));
  EXPECT_EQ(group.specs().size(), 12u);
}

TEST(OptionGroup, DeclaredOnlyOptionsAreSkippedWhereDefined) {
  Group<Settings> g;
  g.declare({.flags = {"--name"}, .help = "second"}, /*unless_defined=*/true);
  ArgParser parser("parity test", "desc");
  parser.add({.flags = {"--name"}, .help = "first"});
  g.add_to(parser);  // would assert "defined twice" without unless_defined
  EXPECT_NE(parser.help().find("first"), std::string::npos);
}

TEST(OptionGroup, BorrowedOptionsAreReadWhereAnotherGroupDefinesThem) {
  Group<Settings> g;
  g.add({.flags = {"--name"}}, field(&Settings::name));
  g.borrow({.flags = {"--iterations", "--iters"}, .dest = "iterations"}, field(&Settings::iterations));
  EXPECT_EQ(g.specs().size(), 1u);  // the borrowed one is not the group's
  {
    ArgParser parser("parity test", "desc");
    g.add_to(parser);
    EXPECT_FALSE(parser.defines("--iterations"));
    EXPECT_EQ(g.parse(parser.parse({"--name", "a"})).iterations, 1);  // absent: the struct's default
  }
  ArgParser parser("parity test", "desc");
  parser.add({.flags = {"--iterations", "--iters"}, .dest = "iterations"});
  g.add_to(parser);
  const Settings s = g.parse(parser.parse({"--iters", "7"}));
  EXPECT_EQ(s.iterations, 7);
  EXPECT_FALSE(g.any_given(parser.parse({"--iters", "7"})));  // given, but not as this group's option
}

TEST(OptionGroup, AddMissingLeavesACommandsOwnFlagToIt) {
  const auto group = settings_group();
  ArgParser parser("parity test", "desc");
  parser.add({.flags = {"--iterations"}, .dest = "iteration_list", .arity = Arity::kOneOrMore});
  group.add_missing_to(parser);  // add_to() would fail: --iterations is taken
  const Args args = parser.parse({"--iterations", "1,2", "--name", "x"});
  // The command's --iterations has a dest of its own: the group reads its own as not given.
  const Settings s = group.parse_where_defined(args);
  EXPECT_EQ(s.iterations, 1);
  EXPECT_EQ(s.name, "x");
  EXPECT_EQ(args.list("iteration_list"), std::vector<std::string>{"1,2"});
}

struct Other {
  int count = 3;
};

TEST(AnyGroup, ValuesOfSeveralGroupsComeBackByTheirType) {
  Group<Other> other;
  other.add({.flags = {"--count"}}, field(&Other::count));
  const std::vector<AnyGroup> groups = {AnyGroup(settings_group()), AnyGroup(other), AnyGroup()};
  ArgParser parser("parity test", "desc");
  for (const auto& g : groups) g.add_missing_to(parser);
  GroupValues values;
  EXPECT_TRUE(values.empty());
  EXPECT_EQ(values.find<Other>(), nullptr);
  EXPECT_EQ(values.get_or(Other{5}).count, 5);
  const Args args = parser.parse({"--count", "9", "--name", "n", "--tolerance", "2"});
  for (const auto& g : groups) g.parse_into(args, values);
  ASSERT_NE(values.find<Other>(), nullptr);
  EXPECT_EQ(values.find<Other>()->count, 9);
  EXPECT_EQ(values.get_or(Settings{}).name, "n");
  EXPECT_EQ(values.get_or(Settings{}).inner.tolerance, 2.0);
  // Copies share the stored values; set() replaces the copy's own.
  GroupValues copy = values;
  copy.set(Other{1});
  EXPECT_EQ(copy.find<Other>()->count, 1);
  EXPECT_EQ(values.find<Other>()->count, 9);
  EXPECT_EQ(groups[1].specs().size(), 1u);
  EXPECT_FALSE(static_cast<bool>(groups[2]));
  // A bad value still names its option.
  GroupValues bad;
  EXPECT_THROW(groups[1].parse_into(parser.parse({"--count", "x"}), bad), Error);
}

}  // namespace
}  // namespace parity::options
