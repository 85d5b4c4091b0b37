#include "core/progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <mutex>

#include "core/logger.h"

namespace parity {
namespace {

constexpr auto kRedrawInterval = std::chrono::milliseconds(100);

std::mutex& progress_mutex() {
  static std::mutex m;
  return m;
}
// The innermost live progress and whether its line is on the screen now.
Progress* g_active = nullptr;
bool g_drawn = false;

void erase_line_locked() {
  if (!g_drawn) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  g_drawn = false;
}

std::string clock_text(double seconds) {
  const auto s = static_cast<int64_t>(std::llround(seconds));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  return buf;
}

}  // namespace

bool Progress::wanted() { return isatty(STDERR_FILENO) && logger().enabled(Severity::kInfo); }

Progress::Progress(std::string label, int64_t total)
    : label_(std::move(label)), total_(total), enabled_(wanted()), start_(std::chrono::steady_clock::now()) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(progress_mutex());
  erase_line_locked();
  previous_ = g_active;
  g_active = this;
}

Progress::~Progress() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(progress_mutex());
  erase_line_locked();
  if (g_active == this) g_active = previous_;
}

void Progress::advance(int64_t n) {
  done_ += n;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const bool finished = total_ > 0 && done_ >= total_;
  if (!finished && now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  draw();
}

void Progress::draw() {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::string text = format(label_, done_, total_, seconds);
  std::lock_guard<std::mutex> lock(progress_mutex());
  if (g_active != this) return;  // an inner progress owns the line
  std::fprintf(stderr, "\r\033[K%s", text.c_str());
  std::fflush(stderr);
  g_drawn = true;
}

void Progress::clear_active() {
  std::lock_guard<std::mutex> lock(progress_mutex());
  erase_line_locked();
}

std::string Progress::format(const std::string& label, int64_t done, int64_t total, double seconds) {
  std::string text = label + ": " + std::to_string(done);
  if (total > 0) {
    char pct[16];
    std::snprintf(pct, sizeof pct, " (%d%%)", static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total)));
    text += "/" + std::to_string(total) + pct;
  }
  if (seconds > 0 && done > 0) {
    const double rate = static_cast<double>(done) / seconds;
    char buf[48];
    if (rate >= 1.0) std::snprintf(buf, sizeof buf, " | %.1f/s", rate);
    else std::snprintf(buf, sizeof buf, " | %.1f s each", 1.0 / rate);
    text += buf;
    if (total > 0 && done < total) text += " | ETA " + clock_text(static_cast<double>(total - done) / rate);
  }
  text += " | " + clock_text(seconds) + " elapsed";
  return text;
}

}  // namespace parity
