// Logger with Polygraphy's severities: [V] verbose ... [I] info, [W] warning, [E] error, [!] critical.
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "core/status.h"

namespace parity {

enum class Severity : int {
  kUltraVerbose = 5,
  kSuperVerbose = 10,
  kExtraVerbose = 20,
  kVerbose = 30,
  kInfo = 40,
  kStart = 50,
  kFinish = 51,
  kPass = 52,
  kWarning = 60,
  kFail = 65,
  kError = 70,
  kCritical = 80,
  kSilent = 1000,  // threshold that hides everything
};

/// Parses "verbose", "info", "WARNING", "extra_verbose", ... (case-insensitive).
std::optional<Severity> severity_from_name(std::string_view name);

/// parity's logger: severity-filtered `[I]`/`[W]`/`[E]` lines; logger() returns the process's.
class Logger {
 public:
  /// Messages below this severity are dropped.
  void set_severity(Severity s) { severity_ = s; }
  Severity severity() const { return severity_; }
  /// Moves the threshold by `steps` severity levels (positive = more verbose), like -v/-q.
  void adjust_verbosity(int steps);
  /// Also writes every message (without colours) to this file. Throws kIo when it cannot open.
  void set_log_file(const std::string& path);
  /// Colours are used only when the stream is a terminal; this forces them off.
  void set_colors(bool enabled) { colors_ = enabled; }
  void set_stream(FILE* stream);

  bool enabled(Severity s) const { return s >= severity_; }
  void log(Severity s, std::string_view message);

  template <typename... Args> void verbose(const Args&... a) { log_cat(Severity::kVerbose, a...); }
  template <typename... Args> void extra_verbose(const Args&... a) { log_cat(Severity::kExtraVerbose, a...); }
  template <typename... Args> void info(const Args&... a) { log_cat(Severity::kInfo, a...); }
  template <typename... Args> void start(const Args&... a) { log_cat(Severity::kStart, a...); }
  template <typename... Args> void finish(const Args&... a) { log_cat(Severity::kFinish, a...); }
  template <typename... Args> void pass(const Args&... a) { log_cat(Severity::kPass, a...); }
  template <typename... Args> void warning(const Args&... a) { log_cat(Severity::kWarning, a...); }
  template <typename... Args> void fail(const Args&... a) { log_cat(Severity::kFail, a...); }
  template <typename... Args> void error(const Args&... a) { log_cat(Severity::kError, a...); }
  template <typename... Args> void critical(const Args&... a) { log_cat(Severity::kCritical, a...); }

 private:
  template <typename... Args>
  void log_cat(Severity s, const Args&... a) {
    if (enabled(s)) log(s, str_cat(a...));
  }

  Severity severity_ = Severity::kInfo;
  FILE* stream_ = stdout;
  std::unique_ptr<FILE, int (*)(FILE*)> file_{nullptr, &std::fclose};
  bool colors_ = true;
  std::mutex mutex_;
};

/// The process-wide logger (G_LOGGER in Polygraphy).
Logger& logger();

}  // namespace parity
