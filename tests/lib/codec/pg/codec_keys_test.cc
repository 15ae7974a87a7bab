// The code-secret check on a private PostgreSQL: the first fingerprint per
// format version is recorded, a different one is refused, an unreachable
// database is UNAVAILABLE.
#include "lib/codec/pg/codec_keys.h"

#include <catch2/catch.hpp>
#include <string>

#include "lib/codec/short_codec.h"
#include "tests/lib/codec/codec_test_util.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/status_matchers.h"

namespace shortener::codec {
namespace {

using shortener::codec::testing::MakeCodec;
using shortener::testing::HasCode;
using shortener::testing::HasCodeAndMessage;
using shortener::testing::IsOk;
using shortener::testing::PgCluster;

TEST_CASE("The code secret fingerprint is recorded once and then enforced", "[lib/codec/pg][pg]") {
  auto cluster = PgCluster::Start();
  REQUIRE_THAT(cluster, IsOk());
  const std::string conninfo = (*cluster)->ConnInfo();
  CHECK_THAT(VerifyOrRecordCodecFingerprint(conninfo, 1, "aaaa"), IsOk());
  CHECK_THAT(VerifyOrRecordCodecFingerprint(conninfo, 1, "aaaa"), IsOk());
  CHECK_THAT(VerifyOrRecordCodecFingerprint(conninfo, 1, "bbbb"),
             HasCodeAndMessage(absl::StatusCode::kFailedPrecondition, "code secret mismatch"));
  CHECK_THAT(VerifyOrRecordCodecFingerprint(conninfo, 2, "bbbb"), IsOk());
}

TEST_CASE("another secret or minimum code length is refused with both fingerprints named",
          "[lib/codec/pg][pg]") {
  auto cluster = PgCluster::Start();
  REQUIRE_THAT(cluster, IsOk());
  const std::string conninfo = (*cluster)->ConnInfo();
  const std::string first = MakeCodec(6, 'a').Fingerprint();
  CHECK_THAT(VerifyOrRecordCodecFingerprint(conninfo, ShortCodec::kFormatVersion, first), IsOk());
  for (const std::string& other :
       {MakeCodec(6, 'b').Fingerprint(), MakeCodec(7, 'a').Fingerprint()}) {
    const absl::Status refused =
        VerifyOrRecordCodecFingerprint(conninfo, ShortCodec::kFormatVersion, other);
    CHECK_THAT(refused, HasCodeAndMessage(absl::StatusCode::kFailedPrecondition, first));
    CHECK_THAT(refused, HasCodeAndMessage(absl::StatusCode::kFailedPrecondition, other));
  }
}

TEST_CASE("an unreachable database is UNAVAILABLE", "[lib/codec/pg][pg]") {
  CHECK_THAT(VerifyOrRecordCodecFingerprint(
                 "host=/nonexistent-dir port=1 dbname=x connect_timeout=2", 1, "aaaa"),
             HasCode(absl::StatusCode::kUnavailable));
}

}  // namespace
}  // namespace shortener::codec
