#include "lib/common/private_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/common/log.h"

namespace shortener {
namespace {

absl::Status CheckSecretFileStat(const struct stat& st, const std::string& path,
                                 absl::string_view what) {
  const unsigned int mode = st.st_mode & 07777;
  switch (JudgeSecretFile(st.st_mode, st.st_gid, ::getegid())) {
    case SecretFileVerdict::kPrivate:
      return absl::OkStatus();
    case SecretFileVerdict::kReadableByOthers:
      LogWarning(
          "%s: %s is readable by other users (mode %04o): it holds a secret; chmod 600 it "
          "(or 400; Kubernetes: a Secret volume with defaultMode: 0400)",
          what, path, mode);
      return absl::OkStatus();
    case SecretFileVerdict::kWritableByOthers:
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s: %s is writable by other users (mode %04o): whoever can write it can replace the "
          "secret; chmod 600 it (or 400)",
          what, path, mode));
    case SecretFileVerdict::kNotRegularFile:
      return absl::FailedPreconditionError(
          absl::StrFormat("%s: %s is not a regular file (%s)", what, path,
                          S_ISDIR(st.st_mode) ? "a directory" : "a device, FIFO or socket"));
  }
  return absl::InternalError("unreachable");
}

// Writes all of `data` to `fd`, retrying on EINTR and short writes.
bool WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

SecretFileVerdict JudgeSecretFile(mode_t mode, gid_t file_gid, gid_t own_gid) {
  if (!S_ISREG(mode)) return SecretFileVerdict::kNotRegularFile;
  if ((mode & (S_IWGRP | S_IWOTH)) != 0) return SecretFileVerdict::kWritableByOthers;
  if ((mode & S_IROTH) != 0) return SecretFileVerdict::kReadableByOthers;
  if ((mode & S_IRGRP) != 0 && file_gid != own_gid) return SecretFileVerdict::kReadableByOthers;
  return SecretFileVerdict::kPrivate;
}

absl::Status CheckSecretFile(int fd, const std::string& path, absl::string_view what) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat(what, ": cannot stat ", path));
  }
  return CheckSecretFileStat(st, path, what);
}

absl::Status CheckSecretFile(const std::string& path, absl::string_view what) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat(what, ": cannot stat ", path));
  }
  return CheckSecretFileStat(st, path, what);
}

absl::Status CreatePrivateFile(const std::string& path, absl::string_view content,
                               absl::string_view what) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int error = errno;
    if (error == EEXIST) {
      return absl::AlreadyExistsError(
          absl::StrCat(what, ": ", path, " already exists; refusing to replace it"));
    }
    return absl::ErrnoToStatus(error, absl::StrCat(what, ": cannot create ", path));
  }
  // fchmod: the umask may have removed bits, never added; make 0600 explicit.
  bool ok = ::fchmod(fd, 0600) == 0 && WriteAll(fd, content) && ::fsync(fd) == 0;
  int error = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    ::unlink(path.c_str());  // never leave a half-written secret behind
    return absl::ErrnoToStatus(error != 0 ? error : EIO,
                               absl::StrCat(what, ": cannot write ", path));
  }
  return absl::OkStatus();
}

}  // namespace shortener
