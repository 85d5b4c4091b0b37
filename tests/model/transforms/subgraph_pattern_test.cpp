// Subgraph patterns (plugin tool): Polygraphy's toy topology built in code: two branches from one
// tensor join in a node with an attribute condition whose output feeds two pattern outputs.
#include "model/transforms/subgraph_pattern.h"

#include <gtest/gtest.h>

#include "core/status.h"

namespace parity::testing {
namespace {

using model::Graph;
using model::Node;
using model::Value;
using model::ValuePtr;
using model::transforms::SubgraphPattern;

model::Attribute int_attr(const std::string& name, int64_t v) {
  model::Attribute a;
  a.name = name;
  a.type = model::AttrType::kInt;
  a.i = v;
  return a;
}

// i -> A -> a, i -> B -> b, C(a, b; x) -> c, D(c) -> d, E(c) -> e; `tag` suffixes every name.
void add_toy(Graph& g, const ValuePtr& i, const std::string& tag, int64_t x) {
  auto v = [&](const std::string& n) { return Value::variable(n + tag); };
  auto a = v("a"), b = v("b"), c = v("c"), d = v("d"), e = v("e");
  g.nodes.push_back(std::make_shared<Node>("A", std::vector{i}, std::vector{a}, "A" + tag));
  g.nodes.push_back(std::make_shared<Node>("B", std::vector{i}, std::vector{b}, "B" + tag));
  auto cn = std::make_shared<Node>("C", std::vector{a, b}, std::vector{c}, "C" + tag);
  cn->attrs["x"] = int_attr("x", x);
  g.nodes.push_back(cn);
  g.nodes.push_back(std::make_shared<Node>("D", std::vector{c}, std::vector{d}, "D" + tag));
  g.nodes.push_back(std::make_shared<Node>("E", std::vector{c}, std::vector{e}, "E" + tag));
  g.outputs.push_back(d);
  g.outputs.push_back(e);
}

SubgraphPattern toy_pattern() {
  SubgraphPattern p;
  p.name = "toyPlugin";
  p.op_type = "CustomToyPlugin";
  p.inputs = {"in0", "in1"};
  p.outputs = {"d", "e"};
  p.nodes = {{"Anode", "A", "", {"in0"}, {"a"}, {}},
             {"Bnode", "B", "", {"in1"}, {"b"}, {}},
             {"Cnode", "C", "", {"a", "b"}, {"c"}, {{"x", "lt", int_attr("x", 2)}}},
             {"Dnode", "D", "", {"c"}, {"d"}, {}},
             {"Enode", "E", "", {"c"}, {"e"}, {}}};
  p.attributes = {{"ToyX", {}, "Cnode", "x"}};
  return p;
}

TEST(SubgraphPattern, MatchesSharedInputsAndSeveralOutputsWithConditions) {
  Graph g;
  auto i = Value::variable("i1", DType::kFloat32, DimShape{2});
  g.inputs.push_back(i);
  add_toy(g, i, "_ok", 1);
  add_toy(g, i, "_big", 3);  // x = 3 fails x < 2
  const auto matches = model::transforms::find_pattern_matches(g, toy_pattern());
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(matches[0].inputs, (std::vector<std::string>{"i1", "i1"}));
  EXPECT_EQ(matches[0].outputs, (std::vector<std::string>{"d_ok", "e_ok"}));
  EXPECT_EQ(matches[0].attributes.at("ToyX").i, 1);

  const size_t removed = model::transforms::replace_subgraph(g, {"i1"}, matches[0].outputs, "CustomToyPlugin", "",
                                                             matches[0].attributes, "toy_0");
  EXPECT_EQ(removed, 5u);
  ASSERT_EQ(g.nodes.size(), 6u);
  const auto plugin = std::find_if(g.nodes.begin(), g.nodes.end(), [](const auto& n) { return n->name == "toy_0"; });
  ASSERT_NE(plugin, g.nodes.end());
  EXPECT_EQ((*plugin)->outputs.size(), 2u);
}

TEST(SubgraphPattern, AnInnerTensorReadOutsideBlocksTheMatch) {
  Graph g;
  auto i = Value::variable("i1", DType::kFloat32, DimShape{2});
  g.inputs.push_back(i);
  add_toy(g, i, "", 1);
  auto extra = Value::variable("extra");
  g.nodes.push_back(std::make_shared<Node>("F", std::vector{g.tensor("c")}, std::vector{extra}, "F"));
  g.outputs.push_back(extra);
  EXPECT_TRUE(model::transforms::find_pattern_matches(g, toy_pattern()).empty());
  try {
    model::transforms::replace_subgraph(g, {"i1"}, {"d", "e"}, "P", "", {}, "p");
    FAIL() << "replacing must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'F' (F) outside it reads it"), std::string::npos) << e.what();
  }
}

TEST(SubgraphPattern, BrokenPatternsAreRefused) {
  SubgraphPattern p = toy_pattern();
  p.outputs = {"nowhere"};
  EXPECT_THROW(model::transforms::validate_pattern(p), Error);
  p = toy_pattern();
  p.nodes[0].inputs = {"c"};  // A reads C's output: a cycle
  EXPECT_THROW(model::transforms::validate_pattern(p), Error);
}

}  // namespace
}  // namespace parity::testing
