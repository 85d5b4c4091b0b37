// A deliberate data race (two threads incrementing a plain int): `make test-tsan` runs this and
// passes only when ThreadSanitizer reports it, so a tree whose sanitizer is missing or switched
// off cannot pass the concurrency tests by reporting nothing.
#include <cstdio>
#include <thread>

namespace {
int g_unguarded_counter = 0;

void increment_many_times() {
  for (int i = 0; i < 1000; ++i) ++g_unguarded_counter;
}
}  // namespace

int main() {
  std::thread a(increment_many_times);
  std::thread b(increment_many_times);
  a.join();
  b.join();
  std::printf("counter: %d (no ThreadSanitizer report above means the race went unseen)\n", g_unguarded_counter);
  return 0;
}
