// `parity test onnx-backend` on bad input: an unknown op and a missing folder give one clear
// line and exit 1; a single test folder runs and prints the summary; a peer runtime that crashes on
// a case (OpenCV's importer) errs that case, in its child process, and the suite goes on.
#include <gtest/gtest.h>

#include <fstream>

#include "support/model_builder.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

void write_case(const std::filesystem::path& dir, const std::string& op) {
  std::filesystem::create_directories(dir / "test_data_set_0");
  ModelBuilder m(13);
  m.input("x", DType::kFloat32, {2});
  m.node(op, {"x"}, {"y"}, "n");
  m.output("y", DType::kFloat32, {2});
  std::ofstream out(dir / "model.onnx", std::ios::binary);
  m.model().SerializeToOstream(&out);
  onnx::TensorProto t;
  model::tensor_to_proto(Tensor::from_vector<float>({2}, {1, 2}), &t, "x");
  std::ofstream(dir / "test_data_set_0/input_0.pb", std::ios::binary) << t.SerializeAsString();
  model::tensor_to_proto(Tensor::from_vector<float>({2}, {1, 2}), &t, "y");
  std::ofstream(dir / "test_data_set_0/output_0.pb", std::ios::binary) << t.SerializeAsString();
}

TEST(BackendCommand, PassErrorAndSummary) {
  TempDir tmp;
  write_case(tmp / "suite/test_identity_ok", "Identity");
  write_case(tmp / "suite/test_unknown", "FancyOp");
  CommandResult r = run_parity({"test", "onnx-backend", (tmp / "suite").string(), "--no-skip-file", "--report",
                                (tmp / "r.json").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("[pass] suite/test_identity_ok"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[error] suite/test_unknown: FancyOp node 'n': parity has no kernel for op "
                          "'FancyOp' in domain 'ai.onnx'"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Summary: 1 passed, 0 failed, 1 errored, 0 skipped (2 total)"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(tmp / "r.json"));
}

TEST(BackendCommand, MissingFolderIsAUserError) {
  CommandResult r = run_parity({"test", "onnx-backend", "/nonexistent/tests"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("test folder '/nonexistent/tests' does not exist"), std::string::npos) << r.output;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PARITY_TEST_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(PARITY_TEST_UNDER_ASAN)
constexpr bool kUnderAddressSanitizer = true;
#else
constexpr bool kUnderAddressSanitizer = false;
#endif

// OpenCV 4.6's ONNX importer dies with SIGSEGV on ONNX 1.23's expanded Celu cases; run in a child
// process per case (RunnerInfo::isolate_by_default), the crash is those cases' error line.
TEST(BackendCommand, PeerCrashErrsThatCaseAndTheSuiteGoesOn) {
  PARITY_REQUIRE_RUNNER("opencv");
  const std::filesystem::path suite = source_dir() / ".cache/onnx-testdata-1.23/node";
  PARITY_REQUIRE_FILE(suite);
  CommandResult r =
      run_parity({"test", "onnx-backend", suite.string(), "--runner", "opencv", "--no-skip-file", "--filter", "celu"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("[pass] node/test_celu\n"), std::string::npos) << r.output;
  // Under AddressSanitizer (make test-sanitize) the sanitizer's own SIGSEGV handler reports OpenCV's
  // crash and ends the child with exit status 1 instead of the signal.
  const bool killed = r.output.find("[error] node/test_celu_expanded: the runner's process was killed by signal 11") !=
                      std::string::npos;
  const bool ended_by_asan = kUnderAddressSanitizer &&
                             r.output.find("[error] node/test_celu_expanded: the runner's process exited with status 1") !=
                                 std::string::npos;
  EXPECT_TRUE(killed || ended_by_asan) << r.output;
  EXPECT_NE(r.output.find("Summary: "), std::string::npos) << r.output;
}

}  // namespace
}  // namespace parity::testing
