#include "core/stats.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "core/formats/array_print.h"
#include "core/formats/npz.h"
#include "support/test_support.h"

namespace parity {
namespace {

struct Expected {
  std::string stats, histogram, str, str_n1_w40, str_all;
};

// tests/data/formats/stats_expected.txt: what numpy/Polygraphy print for stats_cases.npz
// (regenerate both with scripts/make_format_fixtures.py).
std::map<std::string, Expected> load_expected() {
  std::ifstream in(testing::source_dir() / "tests/data/formats/stats_expected.txt");
  std::map<std::string, Expected> out;
  std::string line, name, section;
  std::map<std::string, std::string> parts;
  auto flush = [&] {
    if (name.empty()) return;
    auto trim = [](std::string s) {
      while (!s.empty() && s.back() == '\n') s.pop_back();
      return s;
    };
    out[name] = {trim(parts["stats"]), trim(parts["histogram"]), trim(parts["str"]), trim(parts["str_n1_w40"]),
                 parts.count("str_all") ? trim(parts["str_all"]) : std::string("(not generated)")};
    parts.clear();
  };
  while (std::getline(in, line)) {
    if (line.rfind("=== ", 0) == 0) {
      flush();
      name = line.substr(4);
      section = "stats";
    } else if (line == "--- histogram") {
      section = "histogram";
    } else if (line == "--- str" || line == "--- str_n1_w40" || line == "--- str_all") {
      section = line.substr(4);
    } else {
      parts[section] += line + "\n";
    }
  }
  flush();
  return out;
}

class NumpyParity : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cases_ = new TensorMap(read_npz((testing::source_dir() / "tests/data/formats/stats_cases.npz").string()));
    expected_ = new std::map<std::string, Expected>(load_expected());
  }
  static void TearDownTestSuite() {
    delete cases_;
    delete expected_;
  }
  static TensorMap* cases_;
  static std::map<std::string, Expected>* expected_;
};
TensorMap* NumpyParity::cases_ = nullptr;
std::map<std::string, Expected>* NumpyParity::expected_ = nullptr;

TEST_F(NumpyParity, StatsMatchPolygraphy) {
  ASSERT_EQ(cases_->size(), expected_->size());
  for (const auto& [name, tensor] : *cases_) EXPECT_EQ(stats_string(tensor), expected_->at(name).stats) << name;
}

TEST_F(NumpyParity, HistogramsMatchPolygraphy) {
  for (const auto& [name, tensor] : *cases_) EXPECT_EQ(format_histogram(tensor), expected_->at(name).histogram) << name;
}

TEST_F(NumpyParity, ValuesPrintLikeNumpy) {
  for (const auto& [name, tensor] : *cases_) EXPECT_EQ(array_to_string(tensor), expected_->at(name).str) << name;
}

TEST_F(NumpyParity, ValuesHonourEdgeItemsAndLineWidth) {
  for (const auto& [name, tensor] : *cases_) {
    EXPECT_EQ(array_to_string(tensor, {.edge_items = 1, .line_width = 40}), expected_->at(name).str_n1_w40) << name;
    if (tensor.numel() <= 100)
      EXPECT_EQ(array_to_string(tensor, {.edge_items = -1, .line_width = -1}), expected_->at(name).str_all) << name;
  }
}

TEST(Stats, FiguresOfASmallTensor) {
  const Tensor t = Tensor::from_vector<float>({2, 2}, {4.f, 1.f, 3.f, 2.f});
  const TensorStats s = compute_stats(t);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.median, 2.5);  // even count: average of the two middle values
  EXPECT_DOUBLE_EQ(s.var, 1.25);    // population variance
  EXPECT_EQ(s.argmin, (Shape{0, 1}));
  EXPECT_EQ(s.argmax, (Shape{0, 0}));
  EXPECT_NEAR(s.p90, 3.7, 1e-12);
  EXPECT_DOUBLE_EQ(quantile(t, 0.5), 2.5);
}

TEST(Stats, FormatsLikePython) {
  EXPECT_EQ(format_g(0.000114374, 5), "0.00011437");
  EXPECT_EQ(format_g(1e-5, 5), "1e-05");
  EXPECT_EQ(format_g(123456789, 5), "1.2346e+08");
  EXPECT_EQ(format_g(-std::numeric_limits<double>::quiet_NaN(), 5), "nan");
  EXPECT_EQ(shape_to_string({}), "()");
  EXPECT_EQ(shape_to_string({5}), "(5,)");
  EXPECT_EQ(shape_to_string({1, 3}), "(1, 3)");
}

TEST(Stats, StringAndComplexTensorsHaveNoStats) {
  const Tensor c = Tensor::from_vector<std::complex<float>>({1}, {{1.f, 2.f}});
  EXPECT_EQ(stats_string(c), "<Error while computing statistics>");
  EXPECT_THROW(compute_stats(c), Error);
}

}  // namespace
}  // namespace parity
