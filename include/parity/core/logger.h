// Logger with Polygraphy's severities: [V] verbose ... [I] info, [W] warning, [E] error, [!] critical.
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "core/status.h"

namespace parity {

/// Message severities, Polygraphy's values: a logger prints a message when its severity is at least the threshold.
enum class Severity : int {
  kUltraVerbose = 5,  ///< [U]: the most detailed tracing.
  kSuperVerbose = 10,  ///< [S]: very detailed tracing.
  kExtraVerbose = 20,  ///< [X]: detailed tracing.
  kVerbose = 30,  ///< [V]: verbose.
  kInfo = 40,  ///< [I]: information (the default threshold).
  kStart = 50,  ///< [I], coloured as the start of a step.
  kFinish = 51,  ///< [I], coloured as a finished step.
  kPass = 52,  ///< [I], coloured as a passed check.
  kWarning = 60,  ///< [W]: warning.
  kFail = 65,  ///< [E] for a failed check.
  kError = 70,  ///< [E]: error.
  kCritical = 80,  ///< [!]: critical error.
  kSilent = 1000,  ///< threshold that hides everything
};

/// Parses "verbose", "info", "WARNING", "extra_verbose", ... (case-insensitive).
std::optional<Severity> severity_from_name(std::string_view name);

/// parity's logger: severity-filtered `[I]`/`[W]`/`[E]` lines; logger() returns the process's.
class Logger {
 public:
  /// Messages below this severity are dropped.
  void set_severity(Severity s) { severity_ = s; }
  Severity severity() const { return severity_; }  ///< The current threshold.
  /// Moves the threshold by `steps` severity levels (positive = more verbose), like -v/-q.
  void adjust_verbosity(int steps);
  /// Also writes every message (without colours) to this file. Throws kIo when it cannot open.
  void set_log_file(const std::string& path);
  /// Colours are used only when the stream is a terminal; this forces them off.
  void set_colors(bool enabled) { colors_ = enabled; }
  /// Writes messages to `stream` instead of stdout (not owned; must outlive its use).
  void set_stream(FILE* stream);

  bool enabled(Severity s) const { return s >= severity_; }  ///< True when a message of severity `s` would be printed.
  /// Prints `message` with the severity's prefix when `s` passes the threshold; safe to call from several threads.
  void log(Severity s, std::string_view message);

  /// Logs the arguments, joined with str_cat(), at the severity of the method's name.
  template <typename... Args> void verbose(const Args&... a) { log_cat(Severity::kVerbose, a...); }
  template <typename... Args> void extra_verbose(const Args&... a) { log_cat(Severity::kExtraVerbose, a...); }  ///< As verbose(), at kExtraVerbose.
  template <typename... Args> void info(const Args&... a) { log_cat(Severity::kInfo, a...); }  ///< As verbose(), at kInfo.
  template <typename... Args> void start(const Args&... a) { log_cat(Severity::kStart, a...); }  ///< As verbose(), at kStart.
  template <typename... Args> void finish(const Args&... a) { log_cat(Severity::kFinish, a...); }  ///< As verbose(), at kFinish.
  template <typename... Args> void pass(const Args&... a) { log_cat(Severity::kPass, a...); }  ///< As verbose(), at kPass.
  template <typename... Args> void warning(const Args&... a) { log_cat(Severity::kWarning, a...); }  ///< As verbose(), at kWarning.
  template <typename... Args> void fail(const Args&... a) { log_cat(Severity::kFail, a...); }  ///< As verbose(), at kFail.
  template <typename... Args> void error(const Args&... a) { log_cat(Severity::kError, a...); }  ///< As verbose(), at kError.
  template <typename... Args> void critical(const Args&... a) { log_cat(Severity::kCritical, a...); }  ///< As verbose(), at kCritical.

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
