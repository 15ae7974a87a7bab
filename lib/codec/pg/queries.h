// Every SQL statement of the code-secret check (codec_keys.cc), as named
// constants. They run once at startup, so they go through exec_params
// (parameters, never text spliced into SQL) rather than as prepared
// statements, as lib/pg/sql.h explains for lib/pg's own one-off statements.
#ifndef SHORTENER_LIB_CODEC_PG_QUERIES_H_
#define SHORTENER_LIB_CODEC_PG_QUERIES_H_

namespace shortener::codec::pg_queries {

// SQL laid out as SQL, not as C++:
// clang-format off

// Records fingerprint $2 for format version $1 unless one is recorded
// already (then does nothing: the caller compares).
inline constexpr char kRecordCodecFingerprint[] =
    "INSERT INTO codec_keys (format_version, fingerprint) VALUES ($1, $2) "
    "ON CONFLICT (format_version) DO NOTHING";

// The fingerprint recorded for format version $1 (exactly one row after
// kRecordCodecFingerprint in the same transaction).
inline constexpr char kReadCodecFingerprint[] =
    "SELECT fingerprint FROM codec_keys WHERE format_version = $1";

// clang-format on

}  // namespace shortener::codec::pg_queries

#endif  // SHORTENER_LIB_CODEC_PG_QUERIES_H_
