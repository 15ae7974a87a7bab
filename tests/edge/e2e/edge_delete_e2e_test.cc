// Deleting links end to end (issue 21, item 3): two service replicas on one
// database, an edge on each; a link deleted through one replica, alone or
// in bulk by its label, answers 404 at both edges within a second, and its
// clicks are erased from the database soon after, also those the edges
// still report.
#include <catch2/catch.hpp>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/edge/e2e/edge_fixture.h"

namespace shortener::testing {
namespace {

// Within a second of `since`, both edges answer 404 for `code`.
void ExpectGoneFromBoth(EdgeFixture& f, EdgeProcess& edge_b, const std::string& code,
                        absl::Time since) {
  bool a_gone = false, b_gone = false;
  while (absl::Now() - since < absl::Seconds(1) && !(a_gone && b_gone)) {
    a_gone = a_gone || f.Get("/" + code).status == 404;
    absl::StatusOr<HttpResponse> b = HttpGet(edge_b.port(), "/" + code);
    b_gone = b_gone || (b.ok() && b->status == 404);
    if (!(a_gone && b_gone)) absl::SleepFor(absl::Milliseconds(10));
  }
  INFO(code << " after " << absl::FormatDuration(absl::Now() - since));
  CHECK(a_gone);
  CHECK(b_gone);
}

int64_t Count(const std::string& conninfo, const std::string& sql, int64_t id) {
  pqxx::connection conn(conninfo);
  pqxx::nontransaction tx(conn);
  return tx.exec_params1(sql, id)[0].as<int64_t>();
}

// Every click (human or bot) of the links labelled campaign=gone.
int64_t CampaignClicks(EdgeFixture& f) {
  v1::GetClickStatsRequest request;
  request.set_filter("labels.campaign = \"gone\"");
  v1::GetClickStatsResponse stats;
  grpc::Status status = f.stub->GetClickStats(EdgeFixture::Ctx().get(), request, &stats);
  INFO(status.error_message());
  REQUIRE(status.ok());
  return stats.total_human_clicks() + stats.total_bot_clicks();
}

TEST_CASE("a deleted link answers 404 at the edges of both replicas within a second",
          "[edge/e2e][delete][e2e]") {
  // A long TTL: only the invalidation can make the edges let go.
  EdgeFixture f({"--cache_ttl=10m"});
  EdgeFixture::Replica replica_b = f.StartReplica({"--cache_ttl=10m"});
  EdgeProcess* edge_b = replica_b.edge.get();

  v1::ShortenRequest vanity;
  vanity.set_long_url("https://example.com/vanity");
  vanity.set_custom_alias("delete-me-e2e");
  std::vector<std::string> codes = {f.Shorten("https://example.com/one").code(),
                                    f.Shorten(vanity).code()};
  int64_t vanity_id = 0;
  {
    pqxx::connection conn(f.cluster->ConnInfo());
    pqxx::nontransaction tx(conn);
    vanity_id = tx.exec1("SELECT id FROM links WHERE alias = 'delete-me-e2e'")[0].as<int64_t>();
  }
  std::vector<std::string> campaign;
  for (int i = 0; i < 3; ++i) {
    v1::ShortenRequest request;
    request.set_long_url(absl::StrCat("https://example.com/campaign/", i));
    (*request.mutable_labels())["campaign"] = "gone";
    campaign.push_back(f.Shorten(request).code());
  }
  // Both edges cache every link, and report a click for each.
  for (const auto& list : {codes, campaign}) {
    for (const std::string& code : list) {
      REQUIRE(f.Get("/" + code).status == 302);
      REQUIRE(HttpGet(edge_b->port(), "/" + code)->status == 302);
    }
  }

  // Until the edges' reports of those clicks are counted.
  const absl::Time counted_by = absl::Now() + absl::Seconds(10);
  while (CampaignClicks(f) < 6 && absl::Now() < counted_by) absl::SleepFor(absl::Milliseconds(50));
  REQUIRE(CampaignClicks(f) == 6);

  for (const std::string& code : codes) {
    v1::DeleteLinkRequest request;
    request.set_code(code);
    google::protobuf::Empty empty;
    const absl::Time deleted = absl::Now();
    grpc::Status status = f.stub->DeleteLink(EdgeFixture::Ctx().get(), request, &empty);
    INFO(status.error_message());
    REQUIRE(status.ok());  // through replica A
    ExpectGoneFromBoth(f, *edge_b, code, deleted);
  }
  v1::DeleteLinksRequest bulk;
  bulk.set_filter("labels.campaign = \"gone\"");
  v1::DeleteLinksResponse response;
  const absl::Time deleted = absl::Now();
  grpc::Status status = f.stub->DeleteLinks(EdgeFixture::Ctx().get(), bulk, &response);
  INFO(status.error_message());
  REQUIRE(status.ok());
  CHECK(response.codes_size() == 3);
  CHECK(response.next_page_token().empty());
  for (const std::string& code : campaign) ExpectGoneFromBoth(f, *edge_b, code, deleted);

  // The clicks the edges reported (before and after) are erased within
  // seconds: nothing of the links is left. (deleted_links forgets a
  // generated code's row once it is erased; erased_links keeps the id.)
  codes.insert(codes.end(), campaign.begin(), campaign.end());
  const std::string conninfo = f.cluster->ConnInfo();
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  for (const std::string& code : codes) {
    INFO(code);
    const int64_t id =
        code == "delete-me-e2e" ? vanity_id : static_cast<int64_t>(*f.codec->Decode(code));
    bool erased = false;
    while (!erased && absl::Now() < give_up) {
      erased = Count(conninfo, "SELECT count(*) FROM erased_links WHERE link_id = $1", id) == 1;
      if (!erased) absl::SleepFor(absl::Milliseconds(100));
    }
    INFO(f.service->Log());
    REQUIRE(erased);
  }
  // Edges flush clicks about once a second: any reported late have landed.
  absl::SleepFor(absl::Seconds(2));
  for (const std::string& code : codes) {
    INFO(code);
    const int64_t id =
        code == "delete-me-e2e" ? vanity_id : static_cast<int64_t>(*f.codec->Decode(code));
    CHECK(Count(conninfo, "SELECT count(*) FROM click_counts WHERE link_id = $1", id) == 0);
    CHECK(Count(conninfo, "SELECT count(*) FROM visits WHERE link_id = $1", id) == 0);
    CHECK(Count(conninfo,
                "SELECT count(*) FROM click_rollup_hours WHERE kind = 'l' AND subject = $1",
                id) == 0);
    CHECK(Count(conninfo,
                "SELECT count(*) FROM click_rollup_pending WHERE kind = 'l' AND subject = $1",
                id) == 0);
  }
  // The campaign keeps its clicks (no person's data).
  CHECK(CampaignClicks(f) == 6);
}

}  // namespace
}  // namespace shortener::testing
