// Option groups of the commands that feed a model (Polygraphy's tools/args DataLoaderArgs and the
// iteration counts of ComparatorRunArgs): each defines its options once, with add_to(), and reads
// them into a plain struct, with parse(). `run` and `bench` share them, so --seed, --input-shapes,
// --val-range, --iterations and --warm-up are spelled, checked and parsed one way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "options/args.h"

namespace parity::options {

/// One --val-range item: values of input `input` ("" = every input) drawn from [min, max].
struct ValRange {
  std::string input;  ///< The input it applies to; "" for every input.
  double min = 0.0;   ///< Lowest value drawn.
  double max = 1.0;   ///< Highest value drawn.
};

/// One --input-shapes item: the shape of input `input`; `model` ("" = every model) limits it to
/// one model where a command takes several ([MODEL=]name:[d0,d1,...]).
struct InputShape {
  std::string model;  ///< The model it applies to (a path, file name or stem); "" for every model.
  std::string input;  ///< The input it gives the shape of.
  Shape shape;        ///< The input's shape.
  std::string text;  ///< The item as given, for messages.
  /// Whether `model_path` is the model this item names (a path as given, a file name or a stem).
  bool applies_to(const std::string& model_path) const;
};

/// Parses one --input-shapes item, "name:[d0,d1,...]" (with `per_model`, optionally "MODEL=" first);
/// throws kInvalidArgument naming the item.
InputShape parse_input_shape(const std::string& item, bool per_model = false);

/// What the data-loader options say.
struct DataLoaderOptions {
  std::optional<int64_t> seed;  ///< --seed; nullopt: the loader's default (1, as Polygraphy).
  std::vector<ValRange> val_ranges;  ///< --val-range items, in order.
  std::vector<InputShape> input_shapes;  ///< --input-shapes items, in order.
  std::vector<std::string> load_inputs;  ///< --load-inputs: files whose inputs replace generated ones.
};

/// --seed, --val-range, --input-shapes (--inputs) and, where the command reads input files,
/// --load-inputs, in a "Data Loader" help group.
class DataLoaderArgs {
 public:
  /// How a command defines the group.
  struct Config {
    /// --input-shapes items may start with MODEL= (commands that take several models).
    bool per_model_shapes = false;
    /// Defines --load-inputs.
    bool load_inputs = true;
  };
  /// The group with the default Config (one model, --load-inputs defined).
  DataLoaderArgs() = default;
  /// The group as `config` defines it.
  explicit DataLoaderArgs(Config config) : config_(config) {}

  /// Adds the options under a "Data Loader" help section, with Polygraphy's Python data-loader
  /// options (--data-loader-script, ...) refused unless the parser defines them already.
  void add_to(ArgParser& parser) const;
  /// Throws kInvalidArgument naming the option and item on a malformed value, and when
  /// --load-inputs is combined with options that shape random inputs.
  DataLoaderOptions parse(const Args& args) const;

 private:
  Config config_;
};

/// How many runs: --iterations (--iters) and --warm-up.
struct IterationOptions {
  int64_t iterations = 1;  ///< --iterations, or the command's default.
  int64_t warm_up = 0;     ///< --warm-up, or the command's default.
};

/// --iterations and --warm-up with a command's own meaning, defaults and help ("inference
/// iterations of the data loader" for run, "minimum timed iterations" for bench).
class IterationArgs {
 public:
  /// How a command defines the group.
  struct Config {
    int64_t iterations = 1;        ///< --iterations when not given.
    std::string iterations_help;   ///< Help text of --iterations.
    int64_t warm_up = 0;           ///< --warm-up when not given.
    std::string warm_up_help;      ///< Help text of --warm-up.
    /// The fewest --iterations allowed: run takes 0 (Polygraphy's: nothing is inferred, nothing
    /// compared), bench needs 1.
    int64_t min_iterations = 1;
  };
  /// The group as `config` defines it.
  explicit IterationArgs(Config config) : config_(std::move(config)) {}

  /// Adds --iterations to the current help group.
  void add_iterations_to(ArgParser& parser) const;
  /// Adds --warm-up to the current help group (commands list it among timing or comparator options).
  void add_warm_up_to(ArgParser& parser) const;
  /// Throws kInvalidArgument for fewer than min_iterations iterations or a negative warm-up.
  IterationOptions parse(const Args& args) const;

 private:
  Config config_;
};

}  // namespace parity::options
