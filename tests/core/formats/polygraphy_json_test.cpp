#include "core/formats/polygraphy_json.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <regex>

#include "core/formats/data_file.h"
#include "core/formats/npy.h"
#include "core/formats/npz.h"
#include "support/test_support.h"

namespace parity {
namespace {

using testing::polygraphy_fixtures_dir;
using testing::read_file;

std::string polygraphy_fixture(const std::string& name) {
  return (polygraphy_fixtures_dir() / name).string();
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(PolygraphyJson, ReadsRunResults) {
  const RunResults r = read_run_results(polygraphy_fixture("run_results.json"));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r.runs[0].first, "onnxrt-runner-N0-01/02/26-10:00:00");
  ASSERT_EQ(r.runs[0].second.size(), 2u);
  const IterationResult& it = r.runs[0].second[0];
  EXPECT_EQ(it.runner_name, r.runs[0].first);
  ASSERT_TRUE(it.runtime.has_value());
  EXPECT_DOUBLE_EQ(*it.runtime, 0.001);
  EXPECT_EQ(it.outputs.names(), (std::vector<std::string>{"y", "y_half", "argmax", "positive"}));
  EXPECT_EQ(it.outputs.at("y").dtype(), DType::kFloat32);
  EXPECT_EQ(it.outputs.at("y").shape(), (Shape{1, 3, 4, 4}));
  EXPECT_EQ(it.outputs.at("y_half").dtype(), DType::kFloat16);
  EXPECT_EQ(it.outputs.at("argmax").to_vector<int64_t>(), (std::vector<int64_t>{40}));
  EXPECT_EQ(it.outputs.at("positive").dtype(), DType::kBool);
}

TEST(PolygraphyJson, RewritingFixturesIsByteIdentical) {
  const std::string run_path = polygraphy_fixture("run_results.json");
  EXPECT_EQ(run_results_to_json(read_run_results(run_path)), read_file(run_path));
  const std::string inputs_path = polygraphy_fixture("inputs_seed1.json");
  EXPECT_EQ(inputs_to_json(read_inputs_json(inputs_path)), read_file(inputs_path));
}

TEST(PolygraphyJson, EveryArrayKeepsPolygraphysBase64) {
  // Stronger than the whole-file check for diagnosis: each "array" string separately.
  const std::regex array_re("\"array\": \"([^\"]*)\"");
  for (const char* name : {"run_results.json", "inputs_seed1.json"}) {
    const std::string original = read_file(polygraphy_fixture(name));
    const std::string rewritten = std::string(name) == "run_results.json"
                                      ? run_results_to_json(read_run_results(polygraphy_fixture(name)))
                                      : inputs_to_json(read_inputs_json(polygraphy_fixture(name)));
    std::vector<std::string> a, b;
    for (std::sregex_iterator it(original.begin(), original.end(), array_re), end; it != end; ++it) a.push_back((*it)[1]);
    for (std::sregex_iterator it(rewritten.begin(), rewritten.end(), array_re), end; it != end; ++it) b.push_back((*it)[1]);
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a, b) << name;
  }
}

TEST(PolygraphyJson, InputsMatchTheNpzCopiesBitExactly) {
  const auto iterations = read_inputs_json(polygraphy_fixture("inputs_seed1.json"));
  ASSERT_EQ(iterations.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const TensorMap npz = read_npz(polygraphy_fixture("inputs_seed1_iter" + std::to_string(i) + ".npz"));
    ASSERT_EQ(npz.names(), iterations[i].names());
    EXPECT_EQ(npz.names(), (std::vector<std::string>{"x", "ids", "mask", "h", "k"}));
    for (const auto& [name, t] : npz) EXPECT_TRUE(t.bit_equal(iterations[i].at(name))) << name << " iteration " << i;
  }
}

TEST(PolygraphyJson, SeveralInputFilesConcatenate) {
  const std::string p = polygraphy_fixture("inputs_seed1.json");
  EXPECT_EQ(read_inputs_json(std::vector<std::string>{p, p}).size(), 4u);
}

TensorMap every_dtype_map() {
  TensorMap m;
  m.set("zeta", Tensor::from_vector<float>({2, 2}, {0.5f, -1.f, 3.25f, 1e-8f}));
  m.set("alpha", Tensor::from_vector<double>({1}, {-1e-300}));
  m.set("h", Tensor::from_vector<Float16>({3}, {Float16(1.f), Float16(-2.5f), Float16(65504.f)}));
  m.set("i8", Tensor::from_vector<int8_t>({2}, {-128, 127}));
  m.set("i16", Tensor::from_vector<int16_t>({2}, {-300, 300}));
  m.set("i32", Tensor::from_vector<int32_t>({1, 1, 2}, {INT32_MIN, 9}));
  m.set("i64", Tensor::scalar<int64_t>(INT64_MIN));
  m.set("u8", Tensor::from_vector<uint8_t>({2}, {0, 255}));
  m.set("u16", Tensor::from_vector<uint16_t>({1}, {60000}));
  m.set("u32", Tensor::from_vector<uint32_t>({1}, {4000000000u}));
  m.set("u64", Tensor::from_vector<uint64_t>({1}, {UINT64_MAX}));
  m.set("flag", Tensor::from_vector<bool>({3}, {true, false, true}));
  m.set("c64", Tensor::from_vector<std::complex<float>>({1}, {{0.5f, 2.f}}));
  m.set("c128", Tensor::from_vector<std::complex<double>>({1}, {{-1, 1e-200}}));
  m.set("none", Tensor(DType::kInt64, {0}));
  m.set("none2", Tensor(DType::kFloat16, {3, 0, 2}));
  return m;
}

void expect_same(const TensorMap& a, const TensorMap& b) {
  ASSERT_EQ(a.names(), b.names());
  for (const auto& [name, t] : a) EXPECT_TRUE(t.bit_equal(b.at(name))) << name;
}

TEST(PolygraphyJson, JsonNpzJsonRoundTripKeepsEverything) {
  testing::TempDir dir;
  const std::vector<TensorMap> original{every_dtype_map(), every_dtype_map()};
  const auto json_path = (dir / "in.json").string();
  write_inputs_json(json_path, original);
  const auto loaded = read_inputs_json(json_path);
  ASSERT_EQ(loaded.size(), 2u);
  for (bool compressed : {false, true}) {
    const auto npz_path = (dir / "x.npz").string();
    write_npz(npz_path, loaded[0], compressed);
    const TensorMap from_npz = read_npz(npz_path);
    expect_same(original[0], from_npz);
    const auto json2 = (dir / "again.json").string();
    write_inputs_json(json2, {from_npz, loaded[1]});
    EXPECT_EQ(read_file(json2), read_file(json_path));
  }
}

TEST(PolygraphyJson, RunResultsRoundTripKeepsRepeatedRunnersAndOrder) {
  RunResults r;
  r.add("b-runner", {IterationResult{every_dtype_map(), 0.25, "b-runner"}});
  r.add("a-runner", {IterationResult{every_dtype_map(), std::nullopt, "a-runner"},
                     IterationResult{TensorMap{}, 1e-5, "a-runner"}});
  r.add("b-runner", {});
  testing::TempDir dir;
  const auto path = (dir / "r.json").string();
  write_run_results(path, r);
  const RunResults back = read_run_results(path);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back.runs[0].first, "b-runner");
  EXPECT_EQ(back.runs[1].first, "a-runner");
  EXPECT_EQ(back.runs[2].first, "b-runner");
  EXPECT_EQ(*back.runs[0].second[0].runtime, 0.25);
  EXPECT_FALSE(back.runs[1].second[0].runtime.has_value());
  EXPECT_EQ(*back.runs[1].second[1].runtime, 1e-5);
  expect_same(r.runs[0].second[0].outputs, back.runs[0].second[0].outputs);
  EXPECT_EQ(run_results_to_json(back), read_file(path));
  const std::string text = read_file(path);
  EXPECT_NE(text.find("\"runtime\": null,"), std::string::npos);
  EXPECT_NE(text.find("\"polygraphy_class\": \"RunResults\"\n}"), std::string::npos);
}

TEST(PolygraphyJson, LegacyLazyNumpyArrayIsRead) {
  const std::string text = read_file(polygraphy_fixture("run_results.json"));
  const std::string legacy = std::regex_replace(text, std::regex("\"LazyArray\""), "\"LazyNumpyArray\"");
  const RunResults r = run_results_from_json(legacy);
  EXPECT_EQ(r.runs[0].second[0].outputs.size(), 4u);
}

TEST(PolygraphyJson, BadFilesFailWithOneClearMessage) {
  const std::string text = read_file(polygraphy_fixture("run_results.json"));
  EXPECT_NE(error_of([&] { run_results_from_json(text.substr(0, text.size() / 2), "r.json"); }).find("r.json: invalid JSON"),
            std::string::npos);
  const std::string unknown = std::regex_replace(text, std::regex("\"IterationResult\""), "\"FancyResult\"");
  EXPECT_NE(error_of([&] { run_results_from_json(unknown, "r.json"); }).find("unknown polygraphy_class 'FancyResult'"),
            std::string::npos);
  const std::string torch = std::regex_replace(text, std::regex("\"ndarray\""), "\"Tensor\"");
  EXPECT_NE(error_of([&] { run_results_from_json(torch, "r.json"); }).find("torch.Tensor"), std::string::npos);
  const std::string bad_b64 = std::regex_replace(text, std::regex("\"array\": \"k05VTVBZ"), "\"array\": \"k05V*VBZ", std::regex_constants::format_first_only);
  EXPECT_NE(error_of([&] { run_results_from_json(bad_b64, "r.json"); }).find("invalid base64"), std::string::npos);
  EXPECT_NE(error_of([&] { run_results_from_json("[]", "r.json"); }).find("not a Polygraphy RunResults file"), std::string::npos);
  EXPECT_NE(error_of([&] { inputs_from_json(text, "r.json"); }).find("holds RunResults"), std::string::npos);
  EXPECT_NE(error_of([&] { inputs_from_json("[{\"x\": 1}]", "i.json"); }).find("expected an encoded array"), std::string::npos);
}

TEST(PolygraphyJson, UnusablePathsFailClearly) {
  testing::TempDir dir;
  EXPECT_NE(error_of([&] { read_run_results((dir / "missing.json").string()); }).find("no such file"), std::string::npos);
  EXPECT_NE(error_of([&] { read_run_results(dir.path().string()); }).find("is a directory"), std::string::npos);
  const auto fifo = (dir / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(error_of([&] { read_inputs_json(fifo); }).find("not a regular file"), std::string::npos);
}

TEST(DataFile, DetectsAndLoadsEveryKind) {
  EXPECT_EQ(detect_data_file(polygraphy_fixture("run_results.json")), DataFileKind::kRunResults);
  EXPECT_EQ(detect_data_file(polygraphy_fixture("inputs_seed1.json")), DataFileKind::kInputsJson);
  EXPECT_EQ(detect_data_file(polygraphy_fixture("inputs_seed1_iter0.npz")), DataFileKind::kNpz);
  testing::TempDir dir;
  const auto npy = (dir / "ids.npy").string();
  const Tensor ids = read_inputs_json(polygraphy_fixture("inputs_seed1.json"))[0].at("ids");
  testing::write_file(npy, npy_to_bytes(ids));
  EXPECT_EQ(detect_data_file(npy), DataFileKind::kNpy);
  const TensorMapList from_npy = load_data_file(npy);
  ASSERT_EQ(from_npy.size(), 1u);
  EXPECT_TRUE(from_npy[0].at("ids").bit_equal(ids));
  EXPECT_EQ(load_data_file(polygraphy_fixture("run_results.json")).size(), 4u);  // 2 runners x 2
  EXPECT_EQ(load_data_file(polygraphy_fixture("inputs_seed1.json")).size(), 2u);
  EXPECT_EQ(load_data_file(polygraphy_fixture("inputs_seed1_iter1.npz")).size(), 1u);
  testing::write_file((dir / "junk.txt").string(), "hello");
  EXPECT_NE(error_of([&] { load_data((dir / "junk.txt").string()); }).find("unrecognized data file"), std::string::npos);
  testing::write_file((dir / "empty.json").string(), "");
  EXPECT_NE(error_of([&] { load_data((dir / "empty.json").string()); }).find("empty file"), std::string::npos);
}

}  // namespace
}  // namespace parity
