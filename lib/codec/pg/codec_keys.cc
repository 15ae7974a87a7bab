#include "lib/codec/pg/codec_keys.h"

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "lib/codec/pg/queries.h"
#include "lib/pg/pg_error.h"

namespace shortener::codec {

absl::Status VerifyOrRecordCodecFingerprint(const std::string& conninfo, int format_version,
                                            const std::string& fingerprint) {
  try {
    pqxx::connection conn(conninfo);
    pqxx::work tx(conn);
    tx.exec_params0(pg_queries::kRecordCodecFingerprint, format_version, fingerprint);
    pqxx::row stored = tx.exec_params1(pg_queries::kReadCodecFingerprint, format_version);
    tx.commit();
    std::string stored_fp = stored[0].as<std::string>();
    if (stored_fp != fingerprint) {
      return absl::FailedPreconditionError(absl::StrCat(
          "code secret mismatch: this database was created with a code secret and "
          "--min_code_length whose fingerprint is ",
          stored_fp, " but the configured ones give ", fingerprint,
          "; with them every existing code would resolve to a different link. "
          "Restore the original secret file and --min_code_length (see docs/codes.md)"));
    }
    return absl::OkStatus();
  } catch (...) {
    return pg::StatusFromCurrentException("verify code secret");
  }
}

}  // namespace shortener::codec
