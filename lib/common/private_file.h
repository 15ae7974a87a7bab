// Creating a file that holds a secret (a codec secret, an admin API key):
// created exclusively (never replacing an existing file, so two replicas
// starting at once cannot overwrite each other's secret), mode 0600 whatever
// the umask, fsync'd, and removed again if it could not be written whole.
//
// Thread safety: stateless.
#ifndef SHORTENER_LIB_COMMON_PRIVATE_FILE_H_
#define SHORTENER_LIB_COMMON_PRIVATE_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace shortener {

// Creates `path` with `content`. ALREADY_EXISTS if it exists; otherwise the
// errno's status, its message starting with `what` and naming the path.
absl::Status CreatePrivateFile(const std::string& path, absl::string_view content,
                               absl::string_view what);

}  // namespace shortener

#endif  // SHORTENER_LIB_COMMON_PRIVATE_FILE_H_
