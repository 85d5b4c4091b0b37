// Optimization profiles: a plan built for ranges of input shapes (PP-OCRv4 rec, dynamic width)
// computes what the ONNX model computes inside them, records them with the activation memory at
// their max shapes, and refuses a run outside every profile with one line.
#include "runtime/profiles.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "runtime/plan/plan_file.h"
#include "runtime/session.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using runtime::OptimizationProfile;
using runtime::Session;

fs::path rec_model() { return testing::source_dir() / ".cache/npm/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx"; }

TensorMap rec_feed(int64_t width) {
  Tensor t(DType::kFloat32, {1, 3, 48, width});
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : t.values<float>()) v = dist(gen);
  TensorMap feed;
  feed.set("x", t);
  return feed;
}

void expect_equal_outputs(const TensorMap& a, const TensorMap& b) {
  ASSERT_EQ(a.names(), b.names());
  for (const auto& name : a.names()) {
    ASSERT_EQ(a.at(name).shape(), b.at(name).shape()) << name;
    EXPECT_EQ(0, std::memcmp(a.at(name).raw_data(), b.at(name).raw_data(), a.at(name).size_bytes())) << name;
  }
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<OptimizationProfile> two_rec_profiles() {
  return runtime::parse_profiles({"x:[1,3,48,64],[1,3,48,160],[1,3,48,320]", "x:[1,3,48,320],[1,3,48,480],[1,3,48,640]"},
                                 "--profile");
}

TEST(Profiles, ParsingPlacesARepeatedInputInTheNextProfile) {
  auto profiles = runtime::parse_profiles({"x:[1,2],[1,4],[1,8]", "y:[3]", "x:[2,2],[2,2],[4,2]"}, "--profile");
  ASSERT_EQ(profiles.size(), 2u);
  ASSERT_NE(profiles[0].find("y"), nullptr);
  EXPECT_EQ(profiles[0].find("y")->max, (Shape{3}));
  EXPECT_EQ(profiles[0].find("x")->opt, (Shape{1, 4}));
  EXPECT_EQ(profiles[1].find("x")->max, (Shape{4, 2}));
  EXPECT_EQ(profiles[1].find("y"), nullptr);
  // Polygraphy's three lists pair up by occurrence.
  auto trt = runtime::profiles_from_min_opt_max({"x:[1,2]", "x:[2,2]"}, {"x:[1,4]", "x:[2,2]"}, {"x:[1,8]", "x:[4,2]"});
  ASSERT_EQ(trt.size(), 2u);
  EXPECT_EQ(trt[1].find("x")->max, (Shape{4, 2}));
  EXPECT_NE(error_of([] { runtime::parse_profiles({"x:[1,2],[1,4]"}, "--profile"); }).find("give min, opt and max"),
            std::string::npos);
  EXPECT_NE(error_of([] { runtime::profiles_from_min_opt_max({"x:[1]"}, {"x:[1]"}, {}); }).find("same inputs"),
            std::string::npos);
}

TEST(Profiles, BadProfilesAreRefusedNamingProfileAndInput) {
  PARITY_REQUIRE_FILE(rec_model());
  auto build = [](const std::string& item) {
    runtime::SessionOptions options;
    options.kernel_options.isa_cap = testing::test_kernel_isa();
    options.profiles = runtime::parse_profiles({item}, "--profile");
    Session::create(rec_model(), options).value();
  };
  EXPECT_NE(error_of([&] { build("y:[1,3,48,64]"); }).find("profile 0: the model has no input 'y'"), std::string::npos);
  EXPECT_NE(error_of([&] { build("x:[1,3,48,64],[1,3,48,32],[1,3,48,128]"); }).find("not in order"), std::string::npos);
  // The model fixes the channels (3) and the height (48).
  EXPECT_NE(error_of([&] { build("x:[1,4,48,64]"); }).find("dimension 1 is fixed to 3"), std::string::npos);
}

TEST(Profiles, RecPlanWithTwoProfilesRunsInsideThemAndRefusesOutside) {
  PARITY_REQUIRE_FILE(rec_model());
  runtime::SessionOptions options;
  options.kernel_options.isa_cap = testing::test_kernel_isa();
  options.profiles = two_rec_profiles();
  Session built = Session::create(rec_model(), options).value();
  ASSERT_EQ(built.options().profiles.size(), 2u);
  const auto& measured = built.options().profiles;
  EXPECT_EQ(measured[0].name, "profile 0");
  // Memory measured at each profile's max: the wider profile needs more.
  EXPECT_GT(measured[0].activation_bytes, 1 << 20);
  EXPECT_GT(measured[1].activation_bytes, measured[0].activation_bytes);

  testing::TempDir dir;
  runtime::plan::save_plan(built, dir / "rec.plan", "rec.onnx");
  Session loaded = runtime::plan::load_plan(dir / "rec.plan").value();
  ASSERT_EQ(loaded.options().profiles.size(), 2u);
  EXPECT_EQ(loaded.options().profiles[1].to_string(), measured[1].to_string());
  EXPECT_EQ(loaded.options().profiles[1].activation_bytes, measured[1].activation_bytes);

  Session onnx = Session::create(rec_model()).value();
  for (int64_t width : {64, 200, 480, 640}) expect_equal_outputs(onnx.run(rec_feed(width)), loaded.run(rec_feed(width)));

  int selected = -2;
  runtime::RunOptions run;
  run.selected_profile = &selected;
  loaded.run(rec_feed(320), run);
  EXPECT_EQ(selected, 0);  // in both: the first
  loaded.run(rec_feed(480), run);
  EXPECT_EQ(selected, 1);
  run.profile_index = 0;
  EXPECT_EQ(error_of([&] { loaded.run(rec_feed(480), run); }),
            "input 'x' has shape [1,3,48,480], outside the selected profile 0: x [1,3,48,64]..[1,3,48,320] (opt "
            "[1,3,48,160])");
  run.profile_index = 2;
  EXPECT_NE(error_of([&] { loaded.run(rec_feed(480), run); }).find("profile index 2 does not exist"), std::string::npos);
  EXPECT_EQ(error_of([&] { loaded.run(rec_feed(800)); }),
            "input 'x' has shape [1,3,48,800], outside every profile of the plan (profile 0: x "
            "[1,3,48,64]..[1,3,48,320] (opt [1,3,48,160]); profile 1: x [1,3,48,320]..[1,3,48,640] (opt "
            "[1,3,48,480])); rebuild it with a --profile that covers it");

  const auto summary = runtime::plan::summarize_plan(dir / "rec.plan");
  ASSERT_EQ(summary.profiles.size(), 2u);
  EXPECT_EQ(summary.profiles[1].activation_bytes, measured[1].activation_bytes);
}

TEST(Profiles, TacticsAreTimedAtEachProfilesOptShapes) {
  PARITY_REQUIRE_FILE(rec_model());
  runtime::SessionOptions options;
  options.kernel_options.isa_cap = testing::test_kernel_isa();
  options.profiles = two_rec_profiles();
  options.tactics.time = true;
  options.tactics.cache = std::make_shared<runtime::TimingCache>();
  Session built = Session::create(rec_model(), options).value();
  const std::string times = options.tactics.cache->to_json();
  // The first Conv reads the input itself: timed at both opt widths, never at a max.
  EXPECT_NE(times.find("(1, 3, 48, 160)"), std::string::npos) << times.substr(0, 2000);
  EXPECT_NE(times.find("(1, 3, 48, 480)"), std::string::npos);
  EXPECT_EQ(times.find("(1, 3, 48, 640)"), std::string::npos);
  EXPECT_EQ(times.find("(1, 3, 48, 320)"), std::string::npos);
}

}  // namespace
}  // namespace parity
