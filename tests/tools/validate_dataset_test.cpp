// Dataset readers of parity validate: image preprocessing gives the values it promises (layout,
// channel order, scale, mean and std, resize), and folders list their samples in name order.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/formats/npy.h"
#include "support/test_support.h"
#include "tools/validate/dataset.h"

namespace parity::tools::validation {
namespace {

using testing::TempDir;

// A 2 x 3 binary PPM: pixel (y, x) = (10 * (3y + x), 100, 250 - x).
std::string small_ppm() {
  std::string out = "P6\n3 2\n255\n";
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x) {
      out += static_cast<char>(10 * (3 * y + x));
      out += static_cast<char>(100);
      out += static_cast<char>(250 - x);
    }
  return out;
}

DatasetOptions image_input(const std::string& name = "x") {
  DatasetOptions options;
  options.inputs.add(name, DType::kFloat32, DimShape{});
  return options;
}

TEST(ValidateDataset, ImagesAreScaledNormalizedAndLaidOut) {
  TempDir tmp;
  std::filesystem::create_directories(tmp / "images");
  testing::write_file(tmp / "images" / "a.ppm", small_ppm());
  DatasetOptions options = image_input();
  options.image.mean = {0.5, 0.0, 1.0};
  options.image.std = {2.0, 1.0, 0.5};
  const auto reader = open_dataset((tmp / "images").string(), options);
  ASSERT_EQ(reader->size(), 1u);
  EXPECT_EQ(reader->kind(), "image folder");
  const Tensor x = reader->read(0).at("x");
  ASSERT_EQ(x.shape(), (Shape{1, 3, 2, 3}));
  const float* v = x.data<float>();
  // Channel 0 at (1, 2): (50/255 - 0.5) / 2; channel 2 at (0, 1): (249/255 - 1) / 0.5.
  EXPECT_FLOAT_EQ(v[0 * 6 + 1 * 3 + 2], static_cast<float>((50 / 255.0 - 0.5) / 2));
  EXPECT_FLOAT_EQ(v[1 * 6 + 0], static_cast<float>(100 / 255.0));
  EXPECT_FLOAT_EQ(v[2 * 6 + 1], static_cast<float>((249 / 255.0 - 1.0) / 0.5));

  options = image_input();
  options.image.layout = "HWC";
  options.image.channel_order = "BGR";
  options.image.scale = 1.0;
  const Tensor bgr = open_dataset((tmp / "images").string(), options)->read(0).at("x");
  ASSERT_EQ(bgr.shape(), (Shape{2, 3, 3}));
  EXPECT_EQ(bgr.data<float>()[(1 * 3 + 2) * 3 + 0], 248.0f);  // blue first
  EXPECT_EQ(bgr.data<float>()[(1 * 3 + 2) * 3 + 2], 50.0f);

  options.image.resize = std::pair<int64_t, int64_t>{4, 6};
  const Tensor resized = open_dataset((tmp / "images").string(), options)->read(0).at("x");
  EXPECT_EQ(resized.shape(), (Shape{4, 6, 3}));
  EXPECT_EQ(resized.data<float>()[1], 100.0f);  // a constant channel stays constant
}

TEST(ValidateDataset, ArrayFoldersInNameOrderAndErrorsNameTheFile) {
  TempDir tmp;
  std::filesystem::create_directories(tmp / "arrays");
  for (const char* name : {"b.npy", "a.npy", "c.npy"}) write_npy((tmp / "arrays" / name).string(), Tensor::scalar(1.0f));
  testing::write_file(tmp / "arrays" / "c.npy", "broken");
  const auto reader = open_dataset((tmp / "arrays").string(), image_input());
  ASSERT_EQ(reader->size(), 3u);
  EXPECT_EQ(reader->name(0), "a.npy");
  EXPECT_EQ(reader->name(2), "c.npy");
  EXPECT_TRUE(reader->read(0).contains("x"));
  const std::string error = testing::user_error_of([&] { reader->read(2); });
  EXPECT_NE(error.find((tmp / "arrays" / "c.npy").string()), std::string::npos) << error;
  EXPECT_NE(testing::user_error_of([&] { open_dataset((tmp / "missing").string(), image_input()); }).find("does not exist"),
            std::string::npos);
}

// What a reader raises about a sample names it in Error::file() (validate decides by that field
// whether the message still needs "sample 'PATH': "), and its message names it once.
Error error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no parity::Error";
  return Error(ErrorCode::kInternal, "none");
}

size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(ValidateDataset, ReaderErrorsNameTheirSampleInTheFileField) {
  TempDir tmp;
  std::filesystem::create_directories(tmp / "images");
  const std::string broken_image = (tmp / "images" / "b.ppm").string();
  testing::write_file(tmp / "images" / "a.ppm", small_ppm());
  testing::write_file(broken_image, "P6\n3 2\n255\nshort");
  Error e = error_of([&] { open_dataset((tmp / "images").string(), image_input())->read(1); });
  EXPECT_EQ(e.file(), broken_image) << e.what();
  EXPECT_EQ(count_of(e.what(), broken_image), 1u) << e.what();

  std::filesystem::create_directories(tmp / "arrays");
  const std::string array = (tmp / "arrays" / "a.npy").string();
  write_npy(array, Tensor::scalar(1.0f));
  DatasetOptions two_inputs = image_input();
  two_inputs.inputs.add("y", DType::kFloat32, DimShape{});
  e = error_of([&] { open_dataset((tmp / "arrays").string(), two_inputs)->read(0); });
  EXPECT_EQ(e.file(), array) << e.what();
  EXPECT_EQ(count_of(e.what(), array), 1u) << e.what();
}

}  // namespace
}  // namespace parity::tools::validation
