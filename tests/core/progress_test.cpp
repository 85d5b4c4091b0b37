#include <gtest/gtest.h>

#include "core/progress.h"

namespace parity {
namespace {

TEST(Progress, LineShowsDoneTotalRateAndEta) {
  EXPECT_EQ(Progress::format("Conformance (ref)", 30, 100, 2.0),
            "Conformance (ref): 30/100 (30%) | 15.0/s | ETA 0:05 | 0:02 elapsed");
  EXPECT_EQ(Progress::format("bench rows", 1, 4, 90.0), "bench rows: 1/4 (25%) | 90.0 s each | ETA 4:30 | 1:30 elapsed");
  EXPECT_EQ(Progress::format("x", 4, 4, 1.0), "x: 4/4 (100%) | 4.0/s | 0:01 elapsed") << "no ETA when done";
  EXPECT_EQ(Progress::format("ref inference", 7, 0, 2.0), "ref inference: 7 | 3.5/s | 0:02 elapsed") << "unknown total";
  EXPECT_EQ(Progress::format("x", 0, 10, 0.0), "x: 0/10 (0%) | 0:00 elapsed");
  EXPECT_EQ(Progress::format("x", 1, 3, 4000.0), "x: 1/3 (33%) | 4000.0 s each | ETA 2:13:20 | 1:06:40 elapsed");
}

TEST(Progress, CountsEvenWhenNotDrawn) {
  Progress p("x", 3);  // stderr of a test is not a terminal here, or the line is just drawn: both count
  p.advance();
  p.advance(2);
  EXPECT_EQ(p.done(), 3);
  Progress::clear_active();  // harmless with nothing drawn
}

}  // namespace
}  // namespace parity
