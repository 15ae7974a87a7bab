// Files shortenctl writes whole: qr's image, the state files of import and
// export. Stateless functions; thread-safe as the file system is.
#ifndef SHORTENER_SERVICES_SHORTENCTL_FILES_H_
#define SHORTENER_SERVICES_SHORTENCTL_FILES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace shortener::ctl {

// Writes `content` to `path` whole or not at all: into a new temporary file
// beside it (mkstemp: never one that exists), flushed to disk, then renamed
// over `path`; the temporary file is removed on any failure. The file gets
// the mode a new file would (0666 less the umask). INTERNAL naming `path`
// and the system's reason otherwise.
absl::Status ReplaceFile(const std::string& path, const std::string& content);

// The whole content of `path`. NOT_FOUND when it does not exist, INTERNAL
// naming `path` when it cannot be read.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_FILES_H_
