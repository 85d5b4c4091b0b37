// The reduction algorithm on synthetic graphs with synthetic checks: which subsets it tries and
// what it converges to, without running any model.
#include "tools/debug/reduce.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/status.h"

namespace parity::tools::debug {
namespace {

// A chain 0 -> 1 -> ... -> n-1.
ReduceGraph chain(size_t n) {
  return {n,
          [](size_t i) {
            NodeSet s;
            for (size_t j = 0; j <= i; ++j) s.push_back(j);
            return s;
          },
          [](const NodeSet& s) { return !s.empty(); }};
}

bool has(const NodeSet& s, size_t node) { return std::find(s.begin(), s.end(), node) != s.end(); }

TEST(DebugReduce, BisectFindsTheOneFailingNodeOfAChainInLogarithmicChecks) {
  size_t calls = 0;
  const auto result = reduce(chain(300), [&](const NodeSet& s) { return ++calls, has(s, 137); }, {});
  EXPECT_EQ(result.failing, NodeSet{137});
  EXPECT_EQ(result.checks, calls);
  EXPECT_LE(calls, 2 * 10u);  // two binary searches over 300 nodes
  ASSERT_TRUE(result.passing.has_value());
  EXPECT_FALSE(has(*result.passing, 137));
}

TEST(DebugReduce, LinearFindsTheOneFailingNodeWithOneCheckPerNode) {
  size_t calls = 0;
  const auto result =
      reduce(chain(40), [&](const NodeSet& s) { return ++calls, has(s, 0); }, {.mode = ReduceMode::kLinear});
  EXPECT_EQ(result.failing, NodeSet{0});
  EXPECT_EQ(calls, 39u);  // every node but the last one standing was tried once
}

TEST(DebugReduce, LinearKeepsEveryNodeAFailureNeedsAcrossBranches) {
  // Two branches 0..4 and 5..9 (independent chains); the failure needs 2 and 8 together.
  ReduceGraph graph{10,
                    [](size_t i) {
                      NodeSet s;
                      for (size_t j = i < 5 ? 0 : 5; j <= i; ++j) s.push_back(j);
                      return s;
                    },
                    [](const NodeSet& s) { return !s.empty(); }};
  const auto fails = [](const NodeSet& s) { return has(s, 2) && has(s, 8); };
  EXPECT_EQ(reduce(graph, fails, {.mode = ReduceMode::kLinear}).failing, (NodeSet{2, 8}));
  // Bisect still ends with a failing set that holds both.
  const auto bisected = reduce(graph, fails, {});
  EXPECT_TRUE(fails(bisected.failing));
  EXPECT_LT(bisected.failing.size(), 10u);
}

TEST(DebugReduce, BisectDropsASideBranchThroughAncestors) {
  // 0 -> 1 -> 2 (failing) and a side branch 3, 4 that is sorted between them would be: 0,3,1,4,2.
  // Nodes: 0:a 1:side 2:b 3:side2 4:failing(c) with c depending on a, b only.
  ReduceGraph graph{5,
                    [](size_t i) -> NodeSet {
                      switch (i) {
                        case 0: return {0};
                        case 1: return {0, 1};
                        case 2: return {0, 2};
                        case 3: return {0, 1, 3};
                        default: return {0, 2, 4};
                      }
                    },
                    [](const NodeSet& s) { return !s.empty(); }};
  const auto result = reduce(graph, [](const NodeSet& s) { return has(s, 4); }, {});
  EXPECT_EQ(result.failing, NodeSet{4});
}

TEST(DebugReduce, OnlyFromTheOutputsKeepsTheNodesBeforeTheFailure) {
  const auto fails = [](const NodeSet& s) { return has(s, 6); };
  EXPECT_EQ(reduce(chain(12), fails, {.reduce_inputs = false}).failing, (NodeSet{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(reduce(chain(12), fails, {.mode = ReduceMode::kLinear, .reduce_inputs = false}).failing,
            (NodeSet{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(reduce(chain(12), fails, {.reduce_outputs = false}).failing, (NodeSet{6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(reduce(chain(12), fails, {.mode = ReduceMode::kLinear, .reduce_outputs = false}).failing,
            (NodeSet{6, 7, 8, 9, 10, 11}));
}

TEST(DebugReduce, NodeSetsRoundTripAsRanges) {
  const NodeSet nodes{0, 1, 2, 5, 7, 8};
  EXPECT_EQ(format_node_set(nodes), "0-2,5,7-8");
  EXPECT_EQ(parse_node_set("0-2,5,7-8"), nodes);
  EXPECT_TRUE(parse_node_set("").empty());
  EXPECT_THROW(parse_node_set("3-1"), Error);
  EXPECT_THROW(parse_node_set("x"), Error);
  EXPECT_THROW(parse_reduce_mode("fast"), Error);
}

}  // namespace
}  // namespace parity::tools::debug
