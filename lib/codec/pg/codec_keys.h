// Guards against starting a service with the wrong code secret: the first
// start records the secret's fingerprint (ShortCodec::Fingerprint) per
// format version in the codec_keys table; every later start must present
// the same fingerprint. Thread-safe (each call opens its own connection).
#ifndef SHORTENER_LIB_CODEC_PG_CODEC_KEYS_H_
#define SHORTENER_LIB_CODEC_PG_CODEC_KEYS_H_

#include <string>

#include "absl/status/status.h"

namespace shortener::codec {

// Records `fingerprint` for `format_version` if none is stored, else compares.
// FAILED_PRECONDITION when a different fingerprint is stored (the message says
// existing links would resolve to other targets and how to fix it);
// UNAVAILABLE when the database is unreachable.
absl::Status VerifyOrRecordCodecFingerprint(const std::string& conninfo, int format_version,
                                            const std::string& fingerprint);

}  // namespace shortener::codec

#endif  // SHORTENER_LIB_CODEC_PG_CODEC_KEYS_H_
