// Short codes: the mapping between a link's numeric ID and the public code in
// its URL, and the codec secret file. The custom-alias rules are in alias.h.
//
// A version-1 code is `body + check`: the body is the ID's position in its
// length tier put through a keyed permutation (Feistel + HMAC-SHA256 + cycle
// walking) and written as exactly L base62 digits; its first digit is never
// 'z' (reserved as the marker of future format versions). The check character
// is a keyed MAC of the body, so holders of the secret reject ~61/62 of
// made-up codes without a look-up. docs/codes.md describes the format.
//
// Thread safety: a ShortCodec is immutable after Create(); every method is
// const and may be called from any number of threads at once. Copies are
// cheap (the derived key state is shared, read-only) and independent.
// A moved-from ShortCodec may only be destroyed or assigned to.
#ifndef SHORTENER_LIB_CODEC_SHORT_CODEC_H_
#define SHORTENER_LIB_CODEC_SHORT_CODEC_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shortener::codec {

namespace internal {
struct CodecKeys;
}  // namespace internal

struct CodecOptions {
  // Raw key bytes (not hex), at least 32 bytes; see ReadSecretFile(). Must be
  // the same in every replica and edge. No default.
  std::string secret;
  // Shortest body length, 1..10; default 6 (7-character codes). Part of the
  // format: tier offsets depend on it, so it must never change for a
  // deployment (it is mixed into Fingerprint() so a change is refused).
  int min_body_length = 6;
};

class ShortCodec {
 public:
  static constexpr int kMaxBodyLength = 10;
  static constexpr int kFormatVersion = 1;

  // Derives the keys. INVALID_ARGUMENT if the secret is shorter than 32
  // bytes or min_body_length is outside 1..kMaxBodyLength.
  static absl::StatusOr<ShortCodec> Create(const CodecOptions& options);

  // The code of `id`: body (shortest tier that still has room) + check
  // character. OUT_OF_RANGE if id > MaxId().
  absl::StatusOr<std::string> Encode(uint64_t id) const;

  // The ID of `code`. INVALID_ARGUMENT if `code` is not of the generated
  // shape (wrong length or a character outside [0-9A-Za-z]); NOT_FOUND
  // ("code ... does not exist") if the check character is wrong or the
  // version marker is reserved/unknown. Any code that passes the prefilter
  // decodes to some id <= MaxId(); whether that id exists is the store's
  // business.
  absl::StatusOr<uint64_t> Decode(absl::string_view code) const;

  // True iff the length is in [min_body_length + 1, kMaxBodyLength + 1] and
  // every character is in [0-9A-Za-z].
  bool IsGeneratedShape(absl::string_view code) const;

  // True iff `code` has the generated shape, a version-1 marker and a check
  // character that verifies: exactly the codes Decode() accepts. Meant for
  // every request at the edge: no allocation, two SHA-256 compressions.
  bool PassesPrefilter(absl::string_view code) const;

  // Largest encodable id: the capacities of tiers min_body_length..10, summed,
  // minus one.
  uint64_t MaxId() const;

  int min_body_length() const;

  // 64 hex characters: HMAC-SHA256(secret, "v1 fingerprint" + the minimum
  // body length). Identifies the secret and format parameters without
  // revealing the secret; stored in the database (codec_keys) so that a
  // service started with a different secret refuses to run.
  std::string Fingerprint() const;

 private:
  explicit ShortCodec(std::shared_ptr<const internal::CodecKeys> keys);

  std::shared_ptr<const internal::CodecKeys> keys_;
};

// Secret files hold one line of hex (64 characters = 32 random bytes).

// 64 lowercase hex characters from OpenSSL's CSPRNG (RAND_bytes). Aborts the
// process if the CSPRNG fails rather than return a weak secret.
std::string GenerateSecretHex();

// The raw secret bytes from the file at `path` (hex, surrounding whitespace
// ignored). NOT_FOUND if the file does not exist, PERMISSION_DENIED or
// another errno-derived code if it cannot be read, INVALID_ARGUMENT if the
// content is not one line of at least 64 hex characters (even count),
// FAILED_PRECONDITION if other users may write it or it is not a regular
// file (CheckSecretFile, lib/common/private_file.h; readable by them: a
// warning).
absl::StatusOr<std::string> ReadSecretFile(const std::string& path);

// Creates `path` with mode 0600 holding GenerateSecretHex() and a newline,
// flushed to disk. ALREADY_EXISTS if the path exists (O_EXCL: an existing
// secret is never overwritten); errno-derived codes for other failures.
absl::Status WriteNewSecretFile(const std::string& path);

}  // namespace shortener::codec

#endif  // SHORTENER_LIB_CODEC_SHORT_CODEC_H_
