// The report module without a browser: the figures a report is built from (error histograms,
// heatmaps, operator families, per-layer tolerances) and the page's self-containment.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <regex>

#include "compare/comparator.h"
#include "core/status.h"
#include "support/test_support.h"
#include "tools/navigator/status.h"
#include "tools/report/conformance_report.h"
#include "tools/report/package_report.h"
#include "tools/report/report.h"
#include "tools/report/run_report.h"
#include "tools/report/svg.h"

namespace parity::testing {
namespace {

using tools::report::Json;

TEST(ReportHistogram, LogBinsWithZerosAndNonFiniteApart) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor t = Tensor::from_vector<float>({7}, {0.f, 2e-6f, 3e-6f, 5e-5f, 8e-4f, static_cast<float>(nan),
                                                    static_cast<float>(inf)});
  const Json h = tools::report::error_histogram(t);
  EXPECT_EQ(h["zeros"], 1);
  EXPECT_EQ(h["nonfinite"], 2);
  EXPECT_TRUE(h["log"].get<bool>());
  const auto edges = h["edges"].get<std::vector<double>>();
  const auto counts = h["counts"].get<std::vector<int64_t>>();
  ASSERT_EQ(edges.size(), counts.size() + 1);
  EXPECT_NEAR(edges.front(), 1e-6, 1e-18);  // whole decades around the values, four bins each
  EXPECT_NEAR(edges.back(), 1e-3, 1e-15);
  EXPECT_EQ(counts.size(), 12u);
  int64_t total = 0;
  for (auto c : counts) total += c;
  EXPECT_EQ(total, 4);
  EXPECT_EQ(counts.back(), 1) << "8e-4 is in the last bin, [10^-3.25, 1e-3]";
}

TEST(ReportHistogram, NarrowRangeUsesLinearBins) {
  const Json h = tools::report::error_histogram(Tensor::from_vector<float>({3}, {2.f, 3.f, 4.f}));
  EXPECT_FALSE(h["log"].get<bool>());
  EXPECT_EQ(h["counts"].size(), 20u);
  EXPECT_EQ(h["counts"].front(), 1);
  EXPECT_EQ(h["counts"].back(), 1);
}

TEST(ReportHeatmap, MaxPooledOverSpatialAxesAndPerChannel) {
  std::vector<float> v(1 * 2 * 130 * 4, 0.f);
  v[(1 * 130 + 129) * 4 + 3] = 5.f;  // channel 1, row 129, column 3
  v[(0 * 130 + 0) * 4 + 0] = -2.f;   // channel 0, row 0: absolute values count
  const Tensor t = Tensor::from_vector<float>({1, 2, 130, 4}, v);
  const Json all = tools::report::error_heatmaps(t, false, 64, 16);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0]["rows"], 44);  // 130 rows pooled by 3
  EXPECT_EQ(all[0]["cols"], 4);
  EXPECT_EQ(all[0]["values"][43 * 4 + 3], 5.0);
  EXPECT_EQ(all[0]["values"][0], 2.0);
  const Json per = tools::report::error_heatmaps(t, true, 64, 16);
  ASSERT_EQ(per.size(), 2u);
  EXPECT_EQ(per[0]["values"][43 * 4 + 3], 0.0);
  EXPECT_EQ(per[0]["values"][0], 2.0);
  EXPECT_EQ(per[1]["values"][43 * 4 + 3], 5.0);
  EXPECT_EQ(per[1]["label"], "channel 1");
  EXPECT_TRUE(tools::report::error_heatmaps(Tensor::from_vector<float>({3}, {1, 2, 3}), false, 64, 16).empty());
}

TEST(ReportConformance, FamiliesComeFromOnnxDefinitions) {
  EXPECT_EQ(tools::report::operator_family("Conv"), "nn");
  EXPECT_EQ(tools::report::operator_family("Add"), "math");
  EXPECT_EQ(tools::report::operator_family("Reshape"), "tensor");  // Reshape-25: a parity schema over ONNX's
  EXPECT_EQ(tools::report::operator_family("RMSNormalization"), "nn");  // only in parity's schemas
  EXPECT_EQ(tools::report::operator_family("BitCast"), "tensor");
  EXPECT_EQ(tools::report::operator_family("LinearClassifier", "ai.onnx.ml"), "traditionalml");
  EXPECT_EQ(tools::report::operator_family("NoSuchOp"), "other");
  const Json s = tools::report::conformance_section(
      "ref", {{.id = "node/test_add", .outcome = "pass", .op_type = "Add", .family = "math"},
              {.id = "node/test_sub", .outcome = "fail", .op_type = "Sub", .family = "math", .message = "bad"},
              {.id = "node/test_conv", .outcome = "skipped", .op_type = "Conv", .family = "nn"}});
  EXPECT_EQ(s["summary"]["passed"], 1);
  EXPECT_EQ(s["summary"]["failed"], 1);
  EXPECT_EQ(s["summary"]["total"], 3);
  ASSERT_EQ(s["families"].size(), 2u);
  EXPECT_EQ(s["families"][0]["family"], "math");
  EXPECT_EQ(s["families"][0]["failed"], 1);
  EXPECT_EQ(s["families"][1]["skipped"], 1);
}

TEST(ReportRun, SectionHasVerdictsStatisticsAndHeatmaps) {
  RunResults results;
  std::vector<float> a(2 * 3 * 4, 1.f), b = a;
  b[5] = 1.5f;
  IterationResult ra, rb;
  ra.outputs.set("y", Tensor::from_vector<float>({2, 3, 4}, a));
  rb.outputs.set("y", Tensor::from_vector<float>({2, 3, 4}, b));
  results.add("ref", {ra});
  results.add("ort", {rb});
  const std::vector<std::pair<size_t, size_t>> pairs{{0, 1}};
  const compare::AccuracyResult accuracy = compare::Comparator::compare_accuracy(results, {}, pairs);
  tools::report::RunReportOptions options;
  const Json s = tools::report::run_section(results, pairs, &accuracy, false, options);
  ASSERT_EQ(s["comparisons"].size(), 1u);
  const Json& o = s["comparisons"][0]["outputs"][0];
  EXPECT_FALSE(o["passed"].get<bool>());
  EXPECT_DOUBLE_EQ(o["error"]["max_absdiff"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(o["stats0"]["mean"].get<double>(), 1.0);
  EXPECT_EQ(o["abs_histogram"]["zeros"], 23);
  ASSERT_EQ(o["heatmaps"].size(), 1u);
  EXPECT_EQ(o["heatmaps"][0]["rows"], 3);
  EXPECT_EQ(o["heatmaps"][0]["values"][5], 0.5);
  EXPECT_TRUE(s["outputs"].empty());
}

TEST(ReportLayerwise, PerLayerTolerancesAndFirstDivergence) {
  compare::LayerwiseReport r;
  r.reference_name = "ref";
  r.peer_name = "ort";
  r.layers.resize(3);
  r.layers[0] = {.name = "a", .op_type = "Conv", .compared = true, .max_absdiff = 1e-7};
  r.layers[1] = {.name = "b", .op_type = "Relu", .compared = true, .passed = false, .max_absdiff = 1e-2};
  r.layers[2] = {.name = "c", .op_type = "Shape", .compared = false, .note = "not a float"};
  r.first_failure = 1;
  compare::SimpleCompareOptions tol;
  tol.atol.set("b", 1e-3);
  const Json s = tools::report::layerwise_section({r}, tol);
  EXPECT_FALSE(s["passed"].get<bool>());
  EXPECT_EQ(s["iterations"][0]["first_failure"], 1);
  EXPECT_DOUBLE_EQ(s["iterations"][0]["layers"][1]["atol"].get<double>(), 1e-3);
  EXPECT_DOUBLE_EQ(s["iterations"][0]["layers"][0]["atol"].get<double>(), 1e-5);
  EXPECT_FALSE(s["iterations"][0]["layers"][2].contains("max_absdiff"));
  // The page: both charts mark the divergence, the layers' data is embedded for the click script.
  tools::report::Report report("t", "parity run m.onnx");
  report.add_section(s);
  const std::string html = report.html();
  EXPECT_NE(html.find("first divergence: b (Relu)"), std::string::npos);
  EXPECT_NE(html.find("id=\"layers-s0i0\""), std::string::npos);
  EXPECT_NE(html.find("data-initial=\"1\""), std::string::npos);
}

// A golden comparison where the first failing layer is not where the divergence starts (one of its
// inputs was not compared): the start is found, explained by its inputs' errors, and marked.
TEST(ReportLayerwise, GoldenComparisonExplainsWhereTheDivergenceStarts) {
  compare::LayerwiseReport r;
  r.reference_name = "ref";
  r.peer_name = "onnxrt-runner-N0";
  r.layers.resize(4);
  r.layers[0] = {.name = "a", .node = "n_a", .op_type = "Conv", .inputs = {"x", "w"}, .compared = true, .max_absdiff = 1e-7};
  r.layers[1] = {.name = "u", .node = "n_u", .op_type = "Shape", .inputs = {"a"}, .compared = false, .note = "not a float"};
  r.layers[2] = {.name = "b", .node = "n_b", .op_type = "Reshape", .inputs = {"a", "u"}, .compared = true, .passed = false,
                 .max_absdiff = 1e-2};
  r.layers[3] = {.name = "c", .node = "n_c", .op_type = "Gemm", .inputs = {"a", "w2"}, .compared = true, .passed = false,
                 .max_absdiff = 0.5, .max_reldiff = 0.25};
  r.first_failure = 2;
  r.golden_file_bytes = 1234;
  const Json s = tools::report::layerwise_section({tools::report::LayerwiseComparison{r, 3, "/tmp/golden.json"}},
                                                  compare::SimpleCompareOptions{});
  const Json& it = s["iterations"][0];
  EXPECT_EQ(it["iteration"], 3);
  EXPECT_EQ(it["golden_file"], "/tmp/golden.json");
  EXPECT_EQ(it["peer"], "onnxrt-runner-N0");
  EXPECT_EQ(it["memory"]["golden_file_bytes"], 1234);
  // divergence_start was not set by the comparison: the section finds it.
  const Json& d = it["divergence_start"];
  ASSERT_TRUE(d.is_object()) << it.dump();
  EXPECT_EQ(d["layer"], 3);
  EXPECT_EQ(d["node"], "n_c");
  ASSERT_EQ(d["inputs"].size(), 2u);
  EXPECT_EQ(d["inputs"][0]["name"], "a");
  EXPECT_EQ(d["inputs"][0]["layer"], 0);
  EXPECT_DOUBLE_EQ(d["inputs"][0]["max_absdiff"].get<double>(), 1e-7);
  EXPECT_TRUE(d["inputs"][1]["shared"].get<bool>()) << "w2 is a weight, the same on both sides";
  EXPECT_DOUBLE_EQ(d["output"]["max_absdiff"].get<double>(), 0.5);
  EXPECT_FALSE(d["output"]["passed"].get<bool>());
  tools::report::Report report("t", "parity run m.onnx --onnx-outputs mark all --load-outputs golden.json");
  report.add_section(s);
  const std::string html = report.html();
  EXPECT_NE(html.find("first divergence: b (Reshape)"), std::string::npos);
  EXPECT_NE(html.find("divergence starts: c (Gemm)"), std::string::npos);
  EXPECT_NE(html.find("Divergence starts at node <code>n_c</code>"), std::string::npos);
  EXPECT_NE(html.find("against the stored run of onnxrt-runner-N0 in <code>/tmp/golden.json</code>"), std::string::npos);
  EXPECT_NE(html.find("model input or weight"), std::string::npos);
}

TEST(ReportPage, SelfContainedWithStrictPolicy) {
  tools::report::Report report("</title><script>alert(1)</script>", "parity run x.onnx");
  report.add_section(tools::report::conformance_section(
      "ref", {{.id = "node/</script>", .outcome = "error", .op_type = "Add", .family = "math", .message = "<b>"}}));
  const std::string html = report.html();
  EXPECT_NE(html.find("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
                      "'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"),
            std::string::npos);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos) << "text must be escaped";
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_FALSE(std::regex_search(html, std::regex(R"((src|href|action)\s*=|url\(|@import|https?:)", std::regex::icase)));
  EXPECT_EQ(tools::report::html::json_script("x", Json{{"a", "</script>"}}).find("</script>\""), std::string::npos);
}

TEST(ReportPage, FileNameChoosesFormatAndBadNamesAreUserErrors) {
  TempDir tmp;
  EXPECT_EQ(tools::report::check_report_path((tmp / "r.html").string()), tools::report::Format::kHtml);
  EXPECT_EQ(tools::report::check_report_path((tmp / "r.JSON").string()), tools::report::Format::kJson);
  try {
    tools::report::check_report_path((tmp / "r.txt").string());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("must end in .html"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tools::report::check_report_path((tmp / "missing/r.html").string()), Error);
  // A section nobody renders is parity's bug, not the user's.
  tools::report::Report report("t", "c");
  report.add_section(Json{{"type", "no-such-section"}});
  EXPECT_THROW(report.html(), Error);
}

// Found by fuzz_nav_package: a package whose status.yaml lists no formats made the package
// report's renderer read a "formats" key the section did not have (undefined behaviour in the
// JSON library; here an uncaught exception).
TEST(ReportPackage, AStatusWithoutFormatsRendersAnEmptyMatrix) {
  tools::navigator::WorkspaceStatus status;
  status.config.source = "model.onnx";
  tools::report::Report report("parity package status", "parity package status p.nav --report r.html");
  report.add_section(tools::report::package_section(status));
  const std::string page = report.html();
  EXPECT_NE(page.find("<h2>Formats</h2>"), std::string::npos);
  EXPECT_TRUE(report.json()["sections"][0]["formats"].is_array());
}

// Found by fuzz_nav_package: a format or reason in status.yaml that is not UTF-8 made the JSON
// report throw nlohmann's type_error (an internal error of `package status --report r.json`).
TEST(ReportPackage, NamesThatAreNotUtf8AreWrittenReplaced) {
  TempDir dir;
  tools::navigator::WorkspaceStatus status;
  status.config.source = "model\xff.onnx";
  tools::navigator::FormatStatus format{"onnx\xfe", "onnx/model.onnx", {}, {}};
  format.export_step.state = tools::navigator::StepState::kFail;
  format.export_step.reason = "bad \xc3";
  status.formats.push_back(format);
  tools::report::Report report("parity package status", "parity package status p.nav --report r.json");
  report.add_section(tools::report::package_section(status));
  report.write((dir / "r.json").string());
  report.write((dir / "r.html").string());
  const auto json = nlohmann::json::parse(read_file(dir / "r.json"));
  EXPECT_EQ(json["sections"][0]["formats"][0]["format"], "onnx\xef\xbf\xbd");
}

}  // namespace
}  // namespace parity::testing
