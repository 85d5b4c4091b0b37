#include "compare/comparator.h"

#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <cmath>
#include <limits>

#include "compare/loaders.h"
#include "support/test_support.h"

namespace parity::compare {
namespace {

// y = x * scale, with the input metadata given; counts its inferences.
class ScaleRunner : public runners::Runner {
 public:
  ScaleRunner(std::string name, float scale, DType dtype = DType::kFloat32)
      : runners::Runner(std::move(name)), scale_(scale), dtype_(dtype) {}
  int inferences = 0;

 protected:
  void activate_impl() override {}
  TensorMetadata input_metadata_impl() override {
    TensorMetadata m;
    m.add("x", dtype_, DimShape({2, 3}));
    return m;
  }
  TensorMap infer_impl(const TensorMap& feed) override {
    ++inferences;
    Tensor x = feed.at("x").cast(DType::kFloat32);
    Tensor y(DType::kFloat32, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = x.data<float>()[i] * scale_;
    return {{"y", y}};
  }

 private:
  float scale_;
  DType dtype_;
};

TEST(ComparatorTest, RunsEveryRunnerOnIdenticalFeedsAndCompares) {
  ScaleRunner a("a", 1.0f), b("b", 1.0f), c("c", 1.5f);
  DataLoader loader;
  loader.iterations(3);
  std::vector<TensorMap> used;
  RunOptions options;
  options.warm_up = 2;
  options.used_feeds = &used;
  RunResults results = Comparator::run({&a, &b, &c}, loader, options);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(a.inferences, 5);  // 2 warm-up + 3 iterations
  ASSERT_EQ(used.size(), 3u);
  EXPECT_TRUE(results.runs[0].second[2].outputs.at("y").bit_equal(results.runs[1].second[2].outputs.at("y")));
  EXPECT_FALSE(a.is_active());

  AccuracyResult acc = Comparator::compare_accuracy(results);
  ASSERT_EQ(acc.pairs().size(), 2u);  // a vs b, b vs c
  EXPECT_EQ(acc.stats(0).passed, 3u);
  EXPECT_EQ(acc.stats(1).passed, 0u);
  EXPECT_DOUBLE_EQ(acc.percentage(1), 0.0);
  EXPECT_FALSE(bool(acc));

  // All against the first, failing fast after the first mismatching iteration.
  AccuracyResult ff = Comparator::compare_accuracy(results, {}, std::vector<std::pair<size_t, size_t>>{{0, 2}}, true);
  EXPECT_EQ(ff.pairs()[0].iterations.size(), 1u);
  EXPECT_THROW(Comparator::compare_accuracy(results, {}, std::vector<std::pair<size_t, size_t>>{{0, 7}}), Error);
}

TEST(ComparatorTest, FeedsThatDoNotFitARunnerAreClearErrors) {
  ScaleRunner a("a", 1.0f);
  FeedList missing({TensorMap{{"z", Tensor(DType::kFloat32, {2, 3})}}});
  try {
    Comparator::run({&a}, missing);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input 'x' of a is missing from the feed of iteration 0; the feed has: z"),
              std::string::npos)
        << e.what();
  }
  FeedList wrong_shape({TensorMap{{"x", Tensor(DType::kFloat32, {3, 2})}}});
  EXPECT_THROW(Comparator::run({&a}, wrong_shape), Error);
  // A float feed for another float type is cast, as Polygraphy casts it (with a warning); a feed
  // of another kind of type is an error.
  ScaleRunner half("half", 1.0f, DType::kFloat16);
  FeedList other_float({TensorMap{{"x", Tensor(DType::kFloat32, {2, 3})}}});
  EXPECT_NO_THROW(Comparator::run({&half}, other_float));
  FeedList wrong_dtype({TensorMap{{"x", Tensor(DType::kInt32, {2, 3})}}});
  EXPECT_THROW(Comparator::run({&half}, wrong_dtype), Error);
}

TEST(ComparatorTest, ValidateFindsNaNsAndInfs) {
  RunResults results;
  IterationResult it;
  it.runner_name = "r";
  it.outputs.set("y", Tensor::from_vector<float>({2}, {1.0f, std::numeric_limits<float>::infinity()}));
  results.add("r", {it});
  EXPECT_TRUE(Comparator::validate(results, false, true));
  EXPECT_FALSE(Comparator::validate(results, true, true));
  results.runs[0].second[0].outputs.set("y", Tensor::from_vector<float>({1}, {std::nanf("")}));
  EXPECT_FALSE(Comparator::validate(results));
}

TEST(ComparatorTest, PostprocessTopK) {
  RunResults results;
  IterationResult it;
  it.outputs.set("scores", Tensor::from_vector<float>({4}, {0.1f, 0.7f, 0.2f, 0.9f}));
  it.outputs.set("other", Tensor::from_vector<float>({2}, {1, 2}));
  results.add("r", {it});
  PerOutput<std::optional<TopK>> settings(std::nullopt);
  settings.set("scores", TopK{2, -1});
  Comparator::postprocess(results, top_k(settings));
  EXPECT_EQ(results.runs[0].second[0].outputs.at("scores").to_vector<int64_t>(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(results.runs[0].second[0].outputs.at("other").dtype(), DType::kFloat32);  // untouched
}

// Loaders ----------------------------------------------------------------------------------------

compare::loaders::Model two_node_model() {
  auto m = std::make_shared<onnx::ModelProto>();
  m->set_ir_version(8);
  m->add_opset_import()->set_version(13);
  auto* g = m->mutable_graph();
  for (auto [in, out] : {std::pair{"x", "a"}, std::pair{"a", "b"}}) {
    auto* n = g->add_node();
    n->set_op_type("Identity");
    n->add_input(in);
    n->add_output(out);
  }
  for (auto* vi : {g->add_input(), g->add_output()}) {
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
  }
  g->mutable_input(0)->set_name("x");
  g->mutable_output(0)->set_name("b");
  return m;
}

std::vector<std::string> output_names(const onnx::ModelProto& m) {
  std::vector<std::string> names;
  for (const auto& o : m.graph().output()) names.push_back(o.name());
  return names;
}

TEST(LoadersTest, ModifyOutputsMarksExcludesAndRejectsUnknownNames) {
  auto m = two_node_model();
  auto all = compare::loaders::ModifyOutputs([m] { return m; }, {"mark", "all"})();
  EXPECT_EQ(output_names(*all), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(all->graph().output(1).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);  // inferred
  EXPECT_EQ(output_names(*m), (std::vector<std::string>{"b"}));  // the loaded model is not modified
  auto some = compare::loaders::ModifyOutputs([m] { return m; }, {"mark", "all"}, {"b"})();
  EXPECT_EQ(output_names(*some), (std::vector<std::string>{"a"}));
  auto picked = compare::loaders::ModifyOutputs([m] { return m; }, {"a"})();
  EXPECT_EQ(output_names(*picked), (std::vector<std::string>{"a"}));
  EXPECT_THROW(compare::loaders::ModifyOutputs([m] { return m; }, {"nope"})(), Error);
  EXPECT_THROW(compare::loaders::ModifyOutputs([m] { return m; }, {"a"}, {"b"})(), Error);
}

TEST(LoadersTest, BytesRoundTripSaveAndExtend) {
  testing::TempDir tmp;
  const std::string path = (tmp / "m.onnx").string();
  int saved = 0;
  auto load = compare::loaders::extend(compare::loaders::SaveOnnx([] { return two_node_model(); }, path), [&](compare::loaders::Model& m) {
    ++saved;
    m->mutable_graph()->set_name("extended");
  });
  EXPECT_EQ(saved, 0);  // lazy: nothing happens until called
  auto m = load();
  EXPECT_EQ(saved, 1);
  EXPECT_EQ(m->graph().name(), "extended");
  auto reloaded = compare::loaders::OnnxFromBytes(compare::loaders::BytesFromPath(path))();
  EXPECT_EQ(reloaded->graph().node_size(), 2);
  auto replaced = compare::loaders::extend(compare::loaders::OnnxFromPath(path), [](compare::loaders::Model&) { return two_node_model(); })();
  EXPECT_EQ(replaced->graph().node_size(), 2);
  EXPECT_THROW(compare::loaders::onnx_from_path((tmp / "missing.onnx").string()), Error);
  testing::write_file(tmp / "junk.onnx", "not a model");
  EXPECT_THROW(compare::loaders::onnx_from_path((tmp / "junk.onnx").string()), Error);
  EXPECT_THROW(compare::loaders::RunnerFromOnnx("no-such-runtime", load), Error);
}

}  // namespace
}  // namespace parity::compare
