// Minimal leveled logging to stderr (abseil 20220623 has no absl/log).
// Thread-safe: each line is formatted first and written with one write(2).
#ifndef SHORTENER_LIB_COMMON_LOG_H_
#define SHORTENER_LIB_COMMON_LOG_H_

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace shortener {

enum class LogLevel { kInfo, kWarning, kError };

// Writes "<UTC time> <level> <message>\n" to stderr.
void LogLine(LogLevel level, absl::string_view message);

template <typename... Args>
void LogInfo(const absl::FormatSpec<Args...>& format, const Args&... args) {
  LogLine(LogLevel::kInfo, absl::StrFormat(format, args...));
}
template <typename... Args>
void LogWarning(const absl::FormatSpec<Args...>& format, const Args&... args) {
  LogLine(LogLevel::kWarning, absl::StrFormat(format, args...));
}
template <typename... Args>
void LogError(const absl::FormatSpec<Args...>& format, const Args&... args) {
  LogLine(LogLevel::kError, absl::StrFormat(format, args...));
}

}  // namespace shortener

#endif  // SHORTENER_LIB_COMMON_LOG_H_
