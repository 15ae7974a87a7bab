#include "lib/common/private_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace shortener {
namespace {

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
