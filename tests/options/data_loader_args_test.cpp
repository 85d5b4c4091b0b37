#include "options/data_loader_args.h"

#include <gtest/gtest.h>

namespace parity::options {
namespace {

Args parse_with(const DataLoaderArgs& group, const std::vector<std::string>& argv) {
  ArgParser parser("t", "t");
  group.add_to(parser);
  return parser.parse(argv);
}

std::string error_of(const DataLoaderArgs& group, const std::vector<std::string>& argv) {
  try {
    group.parse(parse_with(group, argv));
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    return e.what();
  }
  return "";
}

TEST(DataLoaderArgs, ParsesSeedRangesAndShapes) {
  const DataLoaderArgs group;
  const DataLoaderOptions o =
      group.parse(parse_with(group, {"--seed", "7", "--val-range", "[0,1]", "ids:[0,10]", "--inputs", "x:[1,3,8,8]"}));
  EXPECT_EQ(o.seed, 7);
  ASSERT_EQ(o.val_ranges.size(), 2u);
  EXPECT_EQ(o.val_ranges[0].input, "");
  EXPECT_EQ(o.val_ranges[1].input, "ids");
  EXPECT_EQ(o.val_ranges[1].max, 10.0);
  ASSERT_EQ(o.input_shapes.size(), 1u);
  EXPECT_EQ(o.input_shapes[0].input, "x");
  EXPECT_EQ(o.input_shapes[0].shape, (Shape{1, 3, 8, 8}));
  EXPECT_TRUE(o.input_shapes[0].applies_to("any/model.onnx"));
  EXPECT_FALSE(group.parse(parse_with(group, {})).seed.has_value());
}

TEST(DataLoaderArgs, PerModelShapesNameTheirModel) {
  const DataLoaderArgs group({.per_model_shapes = true, .load_inputs = false});
  const DataLoaderOptions o = group.parse(parse_with(group, {"--input-shapes", "det=x:[1,3,64,64]", "y:[2]"}));
  ASSERT_EQ(o.input_shapes.size(), 2u);
  EXPECT_EQ(o.input_shapes[0].model, "det");
  EXPECT_TRUE(o.input_shapes[0].applies_to("models/det.onnx"));
  EXPECT_TRUE(o.input_shapes[0].applies_to("det"));
  EXPECT_FALSE(o.input_shapes[0].applies_to("models/rec.onnx"));
  EXPECT_TRUE(o.input_shapes[1].applies_to("models/rec.onnx"));
  // Without --load-inputs defined, the option does not exist.
  ArgParser parser("t", "t");
  group.add_to(parser);
  EXPECT_FALSE(parser.defines("--load-inputs"));
}

TEST(DataLoaderArgs, BadValuesNameOptionAndItem) {
  const DataLoaderArgs run;
  EXPECT_EQ(error_of(run, {"--input-shapes", "x"}), "--input-shapes 'x' must be name:[d0,d1,...]");
  EXPECT_EQ(error_of(run, {"--input-shapes", "x:[1,?]"}),
            "--input-shapes 'x:[1,?]': shape '[1,?]' must have a number >= 0 for every dimension");
  EXPECT_EQ(error_of(run, {"--val-range", "[0,1,2]"}), "--val-range '[0,1,2]' must be [name:][min,max] with two numbers");
  EXPECT_EQ(error_of(run, {"--val-range", "[0,x]"}), "invalid number 'x' for --val-range");
  EXPECT_EQ(error_of(run, {"--seed", "one"}), "invalid integer 'one' for --seed");
  EXPECT_EQ(error_of(run, {"--load-inputs", "in.json", "--seed", "2"}),
            "--load-inputs cannot be combined with --seed or --val-range (those shape random inputs)");
  const DataLoaderArgs bench({.per_model_shapes = true, .load_inputs = false});
  EXPECT_EQ(error_of(bench, {"--input-shapes", "m=x"}), "--input-shapes 'm=x' must be [MODEL=]name:[d0,d1,...]");
}

TEST(IterationArgs, DefaultsAndBoundsAreTheCommands) {
  const IterationArgs group({.iterations = 10, .iterations_help = "timed", .warm_up = 2, .warm_up_help = "untimed"});
  ArgParser parser("t", "t");
  group.add_iterations_to(parser);
  group.add_warm_up_to(parser);
  const IterationOptions defaults = group.parse(parser.parse({}));
  EXPECT_EQ(defaults.iterations, 10);
  EXPECT_EQ(defaults.warm_up, 2);
  const IterationOptions given = group.parse(parser.parse({"--iters", "3", "--warm-up", "0"}));
  EXPECT_EQ(given.iterations, 3);
  EXPECT_EQ(given.warm_up, 0);
  EXPECT_THROW(group.parse(parser.parse({"--iterations", "0"})), Error);
  EXPECT_THROW(group.parse(parser.parse({"--warm-up", "-1"})), Error);
}

}  // namespace
}  // namespace parity::options
