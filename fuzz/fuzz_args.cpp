// The argument parser and the reusable option groups (data loader, iterations): the first byte
// picks one of two parsers, the rest is NUL-separated tokens. Parsed values are then read the way
// commands read them (typed getters, the groups' parse()), which is where values are validated.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "options/args.h"
#include "options/data_loader_args.h"

namespace {

using parity::options::ArgParser;
using parity::options::Arity;

// One parser with every arity, choices, defaults and a required positional, like `run`'s.
ArgParser make_command_parser() {
  ArgParser parser("parity fuzz", "every kind of option");
  parser.add({.flags = {}, .dest = "model", .metavar = "MODEL", .required = true});
  parser.add({.flags = {"-o", "--output"}, .metavar = "OUT"});
  parser.add({.flags = {"-v", "--verbose"}, .arity = Arity::kCount});
  parser.add({.flags = {"--ref"}, .arity = Arity::kFlag});
  parser.add({.flags = {"--onnx-outputs"}, .arity = Arity::kOneOrMore});
  parser.add({.flags = {"--check-error-stat"}, .choices = {"max", "mean", "median", "elemwise"}});
  parser.add({.flags = {"--atol"}, .default_value = "1e-5"});
  parity::options::DataLoaderArgs().add_to(parser);
  parity::options::IterationArgs({.iterations = 1, .iterations_help = "iterations"}).add_iterations_to(parser);
  return parser;
}

const ArgParser& command_parser() {
  static const ArgParser parser = make_command_parser();
  return parser;
}

const ArgParser& bench_parser() {
  static const ArgParser parser = [] {
    ArgParser p("parity fuzz-bench", "several models");
    p.add({.flags = {}, .dest = "models", .metavar = "MODEL", .arity = Arity::kOneOrMore, .required = true});
    parity::options::DataLoaderArgs({.per_model_shapes = true, .load_inputs = false}).add_to(p);
    return p;
  }();
  return parser;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool bench = data[0] & 1;
  std::vector<std::string> tokens(1);
  for (size_t i = 1; i < size; ++i) {
    if (data[i] == 0) tokens.emplace_back();
    else tokens.back() += static_cast<char>(data[i]);
  }
  parity::fuzz::expect_clean([&] {
    const parity::options::Args args = (bench ? bench_parser() : command_parser()).parse(tokens);
    parity::fuzz::expect_clean([&] { args.get_double("atol"); });
    parity::fuzz::expect_clean([&] { args.get_int("seed"); });
    parity::fuzz::expect_clean([&] { args.list("onnx_outputs"); });
    parity::fuzz::expect_clean([&] {
      parity::options::DataLoaderArgs({.per_model_shapes = bench, .load_inputs = !bench}).parse(args);
    });
    if (!bench)
      parity::fuzz::expect_clean(
          [&] { parity::options::IterationArgs({.iterations = 1}).parse(args); });
  });
  return 0;
}
