// Secret files: the permission rule every flag naming one is checked with
// (writable by other users: refused; readable by them: a warning), on real
// files, directories, FIFOs and symbolic links; and their exclusive creation.
#include "lib/common/private_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/support/status_matchers.h"

namespace shortener {
namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

constexpr gid_t kOwnGroup = 1000;
constexpr gid_t kOtherGroup = 2000;

SecretFileVerdict Judge(mode_t permissions, gid_t file_gid = kOwnGroup) {
  return JudgeSecretFile(S_IFREG | permissions, file_gid, kOwnGroup);
}

TEST_CASE("the secret file rule: others may not write, should not read", "[lib/common]") {
  // Private: the owner alone, or the owner and the process's own group.
  for (mode_t mode : {0400, 0600, 0700, 0000, 0440, 0640}) {
    INFO(std::oct << mode);
    CHECK(Judge(mode) == SecretFileVerdict::kPrivate);
  }
  // Group read by a group that is not the process's own: others can read.
  CHECK(Judge(0440, kOtherGroup) == SecretFileVerdict::kReadableByOthers);
  CHECK(Judge(0640, kOtherGroup) == SecretFileVerdict::kReadableByOthers);
  // World read, whatever the group.
  for (mode_t mode : {0604, 0644, 0444, 0404}) {
    INFO(std::oct << mode);
    CHECK(Judge(mode) == SecretFileVerdict::kReadableByOthers);
    CHECK(Judge(mode, kOtherGroup) == SecretFileVerdict::kReadableByOthers);
  }
  // Any write bit but the owner's, the own group's included: refused.
  for (mode_t mode : {0620, 0602, 0660, 0666, 0622, 0420, 0402, 0020, 0002, 0777}) {
    INFO(std::oct << mode);
    CHECK(Judge(mode) == SecretFileVerdict::kWritableByOthers);
    CHECK(Judge(mode, kOtherGroup) == SecretFileVerdict::kWritableByOthers);
  }
  // Not a file at all.
  CHECK(JudgeSecretFile(S_IFDIR | 0700, kOwnGroup, kOwnGroup) ==
        SecretFileVerdict::kNotRegularFile);
  CHECK(JudgeSecretFile(S_IFIFO | 0600, kOwnGroup, kOwnGroup) ==
        SecretFileVerdict::kNotRegularFile);
  CHECK(JudgeSecretFile(S_IFCHR | 0600, kOwnGroup, kOwnGroup) ==
        SecretFileVerdict::kNotRegularFile);
}

// A private temp dir, removed at the end.
struct TempDir {
  TempDir() {
    char templ[] = "/tmp/shortener-secret-test-XXXXXX";
    REQUIRE(::mkdtemp(templ) != nullptr);
    path = templ;
  }
  ~TempDir() {
    const int rc = std::system(absl::StrCat("rm -rf '", path, "'").c_str());
    (void)rc;
  }
  std::string File(const std::string& name, mode_t mode) const {
    const std::string file = path + "/" + name;
    std::ofstream(file) << "secret\n";
    REQUIRE(::chmod(file.c_str(), mode) == 0);
    return file;
  }
  std::string path;
};

// What `fn` wrote to stderr (the log) while it ran.
template <typename Fn>
std::string Stderr(Fn fn) {
  std::fflush(stderr);
  char templ[] = "/tmp/shortener-stderr-XXXXXX";
  const int capture = ::mkstemp(templ);
  REQUIRE(capture >= 0);
  const int saved = ::dup(2);
  ::dup2(capture, 2);
  fn();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  ::close(capture);
  std::ifstream in(templ);
  std::stringstream out;
  out << in.rdbuf();
  ::unlink(templ);
  return out.str();
}

TEST_CASE("CheckSecretFile refuses a file others can write, naming it and its mode",
          "[lib/common]") {
  TempDir dir;
  for (mode_t mode : {0666, 0664, 0620, 0602}) {
    const std::string file = dir.File(absl::StrCat("w", mode), mode);
    char octal[8];
    std::snprintf(octal, sizeof(octal), "%04o", static_cast<unsigned>(mode));
    const std::string expected =
        absl::StrCat("--api_key_file: ", file, " is writable by other users (mode ", octal,
                     "): whoever can write it can replace the secret");
    CHECK_THAT(CheckSecretFile(file, "--api_key_file"),
               HasCodeAndMessage(absl::StatusCode::kFailedPrecondition, expected));
    const int fd = ::open(file.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    CHECK_THAT(CheckSecretFile(fd, file, "--api_key_file"),
               HasCodeAndMessage(absl::StatusCode::kFailedPrecondition, expected));
    ::close(fd);
  }
}

TEST_CASE("CheckSecretFile warns about a file others can read and accepts it", "[lib/common]") {
  TempDir dir;
  const std::string readable = dir.File("readable", 0644);
  absl::Status status;
  const std::string log = Stderr([&] { status = CheckSecretFile(readable, "--tls_key"); });
  CHECK_THAT(status, IsOk());
  CHECK_THAT(log, Catch::Contains(absl::StrCat("--tls_key: ", readable,
                                               " is readable by other users (mode 0644)")));
  CHECK_THAT(log, Catch::Contains("defaultMode: 0400"));
  // Private files pass silently.
  for (mode_t mode : {0600, 0400}) {
    const std::string file = dir.File(absl::StrCat("p", mode), mode);
    const std::string quiet = Stderr([&] { status = CheckSecretFile(file, "--tls_key"); });
    CHECK_THAT(status, IsOk());
    CHECK(quiet.empty());
  }
}

TEST_CASE("CheckSecretFile refuses what is not a regular file, and follows symbolic links",
          "[lib/common]") {
  TempDir dir;
  CHECK_THAT(CheckSecretFile(dir.path, "--codec_secret_file"),
             HasCodeAndMessage(absl::StatusCode::kFailedPrecondition,
                               absl::StrCat(dir.path, " is not a regular file (a directory)")));
  const std::string fifo = dir.path + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THAT(CheckSecretFile(fifo, "--codec_secret_file"),
             HasCodeAndMessage(absl::StatusCode::kFailedPrecondition, "not a regular file"));
  CHECK_THAT(CheckSecretFile(dir.path + "/missing", "--codec_secret_file"),
             HasCodeAndMessage(absl::StatusCode::kNotFound, "--codec_secret_file: cannot stat"));
  // As in a Kubernetes Secret volume: the name is a link; the target counts.
  const std::string private_target = dir.File("target-private", 0400);
  const std::string open_target = dir.File("target-open", 0666);
  const std::string link_private = dir.path + "/link-private";
  const std::string link_open = dir.path + "/link-open";
  REQUIRE(::symlink(private_target.c_str(), link_private.c_str()) == 0);
  REQUIRE(::symlink(open_target.c_str(), link_open.c_str()) == 0);
  CHECK_THAT(CheckSecretFile(link_private, "--api_key_file"), IsOk());
  CHECK_THAT(CheckSecretFile(link_open, "--api_key_file"),
             HasCode(absl::StatusCode::kFailedPrecondition));
}

TEST_CASE("CreatePrivateFile makes 0600 files and never replaces one", "[lib/common]") {
  TempDir dir;
  const std::string file = dir.path + "/new.key";
  REQUIRE_THAT(CreatePrivateFile(file, "k\n", "test key"), IsOk());
  struct stat st;
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK_THAT(CheckSecretFile(file, "test key"), IsOk());
  CHECK_THAT(CreatePrivateFile(file, "other\n", "test key"),
             HasCodeAndMessage(absl::StatusCode::kAlreadyExists, "refusing to replace it"));
}

}  // namespace
}  // namespace shortener
