// The OpenCV DNN runner's options, shared by its registration in libparity (which parses them)
// and the runner module (which reads them back from the RunnerConfig).
#pragma once

namespace parity::runners {

/// --opencv-threads, --opencv-no-fusion.
struct OpenCvRunnerOptions {
  int threads = 0;     ///< Threads OpenCV may use; 0 = OpenCV's default.
  bool fusion = true;  ///< OpenCV's layer fusion.
};

}  // namespace parity::runners
