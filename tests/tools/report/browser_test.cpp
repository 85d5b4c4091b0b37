// Every kind of HTML report opened in headless Chromium (Debian's `chromium`, started here with a
// fresh profile and no network features): the page is screenshotted (the PNG must not be blank),
// its DOM after scripts ran must hold the charts with as many marks as the JSON report's figures
// call for, the click-to-inspect script must have run, and Chromium's console must show no
// Content-Security-Policy violation (the page asked for nothing outside itself).
#include <gtest/gtest.h>
#include <zlib.h>

#include <array>
#include <cstdlib>
#include <set>
#include <random>
#include <fstream>
#include <map>
#include <regex>

#include <nlohmann/json.hpp>

#include "runners/registry.h"
#include "support/model_builder.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr const char* kChromiumFlags =
    "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking "
    "--disable-component-update --disable-sync --enable-logging=stderr --v=0";

std::string chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(p)) return p;
  return "";
}

// Skips when Chromium is missing, except on CI, where a missing browser is a failure.
#define REQUIRE_CHROMIUM()                                                                 \
  do {                                                                                     \
    if (chromium().empty()) {                                                              \
      const char* ci = std::getenv("CI");                                                  \
      if (ci && std::string(ci) == "true") FAIL() << "chromium missing (scripts/setup.sh)"; \
      GTEST_SKIP() << "chromium missing (run scripts/setup.sh)";                           \
    }                                                                                      \
  } while (0)

struct Page {
  std::string dom;      // after scripts ran
  std::string console;  // Chromium's log, console messages included
};

// Opens the page once: its DOM after scripts ran on stdout, a screenshot into `png`.
Page open_page(const fs::path& html, const fs::path& png) {
  TempDir profile;
  const fs::path err = profile / "stderr.txt";
  CommandResult r = run_shell("timeout 120 " + chromium() + " " + kChromiumFlags + " --user-data-dir=" +
                              (profile / "p").string() + " --window-size=1100,1400 --screenshot=" + png.string() +
                              " --dump-dom file://" + html.string() + " 2>" + err.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return {r.output, read_file(err)};
}

// Decodes an 8-bit, non-interlaced RGB/RGBA PNG (what Chromium writes) into RGBA pixels.
struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgba;
};

uint32_t be32(const std::string& s, size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) | (uint32_t(uint8_t(s[at + 2])) << 8) |
         uint8_t(s[at + 3]);
}

Image decode_png(const std::string& file) {
  Image img;
  if (file.size() < 8 || file.compare(1, 3, "PNG") != 0) return img;
  std::string idat;
  int color_type = 0, depth = 0, interlace = 0;
  for (size_t at = 8; at + 8 <= file.size();) {
    const uint32_t len = be32(file, at);
    const std::string type = file.substr(at + 4, 4);
    if (type == "IHDR") {
      img.width = static_cast<int>(be32(file, at + 8));
      img.height = static_cast<int>(be32(file, at + 12));
      depth = uint8_t(file[at + 16]);
      color_type = uint8_t(file[at + 17]);
      interlace = uint8_t(file[at + 20]);
    } else if (type == "IDAT") {
      idat += file.substr(at + 8, len);
    }
    at += 12 + len;
  }
  if (depth != 8 || interlace != 0 || (color_type != 2 && color_type != 6)) return {};
  const int channels = color_type == 6 ? 4 : 3;
  const size_t stride = static_cast<size_t>(img.width) * channels;
  std::vector<uint8_t> raw((stride + 1) * img.height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK) return {};
  std::vector<uint8_t> prev(stride, 0), row(stride);
  img.rgba.reserve(static_cast<size_t>(img.width) * img.height * 4);
  for (int y = 0; y < img.height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* src = &raw[y * (stride + 1) + 1];
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= static_cast<size_t>(channels) ? row[x - channels] : 0, b = prev[x];
      const int c = x >= static_cast<size_t>(channels) ? prev[x - channels] : 0;
      int pred = 0;
      switch (filter) {
        case 1: pred = a; break;
        case 2: pred = b; break;
        case 3: pred = (a + b) / 2; break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default: break;
      }
      row[x] = static_cast<uint8_t>(src[x] + pred);
    }
    for (int x = 0; x < img.width; ++x) {
      for (int k = 0; k < 3; ++k) img.rgba.push_back(row[x * channels + k]);
      img.rgba.push_back(channels == 4 ? row[x * channels + 3] : 255);
    }
    prev = row;
  }
  return img;
}

// The screenshot is not blank: many non-white pixels in several colours.
void expect_rendered_screenshot(const fs::path& png) {
  const Image img = decode_png(read_file(png));
  ASSERT_EQ(img.width, 1100) << "not a PNG Chromium wrote";
  size_t inked = 0;
  std::map<uint32_t, int> colours;
  for (size_t i = 0; i + 3 < img.rgba.size(); i += 4) {
    const uint32_t rgb = (uint32_t(img.rgba[i]) << 16) | (uint32_t(img.rgba[i + 1]) << 8) | img.rgba[i + 2];
    if (rgb != 0xffffff) ++inked;
    ++colours[rgb];
  }
  const size_t pixels = img.rgba.size() / 4;
  EXPECT_GT(inked, pixels / 50) << "screenshot is (nearly) blank";
  EXPECT_GT(colours.size(), 16u) << "no charts in colour";
}

// Marks (class="mark") per chart kind (data-kind of each <svg>). Plain search: the DOM is large
// and std::regex recurses per character.
std::map<std::string, int> marks_by_kind(const std::string& dom) {
  std::map<std::string, int> out;
  for (size_t at = dom.find("<svg "); at != std::string::npos; at = dom.find("<svg ", at + 1)) {
    const size_t kind_at = dom.find("data-kind=\"", at);
    const size_t end = dom.find("</svg>", at);
    if (kind_at == std::string::npos || end == std::string::npos || kind_at > dom.find('>', at)) continue;
    const std::string kind = dom.substr(kind_at + 11, dom.find('"', kind_at + 11) - kind_at - 11);
    int& n = out[kind];
    for (size_t m = dom.find("class=\"mark\"", at); m != std::string::npos && m < end; m = dom.find("class=\"mark\"", m + 1)) ++n;
  }
  return out;
}

// The page fetched nothing: no references out of the file, and Chromium saw no policy violation.
void expect_self_contained(const fs::path& html, const Page& page) {
  const std::string text = read_file(html);
  EXPECT_NE(text.find("content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\""),
            std::string::npos);
  EXPECT_FALSE(std::regex_search(text, std::regex(R"((src|href)\s*=\s*["']?\s*(https?:)?//)", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(text, std::regex(R"(url\(|@import)", std::regex::icase)));
  EXPECT_EQ(page.console.find("Content Security Policy"), std::string::npos) << page.console;
  EXPECT_EQ(page.console.find("Uncaught"), std::string::npos) << "script error:\n" << page.console;
}

Json read_json(const fs::path& path) { return Json::parse(read_file(path)); }

// Runs a parity command twice, writing the report as HTML and as JSON.
void make_reports(std::vector<std::string> args, const fs::path& html, const fs::path& json, int expected_exit = 0) {
  for (const fs::path& out : {html, json}) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--report", out.string()});
    CommandResult r = run_parity(a);
    ASSERT_EQ(r.exit_code, expected_exit) << r.output;
    ASSERT_TRUE(fs::exists(out)) << r.output;
  }
}

size_t histogram_bars(const Json& h) {
  return h["counts"].size() + (h["zeros"].get<int64_t>() > 0) + (h["nonfinite"].get<int64_t>() > 0);
}

// ONNX Runtime, the peer of the run reports: scripts/setup.sh fetches it; missing is a failure on CI.
#define REQUIRE_ORT()                                                                           \
  do {                                                                                          \
    const runners::RunnerInfo* ort = runners::RunnerRegistry::instance().find("ort");          \
    if (!ort || (ort->availability && !ort->availability({}).is_ok())) {                  \
      const char* ci = std::getenv("CI");                                                       \
      if (ci && std::string(ci) == "true") FAIL() << "ONNX Runtime unavailable (scripts/setup.sh)"; \
      GTEST_SKIP() << "ONNX Runtime unavailable (run scripts/setup.sh)";                        \
    }                                                                                           \
  } while (0)

TEST(ReportBrowser, RunReportPerOutputChartsAndHeatmapsPerChannel) {
  REQUIRE_CHROMIUM();
  REQUIRE_ORT();
  const std::string model = (source_dir() / ".cache/npm/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx").string();
  ASSERT_TRUE(fs::exists(model)) << "run scripts/setup.sh";
  TempDir tmp;
  // A real model on parity's runtime and ONNX Runtime: the errors are real.
  make_reports({"run", model, "--ref", "--ort", "--input-shapes", "x:[1,3,96,96]", "--report-per-channel", "--atol", "1",
                "--rtol", "1"},
               tmp / "run.html", tmp / "run.json");
  const Json j = read_json(tmp / "run.json");
  ASSERT_EQ(j["sections"][0]["type"], "run");
  const Json& out = j["sections"][0]["comparisons"][0]["outputs"][0];
  ASSERT_EQ(out["shape"], Json::array({1, 1, 96, 96}));
  const Page page = open_page(tmp / "run.html", tmp / "run.png");
  expect_self_contained(tmp / "run.html", page);
  const auto marks = marks_by_kind(page.dom);
  EXPECT_EQ(marks.at("histogram"), static_cast<int>(histogram_bars(out["abs_histogram"]) + histogram_bars(out["rel_histogram"])));
  ASSERT_EQ(out["heatmaps"].size(), 1u);  // one channel
  EXPECT_EQ(out["heatmaps"][0]["label"], "channel 0");
  EXPECT_EQ(marks.at("heatmap"), 48 * 48) << "96x96 pooled by 2 is 48x48";
  expect_rendered_screenshot(tmp / "run.png");
}

TEST(ReportBrowser, MarkAllReportChartsEveryLayerAndShowsTheClickedOne) {
  REQUIRE_CHROMIUM();
  REQUIRE_ORT();
  TempDir tmp;
  const std::string model = (source_dir() / "models/demo.onnx").string();
  // A tolerance no layer can meet, so the first divergence is marked.
  make_reports({"run", model, "--ref", "--ort", "--onnx-outputs", "mark", "all", "--atol", "0", "--rtol", "0"},
               tmp / "mark.html", tmp / "mark.json", 1);
  const Json j = read_json(tmp / "mark.json");
  const Json& it = j["sections"][0]["iterations"][0];
  ASSERT_TRUE(it["first_failure"].is_number()) << it.dump();
  int compared = 0;
  for (const auto& l : it["layers"]) compared += l["compared"].get<bool>();
  ASSERT_GT(compared, 5);
  const Page page = open_page(tmp / "mark.html", tmp / "mark.png");
  expect_self_contained(tmp / "mark.html", page);
  // Two charts (absolute, relative), max and mean per compared layer.
  EXPECT_EQ(marks_by_kind(page.dom).at("layers"), 4 * compared);
  EXPECT_NE(page.dom.find("class=\"divergence\""), std::string::npos);
  // The script filled the detail panel with the first divergence (the layer shown on opening).
  const std::string first = std::to_string(it["first_failure"].get<int>());
  EXPECT_TRUE(std::regex_search(page.dom, std::regex("id=\"detail-s0i0\"[^>]*data-layer=\"" + first + "\"")))
      << page.dom.substr(page.dom.find("detail-s0i0"), 300);
  EXPECT_NE(page.dom.find("<td>" + it["layers"][it["first_failure"].get<int>()]["name"].get<std::string>() + "</td>"),
            std::string::npos);
  EXPECT_NE(page.dom.find("peak resident (MiB)"), std::string::npos);
  expect_rendered_screenshot(tmp / "mark.png");
}

TEST(ReportBrowser, LoadOutputsReport) {
  REQUIRE_CHROMIUM();
  TempDir tmp;
  const std::string model = (source_dir() / "models/demo.onnx").string();
  ASSERT_EQ(run_parity({"run", model, "--ref", "--save-outputs", (tmp / "a.json").string()}).exit_code, 0);
  make_reports({"run", "--load-outputs", (tmp / "a.json").string(), (tmp / "a.json").string()}, tmp / "load.html",
               tmp / "load.json");
  const Json j = read_json(tmp / "load.json");
  const Json& out = j["sections"][0]["comparisons"][0]["outputs"][0];
  EXPECT_EQ(out["error"]["max_absdiff"], 0.0);
  const Page page = open_page(tmp / "load.html", tmp / "load.png");
  expect_self_contained(tmp / "load.html", page);
  EXPECT_EQ(marks_by_kind(page.dom).at("histogram"), 2) << "identical outputs: one bar of zeros per histogram";
  expect_rendered_screenshot(tmp / "load.png");
}

// `mark all` against Polygraphy's stored golden run of hello_deepa (ONNX Runtime's tensors) at a
// tolerance ORT's Gemm cannot meet: every stored layer charted, the divergence start explained.
TEST(ReportBrowser, MarkAllGoldenReportExplainsWhereTheDivergenceStarts) {
  REQUIRE_CHROMIUM();
  const std::string model = (source_dir() / ".cache/npm/openwakeword/models/hello_deepa.onnx").string();
  ASSERT_TRUE(fs::exists(model)) << "run scripts/setup.sh (openwakeword models)";
  const std::string golden = (polygraphy_fixtures_dir() / "hello_deepa_markall_outputs.json").string();
  const std::string inputs = (polygraphy_fixtures_dir() / "hello_deepa_markall_inputs.json").string();
  TempDir tmp;
  make_reports({"run", model, "--ref", "--onnx-outputs", "mark", "all", "--load-outputs", golden, "--load-inputs", inputs,
                "--atol", "1e-9", "--rtol", "1e-9"},
               tmp / "golden.html", tmp / "golden.json", 1);
  const Json j = read_json(tmp / "golden.json");
  ASSERT_EQ(j["sections"][0]["type"], "layerwise");
  const Json& it = j["sections"][0]["iterations"][0];
  EXPECT_EQ(it["golden_file"], golden);
  EXPECT_EQ(it["peer"], "onnxrt-runner-N0-11/23/26-06:01:35");
  ASSERT_EQ(it["layers"].size(), 29u);
  ASSERT_EQ(it["first_failure"], 1) << "the run's log names layer 1, /layer1/Gemm_output_0";
  EXPECT_EQ(it["layers"][1]["name"], "/layer1/Gemm_output_0");
  // The start: a failing layer whose compared inputs all pass.
  const Json& d = it["divergence_start"];
  ASSERT_TRUE(d.is_object()) << it.dump();
  const Json& start = it["layers"][d["layer"].get<size_t>()];
  EXPECT_FALSE(start["passed"].get<bool>());
  EXPECT_EQ(d["node"], start["node"]);
  EXPECT_EQ(d["inputs"].size(), start["inputs"].size());
  for (const auto& in : d["inputs"]) {
    if (in["shared"].get<bool>()) continue;
    EXPECT_TRUE(in["passed"].get<bool>()) << in.dump();
    EXPECT_TRUE(it["layers"][in["layer"].get<size_t>()]["compared"].get<bool>());
  }
  EXPECT_GT(d["output"]["max_absdiff"].get<double>(), 1e-9);
  int compared = 0;
  for (const auto& l : it["layers"]) compared += l["compared"].get<bool>();
  EXPECT_EQ(compared, 25) << "the 4 constants are not in Polygraphy's file";

  const Page page = open_page(tmp / "golden.html", tmp / "golden.png");
  expect_self_contained(tmp / "golden.html", page);
  EXPECT_EQ(marks_by_kind(page.dom).at("layers"), 4 * compared);
  EXPECT_NE(page.dom.find("class=\"divergence\""), std::string::npos);
  EXPECT_NE(page.dom.find("class=\"divergence-start\""), std::string::npos);
  EXPECT_NE(page.dom.find("Divergence starts at node <code>" + d["node"].get<std::string>() + "</code>"), std::string::npos);
  // One row per input of the start node and one for its output.
  const size_t table = page.dom.find("<table class=\"divergence-start\">");
  ASSERT_NE(table, std::string::npos);
  const std::string rows = page.dom.substr(table, page.dom.find("</table>", table) - table);
  size_t n = 0;
  for (size_t at = rows.find("<tr>"); at != std::string::npos; at = rows.find("<tr>", at + 1)) ++n;
  EXPECT_EQ(n, 1 + d["inputs"].size() + 1) << rows;
  EXPECT_NE(page.dom.find("stored run of onnxrt-runner-N0"), std::string::npos);
  expect_rendered_screenshot(tmp / "golden.png");
}

// Rows of the table with class `css_class` in the DOM (Chromium adds <tbody>; the header is one).
size_t table_rows(const std::string& dom, const std::string& css_class) {
  const size_t table = dom.find("<table class=\"" + css_class + "\">");
  if (table == std::string::npos) return 0;
  const std::string rows = dom.substr(table, dom.find("</table>", table) - table);
  size_t n = 0;
  for (size_t at = rows.find("<tr>"); at != std::string::npos; at = rows.find("<tr>", at + 1)) ++n;
  return n;
}

// `debug reduce` on PP-OCRv4 det at 64x64, with the test extension's runner computing one Conv
// wrong: every check is a step (a mark on the chart, a row in the table), the final subgraph is
// that Conv alone.
TEST(ReportBrowser, DebugReduceReportShowsEveryCheckAndTheFinalSubgraph) {
  REQUIRE_CHROMIUM();
  const std::string model = (source_dir() / ".cache/npm/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx").string();
  ASSERT_TRUE(fs::exists(model)) << "run scripts/setup.sh";
  const std::string extension = std::string(PARITY_TEST_EXTENSION_DIR) + "/good/libparity_test_extension.so";
  TempDir tmp;
  make_reports({"--extension", extension, "debug", "reduce", model, "-o", (tmp / "reduced.onnx").string(), "--iter-artifact",
                (tmp / "iter.onnx").string(), "--save-debug-replay", (tmp / "replay.json").string(), "--input-shapes",
                "x:[1,3,64,64]", "--atol", "0", "--rtol", "1e-3", "--ref", "--plugin-ref", "--plugin-ref-wrong",
                "p2o.Conv.20", "--min-good", (tmp / "good.onnx").string()},
               tmp / "reduce.html", tmp / "reduce.json");
  const Json j = read_json(tmp / "reduce.json");
  const Json& s = j["sections"][0];
  ASSERT_EQ(s["type"], "debug_reduce");
  EXPECT_EQ(s["mode"], "bisect");
  EXPECT_EQ(s["check"], "ref vs plugin-ref");
  const size_t node_count = s["node_count"].get<size_t>();
  ASSERT_GT(node_count, 100u);
  const Json& steps = s["steps"];
  ASSERT_GT(steps.size(), 2u);
  // As in Polygraphy, the whole model is taken to fail unchecked: the first check is a half of it.
  // Every check names its size and time.
  EXPECT_LT(steps[0]["nodes"].get<size_t>(), node_count);
  size_t fails = 0;
  for (const auto& st : steps) {
    EXPECT_GE(st["seconds"].get<double>(), 0.0);
    EXPECT_FALSE(st["from_replay"].get<bool>());
    EXPECT_LE(st["nodes"].get<size_t>(), node_count);
    fails += st["verdict"] == "fails";
  }
  EXPECT_GT(fails, 1u);
  EXPECT_LT(fails, steps.size()) << "some candidate passes on the way";
  const Json& r = s["result"];
  ASSERT_EQ(r["nodes"].size(), 1u);
  EXPECT_NE(r["nodes"][0]["label"].get<std::string>().find("p2o.Conv.20"), std::string::npos) << r.dump();
  EXPECT_EQ(r["checks"], steps.size());
  EXPECT_EQ(r["checks_run"], steps.size());
  EXPECT_TRUE(r["passing_nodes"].is_number());

  const Page page = open_page(tmp / "reduce.html", tmp / "reduce.png");
  expect_self_contained(tmp / "reduce.html", page);
  EXPECT_EQ(marks_by_kind(page.dom).at("steps"), static_cast<int>(steps.size()));
  EXPECT_EQ(table_rows(page.dom, "steps"), steps.size() + 1);
  EXPECT_EQ(table_rows(page.dom, "reduced-nodes"), 2u);
  EXPECT_NE(page.dom.find("p2o.Conv.20"), std::string::npos);
  expect_rendered_screenshot(tmp / "reduce.png");
}

// `debug precision` on a model where exactly one layer overflows float16: the plans built, and
// that layer marked fp32 among the layers.
TEST(ReportBrowser, DebugPrecisionReportShowsThePlansAndTheFp32Layers) {
  REQUIRE_CHROMIUM();
  TempDir tmp;
  ModelBuilder b;
  b.input("x", DType::kFloat32, {2, 8}).output("y1", DType::kFloat32, {2, 8}).output("y2", DType::kFloat32, {2, 4});
  Tensor w(DType::kFloat32, {8, 4});
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : w.values<float>()) v = dist(gen);
  b.initializer("W", w);
  b.initializer("big", Tensor::from_vector<float>({1}, {1e6f}));  // beyond float16's 65504 for inputs above 0.066
  b.initializer("one", Tensor::from_vector<float>({1}, {1.0f}));
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("Mul", {"r", "big"}, {"y1"}, "amplify");
  b.node("MatMul", {"r", "W"}, {"m"}, "mm");
  b.node("Sigmoid", {"m"}, {"s"}, "squash");
  b.node("Add", {"s", "one"}, {"y2"}, "shift");
  const std::string model = (tmp / "overflow.onnx").string();
  {
    std::ofstream out(model, std::ios::binary);
    ASSERT_TRUE(b.model().SerializeToOstream(&out));
  }
  make_reports({"debug", "precision", model, "--fp16", "--atol", "1e-2", "--rtol", "1e-2"}, tmp / "precision.html",
               tmp / "precision.json");
  const Json j = read_json(tmp / "precision.json");
  const Json& s = j["sections"][0];
  ASSERT_EQ(s["type"], "debug_precision");
  EXPECT_EQ(s["reduced_type"], "fp16");
  EXPECT_EQ(s["layers"], Json::array({"relu", "amplify", "mm", "squash", "shift"}));
  EXPECT_FALSE(s["passes_reduced"].get<bool>());
  EXPECT_TRUE(s["passes_fp32"].get<bool>());
  EXPECT_EQ(s["fp32_layers"], Json::array({"amplify"}));
  const Json& steps = s["steps"];
  ASSERT_GE(steps.size(), 3u);
  // No layer in fp32 fails, all of them pass, and the last plan (only the answer in fp32) passes.
  EXPECT_EQ(steps[0]["fp32_layers"].size(), 0u);
  EXPECT_EQ(steps[0]["verdict"], "fails");
  EXPECT_EQ(steps[1]["fp32_layers"].size(), 5u);
  EXPECT_EQ(steps[1]["verdict"], "passes");
  EXPECT_EQ(steps.back()["fp32_layers"], Json::array({"amplify"}));
  EXPECT_EQ(steps.back()["verdict"], "passes");

  const Page page = open_page(tmp / "precision.html", tmp / "precision.png");
  expect_self_contained(tmp / "precision.html", page);
  EXPECT_EQ(marks_by_kind(page.dom).at("steps"), static_cast<int>(steps.size()));
  EXPECT_EQ(table_rows(page.dom, "steps"), steps.size() + 1);
  EXPECT_EQ(table_rows(page.dom, "precision-layers"), 6u);
  EXPECT_NE(page.dom.find("<code>amplify</code></td><td><b>fp32</b>"), std::string::npos);
  EXPECT_NE(page.dom.find("1 of 5 layers must stay fp32"), std::string::npos);
  expect_rendered_screenshot(tmp / "precision.png");
}

TEST(ReportBrowser, BenchReportDistributionsPerRunnerAndThreads) {
  REQUIRE_CHROMIUM();
  TempDir tmp;
  make_reports({"bench", (source_dir() / "models/demo.onnx").string(), "--runners", "ref", "--threads", "1,2",
                "--iterations", "30", "--min-time", "0"},
               tmp / "bench.html", tmp / "bench.json");
  const Json j = read_json(tmp / "bench.json");
  const Json& s = j["sections"][0];
  ASSERT_EQ(s["rows"].size(), 2u);
  size_t dots = 0;
  for (const auto& row : s["rows"])
    for (const auto& c : row["cells"]) {
      const size_t n = c["samples_ms"].size(), stride = (n + 299) / 300;
      dots += (n + stride - 1) / stride;
      EXPECT_DOUBLE_EQ(c["ratio_to_ref"].get<double>(), 1.0);
    }
  const Page page = open_page(tmp / "bench.html", tmp / "bench.png");
  expect_self_contained(tmp / "bench.html", page);
  EXPECT_EQ(marks_by_kind(page.dom).at("distributions"), static_cast<int>(dots));
  expect_rendered_screenshot(tmp / "bench.png");
}

TEST(ReportBrowser, ConformanceReportPerOperatorFamily) {
  REQUIRE_CHROMIUM();
  TempDir tmp;
  make_reports({"test", "onnx-backend", (onnx_testdata_dir() / "node").string(), "--filter", "test_(add|conv|relu|reshape)"},
               tmp / "conf.html", tmp / "conf.json");
  const Json j = read_json(tmp / "conf.json");
  const Json& s = j["sections"][0];
  int bars = 0;
  std::map<std::string, int> families;
  for (const auto& f : s["families"]) {
    for (const char* k : {"passed", "failed", "errored", "skipped"}) bars += f[k].get<int>() > 0;
    families[f["family"]] = f["passed"];
  }
  EXPECT_GT(families["math"], 0);
  EXPECT_GT(families["nn"], 0);
  EXPECT_GT(families["tensor"], 0);
  const Page page = open_page(tmp / "conf.html", tmp / "conf.png");
  expect_self_contained(tmp / "conf.html", page);
  EXPECT_EQ(marks_by_kind(page.dom).at("stacked"), bars);
  expect_rendered_screenshot(tmp / "conf.png");
}

// The rows of the table with class `css_class`, each as its cells' HTML (the header row left out).
std::vector<std::vector<std::string>> table_cells(const std::string& dom, const std::string& css_class) {
  std::vector<std::vector<std::string>> rows;
  const size_t table = dom.find("<table class=\"" + css_class + "\">");
  if (table == std::string::npos) return rows;
  const std::string text = dom.substr(table, dom.find("</table>", table) - table);
  for (size_t at = text.find("<tr>"); at != std::string::npos; at = text.find("<tr>", at + 1)) {
    const size_t end = text.find("</tr>", at);
    std::vector<std::string> cells;
    for (size_t c = text.find("<td", at); c != std::string::npos && c < end; c = text.find("<td", c + 1)) {
      const size_t open = text.find('>', c) + 1;
      cells.push_back(text.substr(open, text.find("</td>", open) - open));
    }
    if (!cells.empty()) rows.push_back(cells);
  }
  return rows;
}

// A step's status as the matrix shows it.
std::string status_text(const Json& step) {
  const std::string status = step["status"];
  return status == "OK" ? "PASSED" : status == "FAIL" ? "FAILED" : status;
}

// `package status` of a workspace `optimize` made from a small model with a dynamic batch axis:
// the format x runtime matrix as in the JSON, a latency and a throughput mark per profiled batch size.
TEST(ReportBrowser, PackageReportMatrixAndLatencyThroughputPerBatchSize) {
  REQUIRE_CHROMIUM();
  TempDir tmp;
  ModelBuilder b;
  b.input("x", DType::kFloat32, {-1, 8}).output("y", DType::kFloat32, {-1, 4});
  Tensor w(DType::kFloat32, {8, 4});
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : w.values<float>()) v = dist(gen);
  b.initializer("W", w);
  b.node("MatMul", {"x", "W"}, {"m"}, "mm");
  b.node("Relu", {"m"}, {"y"}, "relu");
  const std::string model = (tmp / "dynamic.onnx").string();
  {
    std::ofstream out(model, std::ios::binary);
    ASSERT_TRUE(b.model().SerializeToOstream(&out));
  }
  const fs::path ws = tmp / "ws";
  const CommandResult optimized =
      run_parity({"optimize", model, "--workspace", ws.string(), "--target-formats", "onnx", "plan-fp32", "plan-fp16",
                  "--runners", "ref", "--sample-count", "2", "--max-batch-size", "4", "--window-ms", "10", "--max-trials", "3"});
  ASSERT_EQ(optimized.exit_code, 0) << optimized.output;
  make_reports({"package", "status", ws.string()}, tmp / "package.html", tmp / "package.json");
  const Json j = read_json(tmp / "package.json");
  const Json& s = j["sections"][0];
  ASSERT_EQ(s["type"], "package");
  ASSERT_EQ(s["formats"].size(), 3u);
  std::vector<std::vector<std::string>> expected_cells;
  size_t points = 0, bars = 0;
  std::set<int64_t> batch_sizes;
  for (const auto& f : s["formats"]) {
    std::array<int, 3> categories{};
    for (const auto& r : f["runtimes"]) {
      expected_cells.push_back({f["format"], r["runtime"], status_text(r["conversion"]), status_text(r["correctness"]),
                                status_text(r["performance"]), r["verified"].get<bool>() ? "yes" : "no"});
      EXPECT_EQ(r["correctness"]["status"], "OK") << f["format"] << " " << r.dump();
      const bool passed = r["conversion"]["status"] == "OK" && r["correctness"]["status"] == "OK";
      const bool failed = r["conversion"]["status"] == "FAIL" || r["correctness"]["status"] == "FAIL";
      ++categories[passed ? 0 : failed ? 1 : 2];
      ASSERT_TRUE(r["performance"].contains("performance")) << r.dump();
      for (const auto& p : r["performance"]["performance"]) {
        ++points;
        batch_sizes.insert(p["batch_size"].get<int64_t>());
        EXPECT_GT(p["throughput"].get<double>(), 0);
      }
    }
    for (int c : categories) bars += c > 0;
  }
  EXPECT_EQ(expected_cells.size(), 3u) << "one runtime per format";
  EXPECT_GE(batch_sizes.size(), 2u) << "the batch axis is dynamic";
  EXPECT_GE(points, 3u * 2u);

  const Page page = open_page(tmp / "package.html", tmp / "package.png");
  expect_self_contained(tmp / "package.html", page);
  // The matrix: a row per format x runtime, the statuses as in the JSON (cells' text, badges unwrapped).
  const auto rows = table_cells(page.dom, "package-matrix");
  ASSERT_EQ(rows.size(), expected_cells.size()) << page.dom.substr(page.dom.find("package-matrix"), 800);
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 6u);
    for (size_t c = 0; c < 6; ++c) {
      const std::string text = std::regex_replace(rows[i][c], std::regex("<[^>]*>"), "");
      EXPECT_EQ(text.substr(0, expected_cells[i][c].size()), expected_cells[i][c]) << "row " << i << " cell " << c;
    }
  }
  EXPECT_EQ(table_cells(page.dom, "package-performance").size(), points);
  const auto marks = marks_by_kind(page.dom);
  EXPECT_EQ(marks.at("stacked"), static_cast<int>(bars));
  EXPECT_EQ(marks.at("latency"), static_cast<int>(points));
  EXPECT_EQ(marks.at("throughput"), static_cast<int>(points));
  expect_rendered_screenshot(tmp / "package.png");
}

}  // namespace
}  // namespace parity::testing
