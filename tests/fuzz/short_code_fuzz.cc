// Fuzzes lib/codec/short_codec.h: code decoding with its check character,
// the prefilter the edge runs on every request, encoding, and the custom
// alias rules, with real keys.
//
// Input: byte 0 picks the codec's min_body_length (1..10); the rest is
// read as a code and as an alias, and its first 8 bytes (little-endian)
// as an id. Invariants, besides no memory error or UB:
//  - Decode accepts exactly what PassesPrefilter accepts; what it accepts
//    decodes to an id <= MaxId() whose Encode() is the same code; what it
//    refuses is INVALID_ARGUMENT when not of the generated shape and
//    NOT_FOUND when it is;
//  - every id <= MaxId() encodes to a code of the generated shape that
//    passes the prefilter and decodes to that id; ids above are
//    OUT_OF_RANGE;
//  - an alias ValidateAlias accepts is 1..64 characters of [A-Za-z0-9_-]
//    and never of the generated shape, so the edge's prefilter stays exact;
//    every refusal is INVALID_ARGUMENT starting "custom_alias: " and short
//    (the alias is quoted in a bounded excerpt).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "lib/codec/alias.h"
#include "lib/codec/short_codec.h"
#include "tests/fuzz/fuzz_check.h"

namespace shortener::codec {
namespace {

// Deriving keys costs far more than one input: one codec per length, made
// once.
const ShortCodec& CodecFor(uint8_t selector) {
  static std::unique_ptr<ShortCodec> codecs[ShortCodec::kMaxBodyLength];
  const int min_body_length = selector % ShortCodec::kMaxBodyLength + 1;
  std::unique_ptr<ShortCodec>& codec = codecs[min_body_length - 1];
  if (codec == nullptr) {
    CodecOptions options;
    options.secret = std::string(32, 'c');
    options.min_body_length = min_body_length;
    codec = std::make_unique<ShortCodec>(*ShortCodec::Create(options));
  }
  return *codec;
}

bool IsAliasChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

void CheckCode(const ShortCodec& codec, absl::string_view code) {
  absl::StatusOr<uint64_t> id = codec.Decode(code);
  FUZZ_CHECK(id.ok() == codec.PassesPrefilter(code));
  if (id.ok()) {
    FUZZ_CHECK(*id <= codec.MaxId());
    absl::StatusOr<std::string> again = codec.Encode(*id);
    FUZZ_CHECK(again.ok() && *again == code);
  } else if (codec.IsGeneratedShape(code)) {
    FUZZ_CHECK(absl::IsNotFound(id.status()));
  } else {
    FUZZ_CHECK(absl::IsInvalidArgument(id.status()));
  }
}

void CheckId(const ShortCodec& codec, uint64_t id) {
  absl::StatusOr<std::string> code = codec.Encode(id);
  if (id > codec.MaxId()) {
    FUZZ_CHECK(absl::IsOutOfRange(code.status()));
    return;
  }
  FUZZ_CHECK(code.ok());
  FUZZ_CHECK(codec.IsGeneratedShape(*code) && codec.PassesPrefilter(*code));
  absl::StatusOr<uint64_t> back = codec.Decode(*code);
  FUZZ_CHECK(back.ok() && *back == id);
}

void CheckAlias(const ShortCodec& codec, absl::string_view alias) {
  absl::Status status = ValidateAlias(alias, codec);
  if (status.ok()) {
    FUZZ_CHECK(!alias.empty() && alias.size() <= 64);
    for (char c : alias) FUZZ_CHECK(IsAliasChar(c));
    FUZZ_CHECK(!codec.IsGeneratedShape(alias));
    return;
  }
  FUZZ_CHECK(absl::IsInvalidArgument(status));
  FUZZ_CHECK(absl::StartsWith(status.message(), "custom_alias: "));
  FUZZ_CHECK(status.message().size() <= 1024);
}

}  // namespace
}  // namespace shortener::codec

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shortener::codec;
  if (size == 0) return 0;
  const ShortCodec& codec = CodecFor(data[0]);
  const absl::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  CheckCode(codec, rest);
  CheckAlias(codec, rest);
  uint64_t id = 0;
  std::memcpy(&id, rest.data(), std::min(rest.size(), sizeof(id)));
  CheckId(codec, id);
  // The same id folded into range, so that most inputs reach Encode's
  // tiers rather than its range check.
  CheckId(codec, id % (codec.MaxId() + 1));
  return 0;
}
