#include "lib/idalloc/pg/pg_segment_source.h"

#include <catch2/catch.hpp>
#include <memory>
#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/lib/idalloc/pg/pg_test_util.h"
#include "tests/lib/idalloc/segment_source_contract.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/status_matchers.h"

namespace shortener::idalloc {
namespace {

using shortener::testing::HasCode;
using shortener::testing::IsOk;
using shortener::testing::PgCluster;
using shortener::testing::SharedPgCluster;

TEST_CASE("PgSegmentSource passes the SegmentSource contract", "[lib/idalloc/pg][concurrent][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  REQUIRE_THAT(testing::CreateSequence(conninfo, "contract"), IsOk());
  PgSegmentSource source(conninfo);
  testing::CheckSegmentSourceContract(source, "contract");
}

TEST_CASE("PgSegmentSource leases from the seeded links row and moves next_id",
          "[lib/idalloc/pg][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  REQUIRE_THAT(testing::CreateSequence(conninfo, "moves", 5000), IsOk());
  PgSegmentSource source(conninfo);
  absl::StatusOr<Segment> s = source.Lease("moves", 1000, absl::Now() + absl::Seconds(5));
  REQUIRE_THAT(s, IsOk());
  CHECK(s->begin == 5000);
  CHECK(s->end == 6000);
  CHECK(*testing::NextIdInDatabase(conninfo, "moves") == 6000);
}

TEST_CASE("PgSegmentSource accepts a URI connection string", "[lib/idalloc/pg][pg]") {
  const PgCluster& cluster = SharedPgCluster();
  REQUIRE_THAT(testing::CreateSequence(cluster.ConnInfo(), "uri"), IsOk());
  PgSegmentSource source(absl::StrCat("postgresql:///postgres?host=", cluster.socket_dir(),
                                      "&port=", cluster.port(), "&user=", cluster.user()));
  CHECK_THAT(source.Lease("uri", 10, absl::Now() + absl::Seconds(5)), IsOk());
}

TEST_CASE("PgSegmentSource fails UNAVAILABLE at the deadline when the row stays locked",
          "[lib/idalloc/pg][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  REQUIRE_THAT(testing::CreateSequence(conninfo, "locked"), IsOk());
  PgSegmentSource source(conninfo);
  REQUIRE_THAT(source.Lease("locked", 10, absl::Now() + absl::Seconds(5)), IsOk());

  pqxx::connection blocker_conn(conninfo);
  auto blocker = std::make_unique<pqxx::work>(blocker_conn);
  blocker->exec1("SELECT 1 FROM id_segments WHERE name = 'locked' FOR UPDATE");
  const absl::Time start = absl::Now();
  CHECK_THAT(source.Lease("locked", 10, start + absl::Milliseconds(500)),
             HasCode(absl::StatusCode::kUnavailable));
  const absl::Duration took = absl::Now() - start;
  CHECK(took >= absl::Milliseconds(400));
  CHECK(took < absl::Milliseconds(1500));
  blocker->commit();
  blocker.reset();

  absl::StatusOr<Segment> s = source.Lease("locked", 10, absl::Now() + absl::Seconds(5));
  REQUIRE_THAT(s, IsOk());
  CHECK(s->begin == 11);  // the timed-out lease took nothing
}

TEST_CASE(
    "PgSegmentSource fails fast while the database is stopped and reconnects after it "
    "is back",
    "[lib/idalloc/pg][pg]") {
  absl::StatusOr<std::unique_ptr<PgCluster>> cluster = PgCluster::Start();
  REQUIRE_THAT(cluster, IsOk());
  PgSegmentSource source((*cluster)->ConnInfo());
  absl::StatusOr<Segment> first = source.Lease("links", 100, absl::Now() + absl::Seconds(5));
  REQUIRE_THAT(first, IsOk());

  REQUIRE_THAT((*cluster)->Stop(), IsOk());
  for (int i = 0; i < 2; ++i) {
    const absl::Time start = absl::Now();
    CHECK_THAT(source.Lease("links", 100, start + absl::Seconds(3)),
               HasCode(absl::StatusCode::kUnavailable));
    CHECK(absl::Now() - start < absl::Seconds(1));
  }

  REQUIRE_THAT((*cluster)->Resume(), IsOk());
  absl::StatusOr<Segment> again = source.Lease("links", 100, absl::Now() + absl::Seconds(5));
  REQUIRE_THAT(again, IsOk());
  CHECK(again->begin >= first->end);

  // A restart between two leases: the next lease reconnects, no failure.
  REQUIRE_THAT((*cluster)->Stop(), IsOk());
  REQUIRE_THAT((*cluster)->Resume(), IsOk());
  absl::StatusOr<Segment> after_restart =
      source.Lease("links", 100, absl::Now() + absl::Seconds(5));
  REQUIRE_THAT(after_restart, IsOk());
  CHECK(after_restart->begin >= again->end);
}

}  // namespace
}  // namespace shortener::idalloc
