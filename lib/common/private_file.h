// Files that hold a secret (a codec secret, an API key, a TLS private key):
// creating one, and the one rule every flag naming one is checked with.
//
// Created: exclusively (never replacing an existing file, so two replicas
// starting at once cannot overwrite each other's secret), mode 0600 whatever
// the umask, fsync'd, and removed again if it could not be written whole.
//
// Read (CheckSecretFile): a file that other users may write stops the start,
// since whoever can write it can put in a secret of their own (their own
// admin key, a TLS key they hold, a codec secret that makes every code mean
// another link); one that other users may read is logged as a warning. The
// process's own group is not "other users": a service's dedicated group, or
// a Kubernetes pod's fsGroup (which adds group read to Secret volumes), may
// read it. Nobody but the owner may write it, the own group included.
//
// Thread safety: stateless.
#ifndef SHORTENER_LIB_COMMON_PRIVATE_FILE_H_
#define SHORTENER_LIB_COMMON_PRIVATE_FILE_H_

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace shortener {

// Creates `path` with `content`. ALREADY_EXISTS if it exists; otherwise the
// errno's status, its message starting with `what` and naming the path.
absl::Status CreatePrivateFile(const std::string& path, absl::string_view content,
                               absl::string_view what);

// What the rule says about a secret file with this type and mode, group
// `file_gid`, read by a process whose effective group is `own_gid`. Pure:
// CheckSecretFile's decision, apart for tests.
enum class SecretFileVerdict {
  kPrivate,           // only the owner (and the own group) may read it
  kReadableByOthers,  // warn
  kWritableByOthers,  // refuse
  kNotRegularFile,    // refuse (a directory, a FIFO, a device)
};
SecretFileVerdict JudgeSecretFile(mode_t mode, gid_t file_gid, gid_t own_gid);

// Applies the rule to the file open as `fd`, which `path` named (fstat: the
// file checked is the file read; `path` and `what` are for messages, `what`
// the flag, e.g. "--api_key_file"). FAILED_PRECONDITION naming the file,
// its mode and the fix, e.g.
//   --api_key_file: /etc/edge.key is writable by other users (mode 0664):
//   whoever can write it can replace the secret; chmod 600 it
// for kWritableByOthers and kNotRegularFile; the errno's status naming the
// file if it cannot be stat'ed. For kReadableByOthers, logs a warning naming
// the file and mode and returns OK.
absl::Status CheckSecretFile(int fd, const std::string& path, absl::string_view what);

// The same for `path` (stat follows symbolic links, as in Kubernetes Secret
// volumes, whose files are links into a ..data directory). Errors as above,
// and the errno's status naming the file when it cannot be stat'ed.
absl::Status CheckSecretFile(const std::string& path, absl::string_view what);

}  // namespace shortener

#endif  // SHORTENER_LIB_COMMON_PRIVATE_FILE_H_
