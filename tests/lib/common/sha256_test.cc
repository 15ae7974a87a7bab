#include "lib/common/sha256.h"

#include <string>

#include "absl/strings/escaping.h"
#include "catch2/catch.hpp"

namespace shortener {
namespace {

std::string Hex(absl::string_view data) {
  const Sha256Bytes d = Sha256(data);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
}

// FIPS 180-4 examples and lengths around the 55/56/64-byte padding edges.
TEST_CASE("Sha256 matches the published SHA-256 digests", "[lib/common][sha256]") {
  CHECK(Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(Hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  CHECK(Hex(std::string(55, 'a')) ==
        "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  CHECK(Hex(std::string(56, 'a')) ==
        "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  CHECK(Hex(std::string(64, 'a')) ==
        "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST_CASE("Sha256String is the digest's 32 bytes", "[lib/common][sha256]") {
  const Sha256Bytes d = Sha256("abc");
  const std::string s = Sha256String("abc");
  REQUIRE(s.size() == 32);
  CHECK(s == std::string(reinterpret_cast<const char*>(d.data()), d.size()));
  CHECK(Sha256String(std::string("a\0b", 3)) != Sha256String("a"));
}

}  // namespace
}  // namespace shortener
