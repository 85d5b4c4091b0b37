#include "core/logger.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <ctime>
#include <filesystem>

#include "core/log_format.h"
#include "core/progress.h"

namespace parity {

namespace {
// Set once from the command line (--log-format timestamp); read by every log line.
std::atomic<bool> g_timestamps{false};

struct SeverityInfo {
  Severity severity;
  const char* name;
  const char* letter;
  const char* color;  // ANSI
};

constexpr std::array<SeverityInfo, 11> kSeverities = {{
    {Severity::kUltraVerbose, "ultra_verbose", "[U]", "\033[90m"},
    {Severity::kSuperVerbose, "super_verbose", "[S]", "\033[90m"},
    {Severity::kExtraVerbose, "extra_verbose", "[X]", "\033[90m"},
    {Severity::kVerbose, "verbose", "[V]", "\033[2m"},
    {Severity::kInfo, "info", "[I]", ""},
    {Severity::kStart, "start", "[I]", "\033[94m"},
    {Severity::kFinish, "finish", "[I]", "\033[92m"},
    {Severity::kPass, "pass", "[I]", "\033[92m"},
    {Severity::kWarning, "warning", "[W]", "\033[33m"},
    {Severity::kError, "error", "[E]", "\033[91m"},
    {Severity::kCritical, "critical", "[!]", "\033[91;1m"},
}};

const SeverityInfo& info_for(Severity s) {
  if (s == Severity::kFail) return kSeverities[9];
  for (const auto& i : kSeverities)
    if (i.severity == s) return i;
  return kSeverities[4];
}
}  // namespace

std::optional<Severity> severity_from_name(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  std::replace(n.begin(), n.end(), '-', '_');
  for (const auto& i : kSeverities)
    if (n == i.name) return i.severity;
  if (n == "fail") return Severity::kFail;
  if (n == "silent") return Severity::kSilent;
  return std::nullopt;
}

void Logger::adjust_verbosity(int steps) {
  // Steps move through the distinct thresholds users choose between.
  static constexpr Severity kLevels[] = {Severity::kUltraVerbose, Severity::kSuperVerbose,
                                         Severity::kExtraVerbose, Severity::kVerbose,
                                         Severity::kInfo,         Severity::kWarning,
                                         Severity::kError,        Severity::kCritical};
  constexpr int kCount = static_cast<int>(std::size(kLevels));
  int index = 4;
  for (int i = 0; i < kCount; ++i)
    if (kLevels[i] <= severity_) index = i;
  index = std::clamp(index - steps, 0, kCount - 1);
  severity_ = kLevels[index];
}

void Logger::set_log_file(const std::string& path) {
  // Like Polygraphy, a log file may name a folder that does not exist yet.
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  PARITY_CHECK(!ec, kIo, "cannot create folder '", parent.string(), "' for log file '", path, "': ", ec.message());
  FILE* f = std::fopen(path.c_str(), "a");
  PARITY_CHECK(f, kIo, "cannot open log file '", path, "' for writing");
  file_.reset(f);
}

void Logger::set_stream(FILE* stream) { stream_ = stream; }

void Logger::log(Severity s, std::string_view message) {
  if (!enabled(s)) return;
  Progress::clear_active();  // a progress line on the terminal must not run into the message
  const auto& info = info_for(s);
  std::lock_guard<std::mutex> lock(mutex_);
  std::string text;
  if (g_timestamps.load(std::memory_order_relaxed)) {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char stamp[16];
    std::strftime(stamp, sizeof stamp, "(%H:%M:%S) ", &local);
    text = stamp;
  }
  // Continuation lines are indented so multi-line messages read as one block, like Polygraphy.
  const std::string indent(4 + text.size(), ' ');
  text.reserve(text.size() + message.size() + 8);
  for (char c : message) {
    text += c;
    if (c == '\n') text += indent;
  }
  const bool use_color = colors_ && *info.color && isatty(fileno(stream_));
  if (use_color)
    std::fprintf(stream_, "%s%s %s\033[0m\n", info.color, info.letter, text.c_str());
  else
    std::fprintf(stream_, "%s %s\n", info.letter, text.c_str());
  std::fflush(stream_);
  if (file_) {
    std::fprintf(file_.get(), "%s %s\n", info.letter, text.c_str());
    std::fflush(file_.get());
  }
}

void set_log_timestamps(bool enabled) { g_timestamps.store(enabled, std::memory_order_relaxed); }

Logger& logger() {
  static Logger instance;
  return instance;
}

}  // namespace parity
