#include "core/topological_order.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

using Order = std::vector<size_t>;

TEST(TopologicalOrder, KeepsTheGivenOrderWhereDependenciesAllow) {
  EXPECT_EQ(stable_topological_order({{}, {0}, {1}}), (Order{0, 1, 2}));
  // 0 waits for 2; 1 is free: the smallest ready index goes first each time.
  EXPECT_EQ(stable_topological_order({{2}, {}, {}}), (Order{1, 2, 0}));
  // Repeated dependencies (two outputs of one producer) count once each way.
  EXPECT_EQ(stable_topological_order({{1, 1}, {}}), (Order{1, 0}));
  EXPECT_EQ(stable_topological_order({}), Order{});
}

TEST(TopologicalOrder, LeavesOutCyclesAndWhatWaitsForThem) {
  // 1 <-> 2 form a cycle, 3 waits for 2, 0 is free.
  EXPECT_EQ(stable_topological_order({{}, {2}, {1}, {2}}), (Order{0}));
  EXPECT_EQ(stable_topological_order({{0}}), Order{});  // waits for itself
}

}  // namespace
}  // namespace parity
