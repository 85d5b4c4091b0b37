// Registers the OpenCV DNN runner (`--opencv`) from libparity. The runner itself lives in the
// libparity_runner_opencv module, loaded on first use, so a missing OpenCV only makes this runner
// unavailable.
#include "runners/opencv/opencv_options.h"
#include "runners/peer_module.h"

namespace parity::runners {
namespace {

options::Group<OpenCvRunnerOptions> opencv_options() {
  options::Group<OpenCvRunnerOptions> group;
  group.section("OpenCV DNN runner (--opencv)")
      .add({.flags = {"--opencv-threads"}, .help = "Threads OpenCV may use (0: OpenCV's default)", .metavar = "N"},
           options::convert(&OpenCvRunnerOptions::threads,
                            [](const std::string& text, const std::string& flag) {
                              return parse_thread_count(text, flag, 0);
                            }))
      .add({.flags = {"--opencv-no-fusion"},
            .help = "Disable OpenCV's layer fusion (helps tell fusion errors from kernel errors)",
            .arity = options::Arity::kFlag},
           options::unless(&OpenCvRunnerOptions::fusion));
  return group;
}

const RunnerRegistrar kOpenCvRunner({
    .name = "opencv",
    .flag = "--opencv",
    .description = "OpenCV DNN (cv::dnn::readNetFromONNX, CPU)",
    .options = opencv_options(),
    .availability = [](const RunnerOptions&) { return load_peer_module("opencv").status(); },
    .version =
        [](const RunnerOptions&) {
          auto module = load_peer_module("opencv");
          return module ? module.value()->version() : std::string();
        },
    .create =
        [](const RunnerConfig& config) {
          auto module = load_peer_module("opencv");
          module.status().throw_if_error();
          return module.value()->create(config);
        },
    .set_threads = set_threads_in(&OpenCvRunnerOptions::threads),
    // OpenCV 4.6's DNN module crashes on models it mis-imports (out-of-bounds reads on CumSum,
    // aborts in layers it cannot shape), taking parity down with it in-process.
    .isolate_by_default = true,
    .listing_order = 2,
});

}  // namespace
}  // namespace parity::runners
