// `parity test onnx-backend`: runs the ONNX backend test layout (model.onnx +
// test_data_set_N/{input,output}_K.pb) against any registered runner and reports each test.
#include <onnx/onnx_pb.h>
#include <onnx/onnx-data.pb.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "cli/command.h"
#include "core/logger.h"
#include "onnx/proto_convert.h"
#include "runners/registry.h"
#include "runtime/session.h"

namespace parity::cli {

namespace {

namespace fs = std::filesystem;
using runtime::Value;

constexpr const char* kDefaultDataRoot = "/usr/share/libonnx-testdata/data";
constexpr const char* kDefaultKinds[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
constexpr double kDefaultRtol = 1e-3;
constexpr double kDefaultAtol = 1e-7;

enum class Outcome { kPass, kFail, kError, kSkip };

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kPass: return "pass";
    case Outcome::kFail: return "fail";
    case Outcome::kError: return "error";
    default: return "skipped";
  }
}

struct TestCase {
  fs::path dir;
  std::string id;  // "<kind folder>/<test folder>", the key of the skip file
};

struct TestResult {
  std::string id;
  Outcome outcome = Outcome::kPass;
  std::string message;
  double max_abs_error = 0.0;
  double seconds = 0.0;
};

// ---------------------------------------------------------------------------------------------
// Loading test data.

Value value_from_sequence(const onnx::SequenceProto& seq, const fs::path& base);

Value value_from_optional(const onnx::OptionalProto& opt, const fs::path& base) {
  if (opt.has_tensor_value()) return Value(onnx_io::tensor_from_proto(opt.tensor_value(), base));
  if (opt.has_sequence_value()) return value_from_sequence(opt.sequence_value(), base);
  if (opt.elem_type() == onnx::OptionalProto::TENSOR || opt.elem_type() == onnx::OptionalProto::SEQUENCE ||
      opt.elem_type() == onnx::OptionalProto::UNDEFINED)
    return Value::none();
  fail(ErrorCode::kUnsupported, "optional test values holding maps or optionals are not supported");
}

Value value_from_sequence(const onnx::SequenceProto& seq, const fs::path& base) {
  PARITY_CHECK(seq.sequence_values_size() == 0 && seq.map_values_size() == 0 && seq.optional_values_size() == 0,
               kUnsupported, "sequences of sequences, maps or optionals are not supported");
  std::vector<Tensor> items;
  DType dtype = DType::kUndefined;
  for (const auto& t : seq.tensor_values()) {
    items.push_back(onnx_io::tensor_from_proto(t, base));
    dtype = items.back().dtype();
  }
  return Value::sequence(std::move(items), dtype);
}

/// Reads a .pb file as the kind of value the model declares for that position (as the ONNX
/// backend runner does).
Value load_value(const fs::path& path, const onnx::TypeProto& type) {
  std::ifstream in(path, std::ios::binary);
  PARITY_CHECK(in, kNotFound, "cannot open '", path.string(), "'");
  if (type.has_sequence_type()) {
    onnx::SequenceProto seq;
    PARITY_CHECK(seq.ParseFromIstream(&in), kInvalidModel, "'", path.string(), "' is not a SequenceProto");
    return value_from_sequence(seq, path.parent_path());
  }
  if (type.has_optional_type()) {
    onnx::OptionalProto opt;
    PARITY_CHECK(opt.ParseFromIstream(&in), kInvalidModel, "'", path.string(), "' is not an OptionalProto");
    return value_from_optional(opt, path.parent_path());
  }
  PARITY_CHECK(type.has_tensor_type() || type.value_case() == onnx::TypeProto::VALUE_NOT_SET, kUnsupported,
               "'", path.string(), "': map and sparse tensor test values are not supported");
  onnx::TensorProto proto;
  PARITY_CHECK(proto.ParseFromIstream(&in), kInvalidModel, "'", path.string(), "' is not a TensorProto");
  Tensor t = onnx_io::tensor_from_proto(proto, path.parent_path());
  // numpy has no bfloat16: the ONNX test generator stores bfloat16 data as uint16 bit patterns.
  if (type.has_tensor_type() && type.tensor_type().elem_type() == onnx::TensorProto::BFLOAT16 &&
      t.dtype() == DType::kUInt16)
    t = Tensor::from_bytes(DType::kBFloat16, t.shape(), t.raw_data(), t.size_bytes());
  return Value(std::move(t));
}

std::vector<fs::path> numbered_files(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int i = 0;; ++i) {
    fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p);
  }
  return files;
}

std::vector<fs::path> data_sets(const fs::path& test_dir) {
  std::vector<std::pair<int, fs::path>> sets;
  for (const auto& e : fs::directory_iterator(test_dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() && name.rfind("test_data_set_", 0) == 0) {
      try {
        sets.emplace_back(std::stoi(name.substr(14)), e.path());
      } catch (const std::exception&) {
      }
    }
  }
  std::sort(sets.begin(), sets.end());
  std::vector<fs::path> out;
  for (auto& s : sets) out.push_back(s.second);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Comparison (numpy.testing.assert_allclose semantics; exact for integers, bools, strings).

struct Mismatch {
  bool ok = true;
  std::string message;
  double max_abs_error = 0.0;
};

Mismatch compare_tensors(const Tensor& actual, const Tensor& expected, double rtol, double atol,
                         const std::string& what) {
  Mismatch m;
  auto bad = [&](std::string msg) {
    m.ok = false;
    m.message = what + ": " + msg;
    return m;
  };
  if (actual.dtype() != expected.dtype())
    return bad(str_cat("dtype ", dtype_name(actual.dtype()), ", expected ", dtype_name(expected.dtype())));
  if (actual.shape() != expected.shape())
    return bad(str_cat("shape ", shape_to_string(actual.shape()), ", expected ", shape_to_string(expected.shape())));
  if (actual.dtype() == DType::kString) {
    const auto a = actual.values<std::string>(), e = expected.values<std::string>();
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != e[i]) return bad(str_cat("element ", i, " is '", a[i], "', expected '", e[i], "'"));
    return m;
  }
  if (is_complex(actual.dtype())) {
    if (!actual.bit_equal(expected)) return bad("complex values differ");
    return m;
  }
  const bool floating = is_floating(actual.dtype());
  int64_t violations = 0, first_bad = -1;
  double worst_rel_excess = 0.0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double a = actual.value_as_double(i), e = expected.value_as_double(i);
    if (!floating) {
      if (a != e) {
        if (first_bad < 0) first_bad = i;
        ++violations;
        m.max_abs_error = std::max(m.max_abs_error, std::fabs(a - e));
      }
      continue;
    }
    if (std::isnan(a) || std::isnan(e)) {
      if (std::isnan(a) != std::isnan(e)) {
        if (first_bad < 0) first_bad = i;
        ++violations;
        m.max_abs_error = INFINITY;
      }
      continue;
    }
    if (std::isinf(a) || std::isinf(e)) {
      if (a != e) {
        if (first_bad < 0) first_bad = i;
        ++violations;
        m.max_abs_error = INFINITY;
      }
      continue;
    }
    const double err = std::fabs(a - e);
    m.max_abs_error = std::max(m.max_abs_error, err);
    if (err > atol + rtol * std::fabs(e)) {
      if (first_bad < 0) first_bad = i;
      ++violations;
      worst_rel_excess = std::max(worst_rel_excess, err);
    }
  }
  if (violations > 0) {
    std::ostringstream os;
    os << violations << " of " << actual.numel() << " elements differ (max abs error " << m.max_abs_error
       << "; first at flat index " << first_bad << ": " << actual.value_as_double(first_bad) << " vs expected "
       << expected.value_as_double(first_bad) << ")";
    const double err = m.max_abs_error;
    bad(os.str());
    m.max_abs_error = err;
  }
  return m;
}

Mismatch compare_values(const Value& actual, const Value& expected, double rtol, double atol, const std::string& what) {
  Mismatch m;
  if (expected.is_none() || actual.is_none()) {
    if (expected.is_none() != actual.is_none()) {
      m.ok = false;
      m.message = what + (expected.is_none() ? ": expected an empty optional" : ": got an empty optional");
    }
    return m;
  }
  if (expected.is_sequence()) {
    if (!actual.is_sequence()) return {false, what + ": expected a sequence, got a tensor", 0.0};
    const auto& a = actual.sequence_items();
    const auto& e = expected.sequence_items();
    if (a.size() != e.size())
      return {false, str_cat(what, ": sequence has ", a.size(), " items, expected ", e.size()), 0.0};
    for (size_t i = 0; i < a.size(); ++i) {
      Mismatch item = compare_tensors(a[i], e[i], rtol, atol, str_cat(what, "[", i, "]"));
      m.max_abs_error = std::max(m.max_abs_error, item.max_abs_error);
      if (!item.ok) return item;
    }
    return m;
  }
  if (!actual.is_tensor()) return {false, what + ": expected a tensor, got a sequence", 0.0};
  return compare_tensors(actual.tensor(), expected.tensor(), rtol, atol, what);
}

// ---------------------------------------------------------------------------------------------
// Skip file: "<kind>/<test>  # reason" per line; a "fp64:" prefix limits the entry to the ref
// runner's fp64 oracle mode (tests whose expected data encodes float32 rounding).

constexpr const char* kFp64SkipPrefix = "fp64:";

std::map<std::string, std::string> load_skip_file(const fs::path& path) {
  std::ifstream in(path);
  PARITY_CHECK(in, kNotFound, "cannot open skip file '", path.string(), "'");
  std::map<std::string, std::string> skips;
  std::string line;
  while (std::getline(in, line)) {
    const auto hash = line.find('#');
    std::string id = line.substr(0, hash);
    std::string reason = hash == std::string::npos ? std::string("listed in the skip file") : line.substr(hash + 1);
    auto trim = [](std::string s) {
      const auto b = s.find_first_not_of(" \t\r");
      const auto e = s.find_last_not_of(" \t\r");
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    id = trim(id);
    if (id.empty()) continue;
    skips[id] = trim(reason);
  }
  return skips;
}

/// The skip file shipped with parity: next to the source tree of a build (build/bin/parity) or
/// installed under share/parity.
std::optional<fs::path> default_skip_file() {
  if (const char* env = std::getenv("PARITY_CONFORMANCE_SKIPS")) return fs::path(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  for (const fs::path& candidate : {exe.parent_path() / "../../tests/runtime/conformance_skips.txt",
                                    exe.parent_path() / "../share/parity/conformance_skips.txt"})
    if (fs::exists(candidate)) return fs::weakly_canonical(candidate);
  return std::nullopt;
}

std::vector<TestCase> discover(const std::vector<std::string>& dirs) {
  std::vector<TestCase> tests;
  auto add_test = [&](const fs::path& dir) {
    const fs::path abs = fs::absolute(dir).lexically_normal();
    fs::path clean = abs.filename().empty() ? abs.parent_path() : abs;
    tests.push_back({clean, clean.parent_path().filename().string() + "/" + clean.filename().string()});
  };
  for (const auto& d : dirs) {
    const fs::path dir(d);
    PARITY_CHECK(fs::is_directory(dir), kNotFound, "test folder '", d, "' does not exist");
    if (fs::exists(dir / "model.onnx")) {
      add_test(dir);
      continue;
    }
    std::vector<fs::path> found;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory() && fs::exists(e.path() / "model.onnx")) found.push_back(e.path());
    std::sort(found.begin(), found.end());
    PARITY_CHECK(!found.empty(), kNotFound, "'", d, "' holds no ONNX backend tests (no model.onnx in it or its subfolders)");
    for (const auto& f : found) add_test(f);
  }
  return tests;
}

// ---------------------------------------------------------------------------------------------
// Running one test.

struct Tolerances {
  double rtol = kDefaultRtol;
  double atol = kDefaultAtol;
};

Tolerances test_tolerances(const fs::path& dir, const Tolerances& base, bool user_set) {
  Tolerances t = base;
  const fs::path json = dir / "data.json";
  if (user_set || !fs::exists(json)) return t;
  try {
    std::ifstream in(json);
    auto j = nlohmann::json::parse(in);
    t.rtol = j.value("rtol", t.rtol);
    t.atol = j.value("atol", t.atol);
  } catch (const std::exception&) {
  }
  return t;
}

bool is_tensor_type(const onnx::TypeProto& t) { return t.has_tensor_type(); }

class BackendTestCommand : public Command {
 public:
  std::string name() const override { return "test onnx-backend"; }
  std::string summary() const override {
    return "Run ONNX backend conformance tests (model.onnx + test_data_set_N) with a runner";
  }
  void add_options(ArgParser& parser) override {
    parser.add({.dest = "dirs",
                .help = "Test folders, or folders of test folders (default: the node, pytorch-converted, "
                        "pytorch-operator and simple folders of " + std::string(kDefaultDataRoot) + ")",
                .metavar = "DIR",
                .arity = Arity::kAny});
    parser.add({.flags = {"--runner"}, .help = "Runner to test (a name from the runner registry)",
                .metavar = "NAME", .default_value = "ref"});
    parser.add({.flags = {"--filter"}, .help = "Only tests whose id (<kind>/<test>) matches this regex (search)",
                .metavar = "REGEX"});
    parser.add({.flags = {"--report"}, .help = "Write per-test results as JSON", .metavar = "PATH"});
    parser.add({.flags = {"--skip-file"},
                .help = "Skip file ('<kind>/<test>  # reason' per line); default: the one shipped with parity",
                .metavar = "PATH"});
    parser.add({.flags = {"--no-skip-file"}, .help = "Run every test, ignoring the skip file", .arity = Arity::kFlag});
    parser.add({.flags = {"--rtol"}, .help = "Relative tolerance (default 1e-3, or the test's data.json)",
                .metavar = "R"});
    parser.add({.flags = {"--atol"}, .help = "Absolute tolerance (default 1e-7, or the test's data.json)",
                .metavar = "A"});
    for (const auto& info : RunnerRegistry::instance().all())
      if (info.add_options) info.add_options(parser);
  }

  int run(const Args& args) override {
    std::vector<std::string> dirs = args.list("dirs");
    if (dirs.empty())
      for (const char* kind : kDefaultKinds) dirs.push_back(std::string(kDefaultDataRoot) + "/" + kind);
    std::vector<TestCase> tests = discover(dirs);
    if (auto filter = args.get("filter")) {
      std::regex re;
      try {
        re = std::regex(*filter);
      } catch (const std::regex_error& e) {
        fail(ErrorCode::kInvalidArgument, "--filter '", *filter, "' is not a valid regular expression: ", e.what());
      }
      std::erase_if(tests, [&](const TestCase& t) { return !std::regex_search(t.id, re); });
    }
    std::map<std::string, std::string> skips;
    if (!args.flag("no_skip_file")) {
      if (auto path = args.get("skip_file")) skips = load_skip_file(*path);
      else if (auto def = default_skip_file()) skips = load_skip_file(*def);
    }
    runner_name_ = args.get_or("runner", "ref");
    runner_info_ = RunnerRegistry::instance().find(runner_name_);
    PARITY_CHECK(runner_info_, kInvalidArgument, "unknown runner '", runner_name_, "'; registered runners: ", [] {
      std::vector<std::string> names;
      for (const auto& r : RunnerRegistry::instance().all()) names.push_back(r.name);
      return join_names(names);
    }());
    if (runner_info_->availability) {
      Status s = runner_info_->availability(&args);
      PARITY_CHECK(s.is_ok(), kUnavailable, "runner '", runner_name_, "' is unavailable: ", s.message());
    }
    args_ = &args;
    user_tolerances_ = args.has("rtol") || args.has("atol");
    if (auto r = args.get("rtol")) base_tol_.rtol = parse_double(*r, "--rtol");
    if (auto a = args.get("atol")) base_tol_.atol = parse_double(*a, "--atol");
    if (runner_name_ == "ref") {
      session_options_.threads = static_cast<int>(args.get_int("threads").value_or(1));
      const std::string precision = args.get_or("precision", "fp32");
      PARITY_CHECK(precision == "fp32" || precision == "fp64", kInvalidArgument, "--precision must be fp32 or fp64, got '",
                   precision, "'");
      session_options_.precision = precision == "fp64" ? runtime::Precision::kFloat64 : runtime::Precision::kFloat32;
    }

    std::vector<TestResult> results;
    int counts[4] = {0, 0, 0, 0};
    for (const auto& test : tests) {
      TestResult r;
      r.id = test.id;
      auto skip = skips.find(test.id);
      if (skip == skips.end() && session_options_.precision == runtime::Precision::kFloat64)
        skip = skips.find(std::string(kFp64SkipPrefix) + test.id);
      const auto start = std::chrono::steady_clock::now();
      if (skip != skips.end()) {
        r.outcome = Outcome::kSkip;
        r.message = skip->second;
      } else {
        run_test(test, r);
      }
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      ++counts[static_cast<int>(r.outcome)];
      print_result(r);
      results.push_back(std::move(r));
    }
    const int total = static_cast<int>(results.size());
    std::printf("Summary: %d passed, %d failed, %d errored, %d skipped (%d total)\n", counts[0], counts[1], counts[2],
                counts[3], total);
    std::fflush(stdout);
    if (auto report = args.get("report")) write_report(*report, results, counts);
    return counts[1] == 0 && counts[2] == 0 ? kExitPassed : kExitFailed;
  }

 private:
  void print_result(const TestResult& r) const {
    switch (r.outcome) {
      case Outcome::kPass: std::printf("[pass] %s\n", r.id.c_str()); break;
      case Outcome::kFail: std::printf("[fail] %s: max error %g: %s\n", r.id.c_str(), r.max_abs_error, r.message.c_str()); break;
      case Outcome::kError: std::printf("[error] %s: %s\n", r.id.c_str(), r.message.c_str()); break;
      case Outcome::kSkip: std::printf("[skipped] %s: %s\n", r.id.c_str(), r.message.c_str()); break;
    }
    std::fflush(stdout);
  }

  void write_report(const std::string& path, const std::vector<TestResult>& results, const int* counts) const {
    nlohmann::ordered_json j;
    j["runner"] = runner_name_;
    j["summary"] = {{"passed", counts[0]}, {"failed", counts[1]}, {"errored", counts[2]}, {"skipped", counts[3]},
                    {"total", results.size()}};
    auto& list = j["tests"] = nlohmann::ordered_json::array();
    for (const auto& r : results) {
      nlohmann::ordered_json t;
      t["id"] = r.id;
      t["result"] = outcome_name(r.outcome);
      if (!r.message.empty()) t["message"] = r.message;
      if (r.outcome == Outcome::kFail || r.outcome == Outcome::kPass)
        t["max_abs_error"] = std::isfinite(r.max_abs_error) ? nlohmann::ordered_json(r.max_abs_error)
                                                            : nlohmann::ordered_json("inf");
      t["seconds"] = r.seconds;
      list.push_back(std::move(t));
    }
    std::ofstream out(path);
    PARITY_CHECK(out, kIo, "cannot write report '", path, "'");
    out << j.dump(2) << "\n";
  }

  void run_test(const TestCase& test, TestResult& r) {
    try {
      run_test_or_throw(test, r);
    } catch (const Error& e) {
      r.outcome = e.code() == ErrorCode::kUnsupported && r.outcome == Outcome::kSkip ? Outcome::kSkip : Outcome::kError;
      r.message = e.what();
    } catch (const std::bad_alloc&) {
      r.outcome = Outcome::kError;
      r.message = "out of memory";
    } catch (const std::exception& e) {
      r.outcome = Outcome::kError;
      r.message = std::string("internal error: ") + e.what();
    }
  }

  void run_test_or_throw(const TestCase& test, TestResult& r) {
    const fs::path model_path = test.dir / "model.onnx";
    onnx::ModelProto model;
    {
      std::ifstream in(model_path, std::ios::binary);
      PARITY_CHECK(in, kNotFound, "cannot open '", model_path.string(), "'");
      PARITY_CHECK(model.ParseFromIstream(&in), kInvalidModel, "'", model_path.string(), "' is not an ONNX model");
    }
    const Tolerances tol = test_tolerances(test.dir, base_tol_, user_tolerances_);
    const auto& graph = model.graph();

    // Non-ref runners only exchange tensors.
    std::unique_ptr<Runner> runner;
    std::optional<runtime::Session> session;
    if (runner_name_ == "ref") {
      session.emplace(runtime::Session::create(model, session_options_, test.dir).value());
    } else {
      for (const auto& v : graph.input())
        if (!is_tensor_type(v.type())) {
          r.outcome = Outcome::kSkip;
          r.message = "input '" + v.name() + "' is not a tensor; runner '" + runner_name_ + "' takes tensors only";
          return;
        }
      for (const auto& v : graph.output())
        if (!is_tensor_type(v.type())) {
          r.outcome = Outcome::kSkip;
          r.message = "output '" + v.name() + "' is not a tensor; runner '" + runner_name_ + "' returns tensors only";
          return;
        }
      runner = runner_info_->create(RunnerConfig{model_path.string(), args_});
      runner->activate();
    }

    double max_error = 0.0;
    const auto sets = data_sets(test.dir);
    PARITY_CHECK(!sets.empty(), kNotFound, "'", test.dir.string(), "' has no test_data_set_N folder");
    for (const auto& set : sets) {
      const auto input_files = numbered_files(set, "input_");
      const auto output_files = numbered_files(set, "output_");
      PARITY_CHECK(static_cast<int>(input_files.size()) <= graph.input_size(), kInvalidModel, set.string(), " has ",
                   input_files.size(), " inputs but the model has ", graph.input_size());
      PARITY_CHECK(static_cast<int>(output_files.size()) <= graph.output_size(), kInvalidModel, set.string(), " has ",
                   output_files.size(), " outputs but the model has ", graph.output_size());
      runtime::NamedValues feed;
      for (size_t k = 0; k < input_files.size(); ++k)
        feed.emplace_back(graph.input(static_cast<int>(k)).name(),
                          load_value(input_files[k], graph.input(static_cast<int>(k)).type()));
      std::vector<Value> actual;
      if (session) {
        runtime::RunOptions opts;
        opts.check_input_shapes = false;  // as the ONNX backend runner
        for (size_t k = 0; k < output_files.size(); ++k) opts.outputs.push_back(graph.output(static_cast<int>(k)).name());
        for (auto& [name, v] : session->run_values(feed, opts)) actual.push_back(std::move(v));
      } else {
        TensorMap tensors;
        for (auto& [name, v] : feed) tensors.set(name, v.tensor());
        TensorMap out = runner->infer(tensors);
        for (size_t k = 0; k < output_files.size(); ++k) {
          const std::string& name = graph.output(static_cast<int>(k)).name();
          const Tensor* t = out.find(name);
          PARITY_CHECK(t, kRuntime, "runner did not return output '", name, "'");
          actual.emplace_back(*t);
        }
      }
      for (size_t k = 0; k < output_files.size(); ++k) {
        const auto& out_info = graph.output(static_cast<int>(k));
        const Value expected = load_value(output_files[k], out_info.type());
        Mismatch m = compare_values(actual[k], expected, tol.rtol, tol.atol,
                                    set.filename().string() + " output '" + out_info.name() + "'");
        max_error = std::max(max_error, m.max_abs_error);
        if (!m.ok) {
          r.outcome = Outcome::kFail;
          r.message = m.message;
          r.max_abs_error = max_error;
          if (runner) runner->deactivate();
          return;
        }
      }
    }
    if (runner) runner->deactivate();
    r.outcome = Outcome::kPass;
    r.max_abs_error = max_error;
  }

  std::string runner_name_;
  const RunnerInfo* runner_info_ = nullptr;
  const Args* args_ = nullptr;
  Tolerances base_tol_;
  bool user_tolerances_ = false;
  runtime::SessionOptions session_options_;
};

}  // namespace

PARITY_REGISTER_COMMAND(BackendTestCommand);

}  // namespace parity::cli
