// The codec secret file and its generator (declared in short_codec.h).
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/codec/short_codec.h"
#include "lib/common/private_file.h"

namespace shortener::codec {
namespace {

constexpr int kSecretBytes = 32;
constexpr size_t kMinHexChars = 2 * kSecretBytes;
constexpr size_t kMaxHexChars = 1024;  // bounds what we read

absl::Status ErrnoError(int error, absl::string_view what, const std::string& path) {
  return absl::ErrnoToStatus(error, absl::StrCat("codec secret: ", what, " ", path));
}

bool IsHex(absl::string_view s) {
  for (char c : s) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

std::string GenerateSecretHex() {
  unsigned char bytes[kSecretBytes];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
    // No usable CSPRNG: a predictable secret would be worse than stopping.
    std::fputs("codec: RAND_bytes failed; cannot generate a secret\n", stderr);
    std::abort();
  }
  std::string hex = absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes), sizeof(bytes)));
  OPENSSL_cleanse(bytes, sizeof(bytes));
  return hex;
}

absl::StatusOr<std::string> ReadSecretFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) {
      return absl::NotFoundError(absl::StrCat("codec secret: file not found: ", path));
    }
    return ErrnoError(error, "cannot open", path);
  }
  if (absl::Status mode = CheckSecretFile(fd, path, "codec secret"); !mode.ok()) {
    ::close(fd);
    return mode;
  }
  // Read at most a little more than the longest accepted content.
  std::string content(kMaxHexChars + 16, '\0');
  size_t size = 0;
  int error = 0;
  while (size < content.size()) {
    ssize_t n = ::read(fd, content.data() + size, content.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    if (n <= 0) break;
    size += static_cast<size_t>(n);
  }
  ::close(fd);
  if (error != 0) {
    OPENSSL_cleanse(content.data(), content.size());
    return ErrnoError(error, "cannot read", path);
  }
  content.resize(size);
  const absl::string_view hex = absl::StripAsciiWhitespace(content);
  std::string problem;
  if (hex.size() < kMinHexChars) {
    problem = absl::StrCat("need at least ", kMinHexChars, " hex characters, got ", hex.size());
  } else if (hex.size() > kMaxHexChars) {
    problem = absl::StrCat("more than ", kMaxHexChars, " characters");
  } else if (!IsHex(hex)) {
    problem = "content is not one line of hex (e.g. `openssl rand -hex 32`)";
  } else if (hex.size() % 2 != 0) {
    problem = "odd number of hex characters";
  }
  std::string secret = problem.empty() ? absl::HexStringToBytes(hex) : "";
  OPENSSL_cleanse(content.data(), content.size());
  if (!problem.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("codec secret: ", path, ": ", problem));
  }
  return secret;
}

absl::Status WriteNewSecretFile(const std::string& path) {
  std::string line = GenerateSecretHex() + "\n";
  absl::Status written = CreatePrivateFile(path, line, "codec secret");
  OPENSSL_cleanse(line.data(), line.size());
  return written;
}

}  // namespace shortener::codec
