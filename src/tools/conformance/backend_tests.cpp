#include "tools/conformance/backend_tests.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "compare/isolated_run.h"
#include "core/formats/npy.h"
#include "core/logger.h"
#include "core/low_precision.h"
#include "core/progress.h"
#include "core/text.h"
#include "runners/registry.h"

namespace parity::tools {

namespace {

namespace fs = std::filesystem;
using runtime::Value;
using Outcome = BackendOutcome;
using TestResult = BackendTestResult;

constexpr double kDefaultRtol = 1e-3;
constexpr double kDefaultAtol = 1e-7;

struct TestCase {
  fs::path dir;
  std::string id;  // "<kind folder>/<test folder>", the key of the skip file
};

std::string normalized(const std::string& name) {
  std::string out;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The operator a test is about: the model's only node, else the node whose op type the test's name
// starts with (test_layer_normalization_2d_expanded -> LayerNormalization), longest match first,
// else the first node. Empty when the model cannot be read (the run reports that).
void identify_operator(const fs::path& dir, TestResult& r) {
  onnx::ModelProto model;
  std::ifstream in(dir / "model.onnx", std::ios::binary);
  if (!in || !model.ParseFromIstream(&in) || model.graph().node_size() == 0) return;
  const auto& nodes = model.graph().node();
  const onnx::NodeProto* best = &nodes[0];
  if (nodes.size() > 1) {
    std::string test = dir.filename().string();
    if (test.rfind("test_", 0) == 0) test = test.substr(5);
    test = normalized(test);
    size_t best_len = 0;
    for (const auto& node : nodes) {
      const std::string op = normalized(node.op_type());
      if (op.size() > best_len && test.rfind(op, 0) == 0) best = &node, best_len = op.size();
    }
  }
  r.op_type = best->op_type();
  r.domain = best->domain();
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
  // float8/float4 outputs have NaN encodings too: compare them as floats (NaN matches NaN).
  const bool floating = is_floating(actual.dtype()) ||
                        (is_low_precision(actual.dtype()) && !is_low_precision_integer(actual.dtype()));
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

// Runs the tests of one runner.
class BackendTestRunner {
 public:
  explicit BackendTestRunner(const BackendTestOptions& options) : options_(options) {
    runner_info_ = runners::RunnerRegistry::instance().find(options.runner);
    PARITY_CHECK(runner_info_, kInvalidArgument, "unknown runner '", options.runner, "'; registered runners: ", [] {
      std::vector<std::string> names;
      for (const auto& r : runners::RunnerRegistry::instance().all()) names.push_back(r.name);
      return join_names(names);
    }());
    const Status available = runner_info_->available(options.runner_options);
    PARITY_CHECK(available.is_ok(), kUnavailable, "runner '", options.runner, "' is unavailable: ", available.message());
    user_tolerances_ = options.rtol || options.atol;
    base_tol_.rtol = options.rtol.value_or(kDefaultRtol);
    base_tol_.atol = options.atol.value_or(kDefaultAtol);
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

 private:
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
    std::unique_ptr<runners::Runner> runner;
    std::optional<runtime::Session> session;
    if (options_.runner == "ref") {
      session.emplace(runtime::Session::create(model, options_.session, test.dir).value());
    } else {
      for (const auto& v : graph.input())
        if (!is_tensor_type(v.type())) {
          r.outcome = Outcome::kSkip;
          r.message = "input '" + v.name() + "' is not a tensor; runner '" + options_.runner + "' takes tensors only";
          return;
        }
      for (const auto& v : graph.output())
        if (!is_tensor_type(v.type())) {
          r.outcome = Outcome::kSkip;
          r.message = "output '" + v.name() + "' is not a tensor; runner '" + options_.runner + "' returns tensors only";
          return;
        }
      if (!runner_info_->isolate_by_default) {
        runner = runner_info_->create(runners::RunnerConfig{model_path.string(), options_.runner_options});
        runner->activate();
      }
    }

    double max_error = 0.0;
    const auto sets = compare::backend_data_sets(test.dir);
    PARITY_CHECK(!sets.empty(), kNotFound, "'", test.dir.string(), "' has no test_data_set_N folder");
    for (const auto& set_dir : sets) {
      const compare::BackendDataSet set = compare::load_backend_data_set(set_dir, graph);
      const runtime::NamedValues& feed = set.inputs;
      const size_t num_outputs = set.outputs.size();
      std::vector<Value> actual;
      if (session) {
        runtime::RunOptions opts;
        opts.check_input_shapes = false;  // as the ONNX backend runner
        for (const auto& [name, expected] : set.outputs) opts.outputs.push_back(name);
        for (auto& [name, v] : session->run_values(feed, opts)) actual.push_back(std::move(v));
      } else if (!runner) {
        TensorMap tensors;
        for (auto& [name, v] : feed) tensors.set(name, v.tensor());
        std::vector<std::string> names;
        for (const auto& [name, expected] : set.outputs) names.push_back(name);
        for (auto& t : infer_in_child(model_path, tensors, names)) actual.emplace_back(std::move(t));
      } else {
        TensorMap tensors;
        for (auto& [name, v] : feed) tensors.set(name, v.tensor());
        TensorMap out = runner->infer(tensors);
        for (const auto& [name, expected] : set.outputs) {
          const Tensor* t = out.find(name);
          PARITY_CHECK(t, kRuntime, "runner did not return output '", name, "'");
          actual.emplace_back(*t);
        }
      }
      for (size_t k = 0; k < num_outputs; ++k) {
        const auto& [name, expected] = set.outputs[k];
        Mismatch m = compare_values(actual[k], expected, tol.rtol, tol.atol,
                                    set_dir.filename().string() + " output '" + name + "'");
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

  // A peer known to crash its process on some models (RunnerInfo::isolate_by_default: OpenCV's
  // importer) runs each data set in a child process, so a crash is that case's error instead of the
  // end of the suite. The outputs come back as .npy files.
  std::vector<Tensor> infer_in_child(const fs::path& model_path, const TensorMap& feed,
                                     const std::vector<std::string>& names) {
    std::vector<Tensor> outputs(names.size());
    auto output_file = [](const fs::path& folder, size_t k) { return folder / (std::to_string(k) + ".npy"); };
    compare::Isolation isolation;
    isolation.enabled = true;
    const std::string failure = compare::run_in_child_folder(
        options_.runner, isolation,
        [&](const fs::path& folder) {
          auto runner = runner_info_->create(runners::RunnerConfig{model_path.string(), options_.runner_options});
          runner->activate();
          const TensorMap out = runner->infer(feed);
          for (size_t k = 0; k < names.size(); ++k) {
            const Tensor* t = out.find(names[k]);
            PARITY_CHECK(t, kRuntime, "runner did not return output '", names[k], "'");
            write_npy(output_file(folder, k).string(), *t);
            // .npy records the 1-byte low-precision types as '<V1'; their dtype travels beside.
            std::ofstream(output_file(folder, k).string() + ".dtype") << static_cast<int>(t->dtype());
          }
          runner->deactivate();
        },
        [&](const fs::path& folder) {
          for (size_t k = 0; k < names.size(); ++k) {
            if (!fs::exists(output_file(folder, k))) continue;
            int dtype = 0;
            std::ifstream(output_file(folder, k).string() + ".dtype") >> dtype;
            outputs[k] = resolve_numpy_void(read_npy(output_file(folder, k).string()), static_cast<DType>(dtype));
          }
        });
    PARITY_CHECK(failure.empty(), kRuntime, failure);
    return outputs;
  }

  const BackendTestOptions& options_;
  const runners::RunnerInfo* runner_info_ = nullptr;
  Tolerances base_tol_;
  bool user_tolerances_ = false;
};

}  // namespace

const char* backend_outcome_name(BackendOutcome outcome) {
  switch (outcome) {
    case Outcome::kPass: return "pass";
    case Outcome::kFail: return "fail";
    case Outcome::kError: return "error";
    default: return "skipped";
  }
}

std::optional<fs::path> default_backend_skip_file() {
  if (const char* env = std::getenv("PARITY_CONFORMANCE_SKIPS")) return fs::path(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  for (const fs::path& candidate : {exe.parent_path() / "../../tests/runtime/conformance_skips.txt",
                                    exe.parent_path() / "../share/parity/conformance_skips.txt"})
    if (fs::exists(candidate)) return fs::weakly_canonical(candidate);
  return std::nullopt;
}

std::vector<BackendTestResult> run_backend_tests(const BackendTestOptions& options) {
  std::vector<TestCase> tests = discover(options.dirs);
  if (options.filter) {
    std::regex re;
    try {
      re = std::regex(*options.filter);
    } catch (const std::regex_error& e) {
      fail(ErrorCode::kInvalidArgument, "--filter '", *options.filter, "' is not a valid regular expression: ", e.what());
    }
    std::erase_if(tests, [&](const TestCase& t) { return !std::regex_search(t.id, re); });
  }
  BackendTestRunner runner(options);
  std::vector<TestResult> results;
  Progress progress("Conformance (" + options.runner + ")", static_cast<int64_t>(tests.size()));
  for (const auto& test : tests) {
    TestResult r;
    r.id = test.id;
    if (options.identify_operators) identify_operator(test.dir, r);
    const auto skip = options.skips.reason(test.id, options.session.precision == runtime::Precision::kFloat64);
    const auto start = std::chrono::steady_clock::now();
    if (skip) {
      r.outcome = Outcome::kSkip;
      r.message = *skip;
    } else {
      runner.run_test(test, r);
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (options.on_result) options.on_result(r);
    results.push_back(std::move(r));
    progress.advance();
  }
  return results;
}

}  // namespace parity::tools
