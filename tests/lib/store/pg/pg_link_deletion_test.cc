// PgLinkStore's deletions and bulk revocations beyond the contract: what
// the rows say (deleted_links, link_aliases, history, label memberships)
// and the NOTIFY of every code changed, once, on commit (migration 0014).
#include <algorithm>
#include <catch2/catch.hpp>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "lib/store/link_deletion.h"
#include "tests/lib/store/link_store_contract.h"
#include "tests/lib/store/pg/pg_test_util.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/status_matchers.h"

namespace shortener::store::testing {
namespace {

using ::shortener::testing::IsOk;

int64_t CountById(const std::string& sql, int64_t id) {
  pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
  pqxx::nontransaction tx(conn);
  return tx.exec_params1(sql, id)[0].as<int64_t>();
}

TEST_CASE("DeleteLinks records who deleted what, keeps the alias row and NOTIFYs each code once",
          "[lib/store/pg][delete][pg]") {
  auto store = NewContractStore();
  InvalidationCollector invalidations;
  const std::string owner = UniqueName("pg-deleter");
  NewLink vanity = MakeNewLink(owner, "https://example.com/pg-delete/vanity");
  vanity.alias = UniqueName("pg-doomed");
  vanity.labels = {{"campaign", "pg-gone"}};
  NewLink plain = MakeNewLink(owner, "https://example.com/pg-delete/plain");
  for (const auto& r : Create(*store, {vanity, plain})) REQUIRE_THAT(r, IsOk());
  LinkUpdate change;
  change.id = vanity.id;
  change.code = UniqueName("update");  // its NOTIFY is not the deletion's
  change.actor = "tester (api key 1)";
  change.when = T0() + absl::Minutes(1);
  change.redirect_status = 308;
  REQUIRE_THAT(store->UpdateLink(change), IsOk());
  REQUIRE(CountById("SELECT count(*) FROM link_label_members WHERE link_id = $1", vanity.id) == 1);

  LinkDeletion deletion;
  const std::string plain_code = UniqueName("plain-code");
  deletion.links = {LinkRef{vanity.id, *vanity.alias}, LinkRef{plain.id, plain_code}};
  deletion.when = T0() + absl::Hours(1);
  deletion.actor = "cleaner (api key 9)";
  deletion.alias_release_time = T0() + absl::Hours(25);
  REQUIRE_THAT(store->DeleteLinks(deletion), IsOk());
  REQUIRE_THAT(store->DeleteLinks(deletion), IsOk());  // nothing left: no second NOTIFY

  pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
  pqxx::nontransaction tx(conn);
  pqxx::row row = tx.exec_params1(
      "SELECT owner, code, alias, actor, (extract(epoch FROM delete_time) * 1000000)::bigint,"
      " (extract(epoch FROM alias_release_time) * 1000000)::bigint, erase_time IS NULL"
      " FROM deleted_links WHERE id = $1",
      vanity.id);
  CHECK(row[0].as<std::string>() == owner);
  CHECK(row[1].as<std::string>() == *vanity.alias);
  CHECK(row[2].as<std::string>() == *vanity.alias);
  CHECK(row[3].as<std::string>() == "cleaner (api key 9)");
  CHECK(row[4].as<int64_t>() == absl::ToUnixMicros(T0() + absl::Hours(1)));
  CHECK(row[5].as<int64_t>() == absl::ToUnixMicros(T0() + absl::Hours(25)));
  CHECK(row[6].as<bool>());
  // A generated code holds nothing: no release time.
  row = tx.exec_params1(
      "SELECT code, alias IS NULL, alias_release_time IS NULL"
      " FROM deleted_links WHERE id = $1",
      plain.id);
  CHECK(row[0].as<std::string>() == plain_code);
  CHECK(row[1].as<bool>());
  CHECK(row[2].as<bool>());
  CHECK(tx.exec_params1("SELECT link_id FROM link_aliases WHERE alias = $1", *vanity.alias)[0]
            .as<int64_t>() == vanity.id);
  CHECK(CountById("SELECT count(*) FROM link_history WHERE link_id = $1", vanity.id) == 0);
  CHECK(CountById("SELECT count(*) FROM link_label_members WHERE link_id = $1", vanity.id) == 0);

  const std::vector<std::string> payloads = invalidations.Received();
  CHECK(std::count(payloads.begin(), payloads.end(), *vanity.alias) == 1);
  CHECK(std::count(payloads.begin(), payloads.end(), plain_code) == 1);
}

TEST_CASE("RevokeLinks NOTIFYs the codes of the links it revoked, once",
          "[lib/store/pg][delete][pg]") {
  auto store = NewContractStore();
  InvalidationCollector invalidations;
  const std::string owner = UniqueName("pg-revoker");
  NewLink live = MakeNewLink(owner, "https://example.com/pg-revoke/live");
  NewLink revoked = MakeNewLink(owner, "https://example.com/pg-revoke/revoked");
  for (const auto& r : Create(*store, {live, revoked})) REQUIRE_THAT(r, IsOk());
  const std::string revoked_code = UniqueName("earlier");
  REQUIRE_THAT(store->Revoke(revoked.id, T0(), revoked_code), IsOk());
  const std::string live_code = UniqueName("bulk");
  const std::vector<LinkRef> refs = {LinkRef{live.id, live_code},
                                     LinkRef{revoked.id, revoked_code}};
  REQUIRE_THAT(store->RevokeLinks(refs, T0() + absl::Hours(1)), IsOk());
  REQUIRE_THAT(store->RevokeLinks(refs, T0() + absl::Hours(2)), IsOk());
  const std::vector<std::string> payloads = invalidations.Received();
  CHECK(std::count(payloads.begin(), payloads.end(), live_code) == 1);
  CHECK(std::count(payloads.begin(), payloads.end(), revoked_code) == 1);  // its own Revoke's
}

}  // namespace
}  // namespace shortener::store::testing
