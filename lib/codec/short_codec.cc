#include "lib/codec/short_codec.h"

#include <array>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/codec/base62.h"
#include "lib/codec/hmac_sha256.h"
#include "lib/codec/keyed_permutation.h"

namespace shortener::codec {
namespace internal {

// Everything derived from the options; shared read-only by copies.
struct CodecKeys {
  int min_body_length = 0;
  uint64_t max_id = 0;
  // Indexed by body length L (entries below min_body_length unused).
  std::array<uint64_t, ShortCodec::kMaxBodyLength + 1> tier_offset = {};
  // permutations[L - min_body_length] permutes tier L.
  std::vector<KeyedPermutation> permutations;
  HmacSha256 check_key;
  std::string fingerprint_hex;

  explicit CodecKeys(HmacSha256 check) : check_key(std::move(check)) {}
};

}  // namespace internal

namespace {

using internal::CodecKeys;
using internal::HmacSha256;
using internal::KeyedPermutation;

constexpr size_t kMinSecretBytes = 32;
// Leading body digit reserved as the escape to future format versions.
constexpr int kReservedLeadDigit = 61;  // 'z'

// Labels for key derivation: HMAC(secret, label) per purpose, so the check
// key is independent of the permutation key. Changing any of them changes
// every code; they are part of format version 1.
constexpr absl::string_view kPermuteLabel = "v1 permute";
constexpr absl::string_view kCheckLabel = "v1 check";
constexpr absl::string_view kFingerprintLabel = "v1 fingerprint";

std::string DeriveKey(const HmacSha256& master, absl::string_view label) {
  internal::Sha256Digest d = master.Mac(label);
  return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

char CheckChar(const CodecKeys& keys, absl::string_view body) {
  // Bodies are at most 11 characters: always the short form.
  const uint64_t mac =
      body.size() <= internal::HmacSha256::kMaxShortMessage
          ? keys.check_key.ShortMac64(reinterpret_cast<const uint8_t*>(body.data()), body.size())
          : internal::DigestPrefix64(keys.check_key.Mac(body));
  return internal::kBase62Alphabet[mac % 62];
}

// A user-supplied code for an error message: escaped and bounded.
std::string Quote(absl::string_view code) {
  constexpr size_t kMaxShown = 24;
  std::string shown = absl::CHexEscape(code.substr(0, kMaxShown));
  return absl::StrCat("\"", shown, code.size() > kMaxShown ? "...\"" : "\"");
}

}  // namespace

ShortCodec::ShortCodec(std::shared_ptr<const internal::CodecKeys> keys) : keys_(std::move(keys)) {}

absl::StatusOr<ShortCodec> ShortCodec::Create(const CodecOptions& options) {
  if (options.secret.size() < kMinSecretBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "codec: secret must be at least ", kMinSecretBytes, " bytes, got ", options.secret.size()));
  }
  const int min_length = options.min_body_length;
  if (min_length < 1 || min_length > kMaxBodyLength) {
    return absl::InvalidArgumentError(absl::StrCat("codec: min_body_length must be in 1..",
                                                   kMaxBodyLength, ", got ", min_length));
  }
  const HmacSha256 master(options.secret);
  auto keys = std::make_shared<CodecKeys>(HmacSha256(DeriveKey(master, kCheckLabel)));
  keys->min_body_length = min_length;
  const HmacSha256 permute_key(DeriveKey(master, kPermuteLabel));
  uint64_t offset = 0;
  for (int length = min_length; length <= kMaxBodyLength; ++length) {
    // Capacity 61 * 62^(L-1) <= 8.3e17 and the running sum stays below
    // 8.5e17, far from 2^64: no overflow.
    const uint64_t capacity = internal::TierCapacity(length);
    keys->tier_offset[length] = offset;
    keys->permutations.emplace_back(permute_key, static_cast<uint8_t>(length), capacity);
    offset += capacity;
  }
  keys->max_id = offset - 1;
  // The minimum length decides the tier offsets, so it is part of what the
  // fingerprint pins down.
  const internal::Sha256Digest fp =
      master.Mac(absl::StrCat(kFingerprintLabel, " min_body_length=", min_length));
  keys->fingerprint_hex = absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(fp.data()), fp.size()));
  return ShortCodec(std::move(keys));
}

absl::StatusOr<std::string> ShortCodec::Encode(uint64_t id) const {
  const CodecKeys& keys = *keys_;
  if (id > keys.max_id) {
    return absl::OutOfRangeError(
        absl::StrCat("codec: id ", id, " is above the largest encodable id ", keys.max_id));
  }
  int length = keys.min_body_length;
  uint64_t n = id - keys.tier_offset[length];
  while (n >= internal::TierCapacity(length)) {
    n -= internal::TierCapacity(length);
    ++length;
  }
  const KeyedPermutation& perm = keys.permutations[length - keys.min_body_length];
  // The permuted value is < 61 * 62^(L-1), so its leading digit is < 61:
  // version-1 bodies never start with the reserved 'z'.
  std::string code = internal::ToBase62(perm.Forward(n), length);
  code.push_back(CheckChar(keys, code));
  return code;
}

absl::StatusOr<uint64_t> ShortCodec::Decode(absl::string_view code) const {
  const CodecKeys& keys = *keys_;
  const size_t min_size = keys.min_body_length + 1;
  const size_t max_size = kMaxBodyLength + 1;
  if (code.size() < min_size || code.size() > max_size) {
    return absl::InvalidArgumentError(absl::StrCat("code: length must be ", min_size, "..",
                                                   max_size, ", got ", code.size(), " in ",
                                                   Quote(code)));
  }
  for (char c : code) {
    if (internal::Base62DigitValue(c) < 0) {
      return absl::InvalidArgumentError(absl::StrCat("code: only [0-9A-Za-z] allowed, got ",
                                                     Quote(absl::string_view(&c, 1)), " in ",
                                                     Quote(code)));
    }
  }
  const absl::string_view body = code.substr(0, code.size() - 1);
  if (internal::Base62DigitValue(body[0]) == kReservedLeadDigit) {
    return absl::NotFoundError(
        absl::StrCat("code ", Quote(code), " does not exist (unknown format version)"));
  }
  if (CheckChar(keys, body) != code.back()) {
    return absl::NotFoundError(
        absl::StrCat("code ", Quote(code), " does not exist (bad check character)"));
  }
  const int length = static_cast<int>(body.size());
  const KeyedPermutation& perm = keys.permutations[length - keys.min_body_length];
  return keys.tier_offset[length] + perm.Inverse(internal::FromBase62(body));
}

bool ShortCodec::IsGeneratedShape(absl::string_view code) const {
  if (code.size() < static_cast<size_t>(keys_->min_body_length) + 1 ||
      code.size() > static_cast<size_t>(kMaxBodyLength) + 1) {
    return false;
  }
  for (char c : code) {
    if (internal::Base62DigitValue(c) < 0) return false;
  }
  return true;
}

bool ShortCodec::PassesPrefilter(absl::string_view code) const {
  if (!IsGeneratedShape(code)) return false;
  if (internal::Base62DigitValue(code[0]) == kReservedLeadDigit) return false;
  return CheckChar(*keys_, code.substr(0, code.size() - 1)) == code.back();
}

uint64_t ShortCodec::MaxId() const { return keys_->max_id; }

int ShortCodec::min_body_length() const { return keys_->min_body_length; }

std::string ShortCodec::Fingerprint() const { return keys_->fingerprint_hex; }

}  // namespace shortener::codec
