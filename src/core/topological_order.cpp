#include "core/topological_order.h"

#include <functional>
#include <queue>

namespace parity {

std::vector<size_t> stable_topological_order(const std::vector<std::vector<size_t>>& deps) {
  const size_t n = deps.size();
  std::vector<size_t> pending(n);
  std::vector<std::vector<size_t>> users(n);
  for (size_t i = 0; i < n; ++i) {
    pending[i] = deps[i].size();
    for (size_t p : deps[i]) users[p].push_back(i);
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<size_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t u : users[i])
      if (--pending[u] == 0) ready.push(u);
  }
  return order;
}

}  // namespace parity
