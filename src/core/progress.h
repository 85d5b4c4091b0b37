// A progress line for long work ("Conformance: 120/1072 (11%) | 38.2/s | ETA 0:25") on stderr.
// It is drawn only when stderr is a terminal and the logger shows info messages (so -q and
// --silent turn it off), and it erases itself before anything else is logged and when done, so
// files, pipes and logs never see it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace parity {

class Progress {
 public:
  /// `total` may be 0 when unknown (no percentage or ETA then).
  Progress(std::string label, int64_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Counts `n` more items done and redraws the line (at most ten times a second).
  void advance(int64_t n = 1);
  void set_total(int64_t total) { total_ = total; }
  int64_t done() const { return done_; }
  bool enabled() const { return enabled_; }

  /// Erases the line of the active progress, if one is drawn, so the next output starts on a clean
  /// line; the next advance() draws it again. The logger calls this before every message.
  static void clear_active();

  /// The line's text: label, done/total with percentage, rate and ETA (pure; for tests).
  static std::string format(const std::string& label, int64_t done, int64_t total, double seconds);

  /// Whether progress lines would be drawn now (stderr is a terminal and info messages show).
  static bool wanted();

 private:
  void draw();

  std::string label_;
  int64_t total_ = 0;
  int64_t done_ = 0;
  bool enabled_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_{};
  Progress* previous_ = nullptr;  // an outer progress (e.g. bench rows around runs), restored when this ends
};

}  // namespace parity
