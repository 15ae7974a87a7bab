// PgApiKeyStore on a private PostgreSQL: the contract suite
// (tests/lib/auth/api_key_store_contract.*), plus what only the database has:
// the NULL tenant column of infrastructure keys, revocation NOTIFYs, that no
// plaintext key ever reaches the api_keys table, the table's CHECK
// constraints, migration 0008's conversion of existing keys, and outages.
#include "lib/auth/pg/pg_api_key_store.h"

#include <catch2/catch.hpp>
#include <memory>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/auth/api_key.h"
#include "lib/pg/migrations.h"
#include "tests/lib/auth/api_key_store_contract.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/status_matchers.h"

namespace shortener::auth::testing {
namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;
using ::shortener::testing::PgCluster;
using ::shortener::testing::SharedPgCluster;

std::unique_ptr<PgApiKeyStore> NewStore(const std::string& conninfo) {
  PgApiKeyStoreOptions options;
  options.conninfo = conninfo;
  auto store = PgApiKeyStore::Create(options);
  REQUIRE_THAT(store, IsOk());
  return std::move(store).value();
}

}  // namespace

std::unique_ptr<ApiKeyStore> NewContractStore() { return NewStore(SharedPgCluster().ConnInfo()); }

namespace {

TEST_CASE("an infrastructure key's tenant column is NULL", "[lib/auth/pg][pg]") {
  auto store = NewStore(SharedPgCluster().ConnInfo());
  NewApiKey key = MakeKey("edge-us-1");
  key.tenant.clear();
  key.infrastructure = true;
  key.scopes = ScopeSet{Scope::kResolve};
  auto created = store->Create(key);
  REQUIRE_THAT(created, IsOk());
  auto tenant_key = store->Create(MakeKey("tenant key with a column"));
  REQUIRE_THAT(tenant_key, IsOk());
  pqxx::connection conn(SharedPgCluster().ConnInfo());
  pqxx::nontransaction tx(conn);
  const char* kIsNull = "SELECT tenant IS NULL FROM api_keys WHERE id = $1";
  CHECK(tx.exec_params1(kIsNull, created->id)[0].as<bool>());
  CHECK_FALSE(tx.exec_params1(kIsNull, tenant_key->id)[0].as<bool>());
}

TEST_CASE("revoking a key notifies key:<hash> on the invalidation channel on commit",
          "[lib/auth/pg][pg]") {
  PgApiKeyStoreOptions options;
  options.conninfo = SharedPgCluster().ConnInfo();
  options.invalidation_channel = "test_key_revocations";
  auto store = PgApiKeyStore::Create(options);
  REQUIRE_THAT(store, IsOk());
  NewApiKey key = MakeKey("notified");
  auto created = (*store)->Create(key);
  REQUIRE_THAT(created, IsOk());

  pqxx::connection listener(SharedPgCluster().ConnInfo());
  std::vector<std::string> payloads;
  // Constructing the receiver LISTENs (libpqxx 6.4).
  struct Collector final : pqxx::notification_receiver {
    Collector(pqxx::connection& c, std::vector<std::string>* out)
        : pqxx::notification_receiver(c, "test_key_revocations"), out_(out) {}
    void operator()(const std::string& payload, int) override { out_->push_back(payload); }
    std::vector<std::string>* out_;
  } collector(listener, &payloads);
  REQUIRE_THAT((*store)->Revoke(created->id, kT1), IsOk());
  for (int i = 0; i < 50 && payloads.empty(); ++i) listener.await_notification(0, 100000);
  REQUIRE(payloads.size() == 1);
  CHECK(payloads[0] == "key:" + key.key_hash);
  // Again on a repeat: a replica that missed the first one catches up.
  REQUIRE_THAT((*store)->Revoke(created->id, kT2), IsOk());
  for (int i = 0; i < 50 && payloads.size() < 2; ++i) listener.await_notification(0, 100000);
  CHECK(payloads.size() == 2);
}

TEST_CASE("the api_keys table never holds a plaintext key or a piece of one", "[lib/auth/pg][pg]") {
  auto store = NewStore(SharedPgCluster().ConnInfo());
  const std::string plaintext = GenerateApiKey();
  NewApiKey key = MakeKey("secret scan");
  key.key_hash = HashApiKey(plaintext);
  REQUIRE_THAT(store->Create(key), IsOk());

  // Every column of every row, as PostgreSQL prints it.
  pqxx::connection conn(SharedPgCluster().ConnInfo());
  pqxx::nontransaction tx(conn);
  std::vector<std::string> rows;
  for (const pqxx::row& row : tx.exec("SELECT k::text FROM api_keys k")) {
    rows.push_back(row[0].as<std::string>());
  }
  REQUIRE(!rows.empty());
  bool hash_seen = false;
  for (const std::string& row : rows) {
    if (absl::StrContains(row, key.key_hash)) hash_seen = true;  // the read sees our row
  }
  CHECK(hash_seen);

  const std::string random_part = plaintext.substr(kApiKeyPrefix.size());
  REQUIRE(random_part.size() == kApiKeyRandomChars);
  for (const std::string& row : rows) {
    INFO("row: " << row);
    CHECK_FALSE(absl::StrContains(row, plaintext));
    for (size_t i = 0; i + 16 <= random_part.size(); ++i) {
      CHECK_FALSE(absl::StrContains(row, random_part.substr(i, 16)));
    }
  }
}

// Inserts a row directly, bypassing the store's own checks.
void InsertRaw(const std::string& hash, const std::string& name, const char* rate) {
  pqxx::connection conn(SharedPgCluster().ConnInfo());
  pqxx::nontransaction tx(conn);
  tx.exec_params(
      "INSERT INTO api_keys (key_hash, name, tenant, scopes, rate_per_second) "
      "VALUES ($1, $2, 't', 'shorten', $3::double precision)",
      hash, name, rate);
}

TEST_CASE("the api_keys CHECK constraints refuse what the store would", "[lib/auth/pg][pg]") {
  std::string good = HashApiKey(GenerateApiKey());
  CHECK_THROWS_AS(InsertRaw(std::string(64, 'A'), "n", nullptr), pqxx::check_violation);
  CHECK_THROWS_AS(InsertRaw(good.substr(1), "n", nullptr), pqxx::check_violation);
  CHECK_THROWS_AS(InsertRaw(good + "0", "n", nullptr), pqxx::check_violation);
  CHECK_THROWS_AS(InsertRaw("shk_" + good.substr(4), "n", nullptr), pqxx::check_violation);
  CHECK_THROWS_AS(InsertRaw(good, "", nullptr), pqxx::check_violation);
  CHECK_THROWS_AS(InsertRaw(good, "n", "0"), pqxx::check_violation);
  CHECK_THROWS_AS(InsertRaw(good, "n", "-1.5"), pqxx::check_violation);
  // The same row with valid values goes in.
  CHECK_NOTHROW(InsertRaw(good, "n", "2.5"));
}

// Inserts a key with `tenant` (nullptr: NULL) and `scopes` directly.
void InsertRawKey(const char* tenant, const std::string& scopes) {
  pqxx::connection conn(SharedPgCluster().ConnInfo());
  pqxx::nontransaction tx(conn);
  tx.exec_params("INSERT INTO api_keys (key_hash, name, tenant, scopes) VALUES ($1, 'raw', $2, $3)",
                 HashApiKey(GenerateApiKey()), tenant, scopes);
}

TEST_CASE("the api_keys CHECK constraints keep infrastructure scopes off tenant keys",
          "[lib/auth/pg][pg]") {
  // A tenant key with an infrastructure scope, however spelled in the list.
  for (const std::string scopes :
       {"record_clicks", "record_clicks,resolve", "resolve,watch_invalidations",
        "admin,record_clicks", "shorten,watch_invalidations", "watch_invalidations"}) {
    INFO(scopes);
    CHECK_THROWS_AS(InsertRawKey("acme", scopes), pqxx::check_violation);
  }
  // An infrastructure key (no tenant) with a tenant's scope.
  for (const std::string scopes : {"admin", "resolve,shorten", "record_clicks,stats", "revoke"}) {
    INFO(scopes);
    CHECK_THROWS_AS(InsertRawKey(nullptr, scopes), pqxx::check_violation);
  }
  // Names that merely contain an infrastructure scope's are not one.
  CHECK_NOTHROW(InsertRawKey("acme", "resolve,shorten"));
  CHECK_NOTHROW(InsertRawKey(nullptr, "record_clicks,resolve,watch_invalidations"));
  CHECK_NOTHROW(InsertRawKey(nullptr, "resolve"));
  CHECK_THROWS_AS(InsertRawKey("", "resolve"), pqxx::check_violation);
}

TEST_CASE(
    "migration 0008 turns edge keys into infrastructure keys and strips record_clicks "
    "from tenant keys",
    "[lib/auth/pg][pg]") {
  auto cluster = PgCluster::Start(/*apply_migrations=*/false);
  REQUIRE_THAT(cluster, IsOk());
  const std::string conninfo = (*cluster)->ConnInfo();
  REQUIRE_THAT(pg::ApplyMigrations(conninfo, /*up_to_version=*/7), IsOk());
  struct Before {
    std::string name;
    std::string tenant;
    std::string scopes;
    // After 0008: NULL tenant (infrastructure) and these scopes.
    bool infrastructure;
    std::string scopes_after;
  };
  const std::vector<Before> keys = {
      // What run.sh and the docs made for edges.
      {"edge", "edge", "record_clicks,resolve", true, "record_clicks,resolve,watch_invalidations"},
      {"clicks-only", "clicks-only", "record_clicks", true, "record_clicks"},
      // Tenant keys that held record_clicks among tenant scopes lose it.
      {"tenant-all", "acme", "record_clicks,resolve,revoke,shorten,stats", false,
       "resolve,revoke,shorten,stats"},
      {"admin-clicks", "admin", "admin,record_clicks", false, "admin"},
      {"shorten-clicks", "acme", "record_clicks,shorten", false, "shorten"},
      // Untouched: resolve-only keys stay tenant keys (no watch_invalidations).
      {"resolver", "acme", "resolve", false, "resolve"},
      {"bootstrap-admin", "admin", "admin", false, "admin"},
      {"campaigns", "acme", "shorten,stats", false, "shorten,stats"},
  };
  {
    pqxx::connection conn(conninfo);
    pqxx::work tx(conn);
    for (const Before& k : keys) {
      tx.exec_params(
          "INSERT INTO api_keys (key_hash, name, tenant, scopes) VALUES ($1, $2, $3, $4)",
          HashApiKey(GenerateApiKey()), k.name, k.tenant, k.scopes);
    }
    tx.commit();
  }
  REQUIRE_THAT(pg::ApplyMigrations(conninfo), IsOk());
  auto store = NewStore(conninfo);
  auto listed = store->List();
  REQUIRE_THAT(listed, IsOk());
  REQUIRE(listed->size() == keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const ApiKeyRecord& after = (*listed)[i];
    INFO(keys[i].name);
    CHECK(after.name == keys[i].name);
    CHECK(after.infrastructure == keys[i].infrastructure);
    CHECK(after.tenant == (keys[i].infrastructure ? "" : keys[i].tenant));
    CHECK(after.scopes.ToString() == keys[i].scopes_after);
    // Every converted key passes the rule the service enforces from now on.
    CHECK_THAT(ValidateKeyScopes(after.scopes, after.infrastructure), IsOk());
  }
}

TEST_CASE("a stopped database gives UNAVAILABLE and the same store works once it is back",
          "[lib/auth/pg][pg]") {
  auto cluster = PgCluster::Start();
  REQUIRE_THAT(cluster, IsOk());
  auto store = NewStore(absl::StrCat((*cluster)->ConnInfo(), " password=s3cret-pw"));
  NewApiKey key = MakeKey("outage");
  auto created = store->Create(key);
  REQUIRE_THAT(created, IsOk());

  REQUIRE_THAT((*cluster)->Stop(), IsOk());
  auto failed = store->Create(MakeKey("down"));
  CHECK_THAT(failed, HasCodeAndMessage(absl::StatusCode::kUnavailable, "database"));
  CHECK_FALSE(absl::StrContains(failed.status().message(), "s3cret-pw"));
  CHECK_THAT(store->FindByHash(key.key_hash), HasCode(absl::StatusCode::kUnavailable));
  CHECK_THAT(store->List(), HasCode(absl::StatusCode::kUnavailable));
  CHECK_THAT(store->Revoke(created->id, kT1), HasCode(absl::StatusCode::kUnavailable));

  REQUIRE_THAT((*cluster)->Resume(), IsOk());
  CHECK_THAT(store->FindByHash(key.key_hash), IsOk());
  CHECK_THAT(store->Revoke(created->id, kT1), IsOk());
}

}  // namespace
}  // namespace shortener::auth::testing
