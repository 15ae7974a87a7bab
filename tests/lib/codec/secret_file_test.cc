// Secret files: generation, creation with O_EXCL and 0600, parsing.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "lib/codec/short_codec.h"
#include "tests/support/status_matchers.h"

namespace shortener::codec {
namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

// A fresh private directory, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "codec_test.XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

TEST_CASE("GenerateSecretHex gives 64 fresh hex characters", "[lib/codec]") {
  const std::string a = GenerateSecretHex();
  CHECK(a.size() == 64);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(a != GenerateSecretHex());
}

TEST_CASE("a new secret file is 0600, reads back and is never replaced", "[lib/codec]") {
  TempDir dir;
  const std::string path = dir.File("codec.secret");
  REQUIRE_THAT(WriteNewSecretFile(path), IsOk());
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);

  absl::StatusOr<std::string> secret = ReadSecretFile(path);
  REQUIRE_THAT(secret, IsOk());
  CHECK(secret->size() == 32);
  CHECK_THAT(ShortCodec::Create({*secret, 6}), IsOk());

  CHECK_THAT(WriteNewSecretFile(path), HasCode(absl::StatusCode::kAlreadyExists));
  CHECK(*ReadSecretFile(path) == *secret);  // untouched
}

TEST_CASE("ReadSecretFile decodes hex and tolerates surrounding whitespace", "[lib/codec]") {
  TempDir dir;
  const std::string path = dir.File("s");
  WriteFile(path, "  " + std::string(64, 'A') + "\r\n\n");
  absl::StatusOr<std::string> secret = ReadSecretFile(path);
  REQUIRE_THAT(secret, IsOk());
  CHECK(*secret == std::string(32, '\xaa'));
}

TEST_CASE("ReadSecretFile refuses missing and malformed files", "[lib/codec]") {
  TempDir dir;
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  CHECK_THAT(ReadSecretFile(dir.File("missing")), HasCode(absl::StatusCode::kNotFound));
  const std::string path = dir.File("bad");
  WriteFile(path, "");
  CHECK_THAT(ReadSecretFile(path), HasCodeAndMessage(kInvalid, "at least 64"));
  WriteFile(path, std::string(62, 'a') + "\n");
  CHECK_THAT(ReadSecretFile(path), HasCodeAndMessage(kInvalid, "at least 64"));
  WriteFile(path, std::string(63, 'a') + "g\n");
  CHECK_THAT(ReadSecretFile(path), HasCodeAndMessage(kInvalid, "hex"));
  WriteFile(path, std::string(32, 'a') + "\n" + std::string(32, 'a') + "\n");
  CHECK_THAT(ReadSecretFile(path), HasCodeAndMessage(kInvalid, "hex"));
  WriteFile(path, std::string(65, 'a'));
  CHECK_THAT(ReadSecretFile(path), HasCodeAndMessage(kInvalid, "odd"));
  WriteFile(path, std::string(4096, 'a'));
  CHECK_THAT(ReadSecretFile(path), HasCode(kInvalid));
  CHECK_FALSE(ReadSecretFile(dir.File("")).ok());  // a directory
  CHECK_THAT(WriteNewSecretFile(dir.File("no/such/dir")), HasCode(absl::StatusCode::kNotFound));
}

TEST_CASE("ReadSecretFile refuses a secret others can write or that is not a file", "[lib/codec]") {
  TempDir dir;
  const std::string path = dir.File("shared.secret");
  WriteFile(path, std::string(64, 'a') + "\n");
  REQUIRE(::chmod(path.c_str(), 0664) == 0);
  CHECK_THAT(
      ReadSecretFile(path),
      HasCodeAndMessage(absl::StatusCode::kFailedPrecondition,
                        "codec secret: " + path + " is writable by other users (mode 0664)"));
  REQUIRE(::chmod(path.c_str(), 0400) == 0);
  CHECK_THAT(ReadSecretFile(path), IsOk());
  CHECK_THAT(ReadSecretFile(dir.File("")),
             HasCodeAndMessage(absl::StatusCode::kFailedPrecondition, "not a regular file"));
}

}  // namespace
}  // namespace shortener::codec
