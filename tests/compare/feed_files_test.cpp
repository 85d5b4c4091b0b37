#include "compare/feed_files.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "compare/data_loader.h"
#include "core/formats/polygraphy_json.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity::compare {
namespace {

namespace fs = std::filesystem;
using parity::testing::polygraphy_fixtures_dir;
using parity::testing::TempDir;

void expect_same_feeds(const std::vector<TensorMap>& a, const std::vector<TensorMap>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].names(), b[i].names());
    for (const auto& [name, t] : a[i]) EXPECT_TRUE(t.bit_equal(b[i].at(name))) << "iteration " << i << " " << name;
  }
}

TEST(FeedFilesTest, JsonNpzAndFolderOfNpzHoldTheSameFeeds) {
  const fs::path dir = polygraphy_fixtures_dir();
  const auto from_json = load_feeds((dir / "inputs_seed1.json").string());
  ASSERT_EQ(from_json.size(), 2u);
  expect_same_feeds(load_feeds((dir / "inputs_seed1_iter0.npz").string()), {from_json[0]});

  TempDir tmp;
  fs::copy_file(dir / "inputs_seed1_iter1.npz", tmp / "b.npz");
  fs::copy_file(dir / "inputs_seed1_iter0.npz", tmp / "a.npz");
  expect_same_feeds(load_feeds(tmp.path().string()), from_json);  // files in name order

  // Several paths concatenate, like Polygraphy's --load-inputs.
  const auto both = load_feeds(std::vector<std::string>{(dir / "inputs_seed1_iter1.npz").string(),
                                                        (dir / "inputs_seed1.json").string()});
  EXPECT_EQ(both.size(), 3u);
}

TEST(FeedFilesTest, SaveRoundTripsAndErrorsNameThePath) {
  TempDir tmp;
  const auto feeds = load_feeds((polygraphy_fixtures_dir() / "inputs_seed1.json").string());
  save_feeds((tmp / "x.json").string(), feeds);
  expect_same_feeds(load_feeds((tmp / "x.json").string()), feeds);
  save_feeds((tmp / "one.npz").string(), {feeds[1]});
  expect_same_feeds(load_feeds((tmp / "one.npz").string()), {feeds[1]});
  EXPECT_THROW(save_feeds((tmp / "two.npz").string(), feeds), Error);
  try {
    load_feeds((tmp / "nope.json").string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nope.json"), std::string::npos);
  }
  EXPECT_THROW(load_feeds(tmp.path().string() + "/empty_dir_missing"), Error);
}

TEST(FeedFilesTest, FeedListFromAnyIterable) {
  std::vector<TensorMap> feeds(3);
  for (size_t i = 0; i < feeds.size(); ++i) feeds[i].set("x", Tensor::scalar<float>(static_cast<float>(i)));
  FeedList list = FeedList::from(feeds);
  EXPECT_TRUE(list.feed(2).has_value());
  EXPECT_FALSE(list.feed(3).has_value());
  FeedGenerator gen([](size_t i, const TensorMetadata*) -> std::optional<TensorMap> {
    if (i >= 2) return std::nullopt;
    return TensorMap{{"x", Tensor::scalar<float>(1.0f)}};
  });
  EXPECT_TRUE(gen.feed(1).has_value());
  EXPECT_FALSE(gen.feed(2).has_value());
}

// ONNX test data: a data-set folder is one iteration (tensors named in their protos), a test
// folder one iteration per test_data_set_N.
TEST(FeedFiles, LoadsOnnxTestDataFolders) {
  const auto test = testing::onnx_testdata_dir() / "node" / "test_add";
  PARITY_REQUIRE_FILE((test / "model.onnx").string());
  const auto one = load_feeds((test / "test_data_set_0").string());
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].names(), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(one[0].at("x").shape(), (Shape{3, 4, 5}));
  const auto sets = load_feeds(test.string());
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].at("y").data<float>()[7], one[0].at("y").data<float>()[7]);
  // A .pb that is no TensorProto is one clear error naming the file.
  testing::TempDir tmp;
  testing::write_file(tmp / "input_0.pb", std::string("\xff\xff\xff", 3));
  try {
    load_feeds(tmp.path().string());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input_0.pb"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace parity::compare
