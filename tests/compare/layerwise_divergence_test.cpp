// find_divergence_start: the first failing layer whose inputs all agree, not merely the first
// failing layer in execution order.
#include <gtest/gtest.h>

#include "compare/layerwise.h"

namespace parity::compare {
namespace {

LayerResult layer(const std::string& name, std::vector<std::string> inputs, bool compared, bool passed) {
  LayerResult l;
  l.name = name;
  l.inputs = std::move(inputs);
  l.compared = compared;
  l.passed = passed;
  return l;
}

TEST(LayerwiseDivergence, StartsWhereTheInputsAgreeAndTheOutputDoesNot) {
  LayerwiseReport report;
  report.layers = {layer("a", {"x", "w"}, true, true), layer("b", {"a"}, true, false), layer("c", {"b"}, true, false)};
  EXPECT_EQ(find_divergence_start(report), 1u);  // x and w are model inputs/weights: shared
}

TEST(LayerwiseDivergence, SkipsFailuresWhoseInputsWereNotCompared) {
  LayerwiseReport report;
  // `u` was not compared (e.g. the peer did not produce it), so `d` failing says nothing about d's node.
  report.layers = {layer("u", {"x"}, false, true), layer("d", {"u"}, true, false), layer("e", {"x"}, true, false)};
  EXPECT_EQ(find_divergence_start(report), 2u);
  report.layers.pop_back();
  EXPECT_FALSE(find_divergence_start(report).has_value());
}

}  // namespace
}  // namespace parity::compare
