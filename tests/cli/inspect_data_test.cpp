// End-to-end tests of `parity inspect data` through the built binary.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "core/formats/npy.h"
#include "core/formats/npz.h"
#include "core/formats/polygraphy_json.h"
#include "support/test_support.h"

namespace parity {
namespace {

using testing::polygraphy_fixtures_dir;
using testing::run_parity;

std::string fixture(const std::string& name) { return (polygraphy_fixtures_dir() / name).string(); }

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(InspectData, PrintsPolygraphysStatsForRunResults) {
  const auto r = run_parity({"inspect", "data", fixture("run_results.json")});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "[I] ==== Run Results (2 runners) ====\n    \n"
                                 "    ---- onnxrt-runner-N0-01/02/26-10:00:00 (2 iterations) ----\n    \n"
                                 "    y [dtype=float32, shape=(1, 3, 4, 4)] | Stats: mean=0.47773, std-dev=0.30648, "
                                 "var=0.093929, median=0.42015, min=0.00011437 at (0, 0, 0, 2), max=0.98886 at "
                                 "(0, 2, 2, 0), avg-magnitude=0.47773, p90=0.88308, p95=0.94064, p99=0.97918\n"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "    argmax [dtype=int64, shape=(1,)] | Stats: mean=40, std-dev=0, var=0, median=40, "
                                 "min=40 at (0,), max=40 at (0,), avg-magnitude=40, p90=40, p95=40, p99=40\n"));
  // Runner names are padded to the longest one, as Polygraphy does.
  EXPECT_TRUE(contains(r.output, "    ---- trt-runner-N0-01/02/26-10:00:01    (2 iterations) ----\n"));
  EXPECT_TRUE(contains(r.output, "use --all to show every iteration"));
  EXPECT_FALSE(contains(r.output, "-- Iteration: 1"));
  EXPECT_TRUE(contains(r.last_line(), "PASSED")) << r.output;
}

TEST(InspectData, AllIterationsHistogramsAndValues) {
  const auto r = run_parity({"inspect", "data", fixture("run_results.json"), "--all", "--histogram", "--show-values"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // Polygraphy leaves the indentation of the next block on the iteration line.
  EXPECT_TRUE(contains(r.output, "    -- Iteration: 1    \n")) << r.output;
  EXPECT_TRUE(contains(r.output, "            ---- Histogram ----\n"
                                 "            Bin Range         |  Num Elems | Visualization\n"
                                 "            (0.000114, 0.099) |          7 | ########################################\n"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "            [40]    \n"));
  EXPECT_FALSE(contains(r.output, "use --all"));
}

TEST(InspectData, InputsJsonNpzAndNpy) {
  const auto json = run_parity({"inspect", "data", fixture("inputs_seed1.json")});
  EXPECT_EQ(json.exit_code, 0) << json.output;
  EXPECT_TRUE(contains(json.output, "[I] ==== Data (2 iterations) ====\n    \n    x [dtype=float32, shape=(1, 3, 4, 4)] | Stats: "));
  EXPECT_TRUE(contains(json.output, "    mask [dtype=bool, shape=(5,)] | Stats: "));
  const auto npz = run_parity({"inspect", "data", fixture("inputs_seed1_iter0.npz")});
  EXPECT_EQ(npz.exit_code, 0) << npz.output;
  // The same tensor gives the same line whichever file it came from.
  auto line_of = [](const std::string& out, const std::string& start) {
    const size_t b = out.find(start);
    return b == std::string::npos ? std::string("missing") : out.substr(b, out.find('\n', b) - b);
  };
  EXPECT_EQ(line_of(npz.output, "    ids ["), line_of(json.output, "    ids ["));
  EXPECT_TRUE(contains(npz.output, "==== Data (1 iterations) ===="));

  testing::TempDir dir;
  const auto npy = (dir / "h.npy").string();
  write_npy(npy, read_npz(fixture("inputs_seed1_iter0.npz")).at("h"));
  const auto one = run_parity({"inspect", "data", npy, "-s"});
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(line_of(one.output, "    h ["), line_of(npz.output, "    h ["));
}

TEST(InspectData, JsonFormat) {
  const auto r = run_parity({"inspect", "data", fixture("run_results.json"), "--format", "json", "--histogram"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string text = r.output.substr(0, r.output.rfind("\n[I] PASSED"));
  const auto doc = nlohmann::json::parse(text);
  const auto& y = doc["files"][0]["runners"][0]["iterations"][0]["tensors"][0];
  EXPECT_EQ(y["name"], "y");
  EXPECT_EQ(y["dtype"], "float32");
  EXPECT_EQ(y["shape"], nlohmann::json::array({1, 3, 4, 4}));
  EXPECT_NEAR(y["stats"]["mean"].get<double>(), 0.47773, 1e-5);
  EXPECT_EQ(y["stats"]["min_index"], nlohmann::json::array({0, 0, 0, 2}));
  EXPECT_EQ(y["histogram"]["counts"].size(), 10u);
  EXPECT_EQ(doc["files"][0]["runners"][0]["num_iterations"], 2);
  EXPECT_EQ(doc["files"][0]["runners"][0]["iterations"].size(), 1u);
}

struct BadCase {
  std::string name;
  std::string path;
  std::string message;
};

TEST(InspectData, BadInputsFailWithOneClearLine) {
  testing::TempDir dir;
  const std::string run_results = testing::read_file(fixture("run_results.json"));
  const std::string npz = testing::read_file(fixture("inputs_seed1_iter0.npz"));
  const std::string npy = npy_to_bytes(read_npz(fixture("inputs_seed1_iter0.npz")).at("x"));
  auto put = [&](const std::string& name, const std::string& bytes) {
    testing::write_file(dir / name, bytes);
    return (dir / name).string();
  };
  std::string unknown = run_results;
  unknown.replace(unknown.find("\"IterationResult\""), 17, "\"MysteryResult\"");
  const auto fifo = (dir / "fifo.json").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::vector<BadCase> cases = {
      {"truncated npy", put("t.npy", npy.substr(0, npy.size() - 3)), "truncated .npy data"},
      {"corrupt npy header", put("h.npy", npy.substr(0, 12) + "garbage" + npy.substr(19)), "malformed .npy header"},
      {"truncated npz", put("t.npz", npz.substr(0, npz.size() / 2)), "not a valid .npz (zip) archive"},
      {"truncated json", put("t.json", run_results.substr(0, 5000)), "invalid JSON"},
      {"unknown class", put("u.json", unknown), "unknown polygraphy_class 'MysteryResult'"},
      {"directory", dir.path().string(), "is a directory"},
      {"fifo", fifo, "not a regular file"},
      {"missing", (dir / "nope.json").string(), "no such file"},
      {"junk", put("junk.bin", "\x01\x02hello"), "unrecognized data file"},
  };
  for (const auto& c : cases) {
    const auto r = run_parity({"inspect", "data", c.path});
    EXPECT_EQ(r.exit_code, 1) << c.name << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "[E] ")) << c.name << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, c.message)) << c.name << "\n" << r.output;
    EXPECT_TRUE(contains(r.last_line(), "FAILED")) << c.name << "\n" << r.output;
    // One error line, not a stack of them; no crash report.
    size_t errors = 0;
    for (size_t p = r.output.find("[E] "); p != std::string::npos; p = r.output.find("[E] ", p + 1)) ++errors;
    EXPECT_EQ(errors, 2u) << c.name << "\n" << r.output;  // the message and the FAILED line
    EXPECT_FALSE(contains(r.output, "internal error")) << c.name;
  }
}

}  // namespace
}  // namespace parity
