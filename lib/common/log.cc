#include "lib/common/log.h"

#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace shortener {

void LogLine(LogLevel level, absl::string_view message) {
  const char* tag = level == LogLevel::kInfo ? "I" : level == LogLevel::kWarning ? "W" : "E";
  std::string line =
      absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()), " ",
                   tag, " ", message, "\n");
  // One write so concurrent lines never interleave; a short write to stderr is
  // not worth retrying.
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace shortener
