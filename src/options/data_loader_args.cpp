#include "options/data_loader_args.h"

#include "options/refused_option.h"

#include <filesystem>

#include "core/text.h"

namespace parity::options {

InputShape parse_input_shape(const std::string& item, bool per_model) {
  InputShape s;
  s.text = item;
  std::string rest = item;
  const std::string form = per_model ? "[MODEL=]name:[d0,d1,...]" : "name:[d0,d1,...]";
  if (const size_t eq = rest.find('='); per_model && eq != std::string::npos) {
    s.model = rest.substr(0, eq);
    rest = rest.substr(eq + 1);
  }
  auto [name, value] = split_name_value(rest);
  PARITY_CHECK(!name.empty() && !value.empty(), kInvalidArgument, "--input-shapes '", item, "' must be ", form);
  s.input = name;
  s.shape = parse_shape(value, "--input-shapes '" + item + "'");
  return s;
}

namespace {

ValRange parse_val_range(const std::string& item) {
  auto [name, value] = split_name_value(item);
  const auto bounds = split_list(value, "--val-range");
  PARITY_CHECK(bounds.size() == 2, kInvalidArgument, "--val-range '", item,
               "' must be [name:][min,max] with two numbers");
  return {name, parse_double(bounds[0], "--val-range"), parse_double(bounds[1], "--val-range")};
}

int64_t at_least(const Args& args, const std::string& dest, const std::string& flag, int64_t fallback, int64_t min) {
  const int64_t v = args.has(dest) ? parse_int(*args.get(dest), flag) : fallback;
  PARITY_CHECK(v >= min, kInvalidArgument, flag, " must be at least ", min, ", got ", v);
  return v;
}

}  // namespace

bool InputShape::applies_to(const std::string& model_path) const {
  if (model.empty()) return true;
  const std::filesystem::path p(model_path);
  return model == model_path || model == p.filename().string() || model == p.stem().string();
}

void DataLoaderArgs::add_to(ArgParser& parser) const {
  parser.group("Data Loader");
  // Polygraphy's Python data loaders: parity runs no Python.
  for (const char* flag : {"--data-loader-script", "--data-loader-func-name", "--data-loader-backend-module"})
    if (!parser.defines(flag))
      parser.add(refused_option(flag, str_cat(flag, " needs Python, which parity does not run; closest in parity: "
                                                    "`parity template data-loader` (a C++ program that writes "
                                                    "inputs for --load-inputs)")));
  parser.add({.flags = {"--seed"}, .help = "Seed for random inputs (default 1, as Polygraphy)", .metavar = "SEED"});
  parser.add({.flags = {"--val-range"},
              .help = "Range of generated values, [name:][min,max], e.g. --val-range [0,1] ids:[0,10]",
              .metavar = "RANGE", .arity = Arity::kOneOrMore});
  parser.add({.flags = {"--input-shapes", "--inputs"}, .dest = "input_shapes",
              .help = config_.per_model_shapes
                          ? "Shapes of inputs with dynamic dimensions, [MODEL=]name:[d0,d1,...]; MODEL (path, file "
                            "name or stem) limits it to one model"
                          : "Shapes of inputs with dynamic dimensions, name:[d0,d1,...]",
              .metavar = "SHAPE", .arity = Arity::kOneOrMore});
  if (config_.load_inputs)
    parser.add({.flags = {"--load-inputs", "--load-input-data"}, .dest = "load_inputs",
                .help = "Inputs to use instead of random data: Polygraphy inputs JSON, .npz files or folders of "
                        ".npz files (one iteration each)",
                .metavar = "PATH", .arity = Arity::kOneOrMore});
}

DataLoaderOptions DataLoaderArgs::parse(const Args& args) const {
  DataLoaderOptions o;
  if (auto seed = args.get("seed")) o.seed = parse_int(*seed, "--seed");
  for (const auto& item : args.list("val_range")) o.val_ranges.push_back(parse_val_range(item));
  for (const auto& item : args.list("input_shapes"))
    o.input_shapes.push_back(parse_input_shape(item, config_.per_model_shapes));
  if (config_.load_inputs) o.load_inputs = args.list("load_inputs");
  PARITY_CHECK(o.load_inputs.empty() || (o.val_ranges.empty() && !o.seed), kInvalidArgument,
               "--load-inputs cannot be combined with --seed or --val-range (those shape random inputs)");
  return o;
}

void IterationArgs::add_iterations_to(ArgParser& parser) const {
  parser.add({.flags = {"--iterations", "--iters"}, .dest = "iterations", .help = config_.iterations_help,
              .metavar = "N"});
}

void IterationArgs::add_warm_up_to(ArgParser& parser) const {
  parser.add({.flags = {"--warm-up"}, .help = config_.warm_up_help, .metavar = "N"});
}

IterationOptions IterationArgs::parse(const Args& args) const {
  return {at_least(args, "iterations", "--iterations", config_.iterations, config_.min_iterations),
          at_least(args, "warm_up", "--warm-up", config_.warm_up, 0)};
}

}  // namespace parity::options
