// PgLinkStore: the contract suite on a private PostgreSQL, plus durability,
// outages, options, revocation NOTIFYs, and the throughput of one 1000-link
// batch.
#include "lib/store/pg/pg_link_store.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "lib/common/store_time.h"
#include "lib/pg/arrays.h"
#include "lib/pg/migrations.h"
#include "lib/pg/notification_listener.h"
#include "lib/pg/pg_error.h"
#include "lib/store/create_planner.h"
#include "tests/lib/store/link_store_contract.h"
#include "tests/lib/store/pg/pg_test_util.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/status_matchers.h"

namespace shortener::store::testing {

std::unique_ptr<LinkStore> NewContractStore() {
  return NewPgStore(shortener::testing::SharedPgCluster().ConnInfo());
}

namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;
using ::shortener::testing::PgCluster;

TEST_CASE("an acknowledged link is committed: a new connection reads it", "[lib/store/pg][pg]") {
  auto store = NewContractStore();
  NewLink link = MakeNewLink(UniqueName("owner"), "https://example.com/durable");
  link.alias = UniqueName("durable");
  link.request_id = "req-durable";
  REQUIRE_THAT(store->CreateLinks({&link, 1})[0], IsOk());
  std::string id = std::to_string(link.id);
  CHECK(CountRows("SELECT count(*) FROM links WHERE id = $1::bigint", id) == 1);
  CHECK(CountRows("SELECT count(*) FROM link_aliases WHERE link_id = $1::bigint", id) == 1);
  CHECK(CountRows("SELECT count(*) FROM shorten_requests WHERE link_id = $1::bigint", id) == 1);
  // A link with an alias is never a dedupe target: it holds no key.
  CHECK(CountRows("SELECT count(*) FROM links WHERE id = $1::bigint AND url_key IS NULL", id) == 1);
}

void CheckAllUnavailable(LinkStore& store, int64_t id) {
  NewLink link = MakeNewLink(UniqueName("owner"), "https://example.com/down");
  auto created = store.CreateLinks({&link, 1});
  CHECK_THAT(created[0], HasCodeAndMessage(absl::StatusCode::kUnavailable, "database"));
  CHECK_FALSE(absl::StrContains(created[0].status().message(), "s3cret-pw"));
  CHECK_THAT(store.GetById(id), HasCode(absl::StatusCode::kUnavailable));
  CHECK_THAT(store.GetByAlias("x"), HasCode(absl::StatusCode::kUnavailable));
  CHECK_THAT(store.GetByIds(std::vector<int64_t>{id}), HasCode(absl::StatusCode::kUnavailable));
  CHECK_THAT(store.Revoke(id, T0(), "code"), HasCode(absl::StatusCode::kUnavailable));
}

TEST_CASE("a stopped database gives UNAVAILABLE and the same store works once it is back",
          "[lib/store/pg][pg]") {
  auto cluster = PgCluster::Start();
  REQUIRE_THAT(cluster, IsOk());
  // trust authentication ignores the password; it must still never show.
  auto store = NewPgStore(absl::StrCat((*cluster)->ConnInfo(), " password=s3cret-pw"));
  NewLink link = MakeNewLink(UniqueName("owner"), "https://example.com/outage");
  REQUIRE_THAT(store->CreateLinks({&link, 1})[0], IsOk());

  REQUIRE_THAT((*cluster)->Stop(), IsOk());
  CheckAllUnavailable(*store, link.id);

  REQUIRE_THAT((*cluster)->Resume(), IsOk());
  CHECK_THAT(store->GetById(link.id), IsOk());
  NewLink after = MakeNewLink(UniqueName("owner"), "https://example.com/after");
  CHECK_THAT(store->CreateLinks({&after, 1})[0], IsOk());

  // A restart nobody saw: idle connections the server closed are dropped
  // before use, so the first call after it already succeeds.
  REQUIRE_THAT((*cluster)->Stop(), IsOk());
  REQUIRE_THAT((*cluster)->Resume(), IsOk());
  CHECK_THAT(store->GetById(after.id), IsOk());
}

TEST_CASE("Revoke NOTIFYs the code on commit and a repeated revoke notifies nothing",
          "[lib/store/pg][pg]") {
  auto store = NewContractStore();
  InvalidationCollector invalidations;
  NewLink link = MakeNewLink(UniqueName("owner"), "https://example.com/notified");
  REQUIRE_THAT(CreateOne(*store, link), IsOk());
  const std::string code = UniqueName("code");
  REQUIRE_THAT(store->Revoke(link.id, T0(), code), IsOk());
  absl::StatusOr<Link> again = store->Revoke(link.id, T0() + absl::Hours(1), code);
  REQUIRE_THAT(again, IsOk());
  CHECK(again->revoke_time == StoreTime(T0()));
  CHECK_THAT(store->Revoke(NextId(), T0(), code), HasCode(absl::StatusCode::kNotFound));
  const std::vector<std::string> payloads = invalidations.Received();
  CHECK(std::count(payloads.begin(), payloads.end(), code) == 1);
  CHECK_THAT(store->Revoke(link.id, T0(), std::string("a\0b", 3)),
             HasCode(absl::StatusCode::kInvalidArgument));
}

TEST_CASE("PgLinkStore::Create rejects bad options without connecting", "[lib/store/pg][pg]") {
  PgLinkStoreOptions options;
  options.conninfo = "host=/nonexistent dbname=x";
  CHECK_THAT(PgLinkStore::Create(options), IsOk());  // lazy: no connection yet
  options.pool_size = 0;
  CHECK_THAT(PgLinkStore::Create(options), HasCode(absl::StatusCode::kInvalidArgument));
  options.pool_size = 2;
  options.max_create_attempts = 0;
  CHECK_THAT(PgLinkStore::Create(options), HasCode(absl::StatusCode::kInvalidArgument));
  options.max_create_attempts = 3;
  options.copy_min_links = 0;
  CHECK_THAT(PgLinkStore::Create(options), HasCode(absl::StatusCode::kInvalidArgument));
  options.copy_min_links = 1;
  options.conninfo = "host=/tmp password=hunter2 garbage";
  auto bad = PgLinkStore::Create(options);
  CHECK_THAT(bad, HasCode(absl::StatusCode::kInvalidArgument));
  CHECK_FALSE(absl::StrContains(bad.status().message(), "hunter2"));
}

constexpr int kBatch = 1000, kBatches = 10;

// The reference (docs/benchmarks.md style: ratios, not absolute rates): one
// plain INSERT ... SELECT unnest of 1000 link-shaped rows per committed
// transaction, into a table with only a bigint primary key.
class ReferenceInsert {
 public:
  ReferenceInsert() : conn_(shortener::testing::SharedPgCluster().ConnInfo()) {
    pqxx::work tx(conn_);
    tx.exec0(
        "CREATE TABLE IF NOT EXISTS bench_reference (id bigint PRIMARY KEY,"
        " long_url text NOT NULL, owner text NOT NULL, create_time timestamptz NOT NULL)");
    tx.commit();
  }
  absl::Duration Run(const std::vector<NewLink>& links) {
    pg::ArrayLiteral ids, urls, owners, times;
    for (const NewLink& l : links) {
      ids.Add(l.id);
      urls.Add(l.long_url);
      owners.Add(l.owner);
      times.AddTime(l.create_time);
    }
    absl::Time start = absl::Now();
    pqxx::work tx(conn_);
    tx.exec_params0(
        "INSERT INTO bench_reference SELECT * FROM unnest($1::bigint[],"
        " $2::text[], $3::text[], $4::timestamptz[])",
        ids.Build(), urls.Build(), owners.Build(), times.Build());
    tx.commit();
    return absl::Now() - start;
  }

 private:
  pqxx::connection conn_;
};

// Creates kBatches batches of 1000 fresh links shaped by `shape`, each right
// after a reference batch (same load for both), and prints both rates.
void MeasureBatches(LinkStore& store, ReferenceInsert& reference, const char* label,
                    void (*shape)(NewLink&, int)) {
  std::string owner = UniqueName("bench");
  auto make_batch = [&](int b) {
    std::vector<NewLink> links;
    for (int i = 0; i < kBatch; ++i) {
      links.push_back(MakeNewLink(
          owner, absl::StrCat("https://example.com/campaign/", b, "/item?id=", i, "&utm=sms")));
      shape(links.back(), b * kBatch + i);
    }
    return links;
  };
  for (const auto& r : store.CreateLinks(make_batch(-1))) REQUIRE_THAT(r, IsOk());  // warm-up
  absl::Duration ours, theirs;
  for (int b = 0; b < kBatches; ++b) {
    std::vector<NewLink> batch = make_batch(b);
    theirs += reference.Run(make_batch(b + 1000));
    absl::Time start = absl::Now();
    for (const auto& r : store.CreateLinks(batch)) REQUIRE_THAT(r, IsOk());
    ours += absl::Now() - start;
  }
  double rate = kBatches * kBatch / absl::ToDoubleSeconds(ours);
  double reference_rate = kBatches * kBatch / absl::ToDoubleSeconds(theirs);
  std::printf(
      "CreateLinks, %d x %d links, %-20s %7.0f links/s (%5.1f ms/batch); reference "
      "INSERT..unnest %7.0f rows/s; ratio %.2f\n",
      kBatches, kBatch, label, rate, absl::ToDoubleMilliseconds(ours) / kBatches, reference_rate,
      rate / reference_rate);
}

// A measurement, not a test: hidden from ctest (Catch2 "[.]" tag); run it with
//   build/release/bin/store_pg_test "[bench]"
TEST_CASE("throughput of CreateLinks with 1000-link batches (printed)",
          "[lib/store/pg][.][bench][pg]") {
  auto store = NewContractStore();
  ReferenceInsert reference;
  MeasureBatches(*store, reference, "dedupe (default):", [](NewLink&, int) {});
  MeasureBatches(*store, reference, "force_new:", [](NewLink& l, int) { l.dedupe = false; });
  MeasureBatches(*store, reference, "dedupe + request_id:", [](NewLink& l, int i) {
    l.request_id = absl::StrCat("req-", i);
  });
}

}  // namespace
}  // namespace shortener::store::testing

namespace shortener::store::testing {
namespace {

using ::shortener::testing::IsOk;
using ::shortener::testing::PgCluster;

// bytea input text of `bytes` (hex form).
std::string ByteaHex(const std::string& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\\x";
  for (char c : bytes) {
    out.push_back(kHex[static_cast<unsigned char>(c) >> 4]);
    out.push_back(kHex[static_cast<unsigned char>(c) & 15]);
  }
  return out;
}

// A dedupe row of the pre-0006 schema, with its link.
void InsertOldDedupe(pqxx::work& tx, const NewLink& link) {
  tx.exec_params0(
      "INSERT INTO links (id, long_url, long_url_sha256, owner, create_time)"
      " VALUES ($1, $2, $3::text::bytea, $4, now())",
      link.id, link.long_url, ByteaHex(link.long_url_sha256), link.owner);
  tx.exec_params0(
      "INSERT INTO link_dedupe (owner, long_url_sha256, link_id) VALUES ($1, $2::text::bytea, $3)",
      link.owner, ByteaHex(link.long_url_sha256), link.id);
}

}  // namespace

TEST_CASE("Migrations 0006 and 0007 carry every dedupe target over and they still dedupe",
          "[lib/store/pg][pg]") {
  auto cluster = PgCluster::Start(/*apply_migrations=*/false);
  REQUIRE_THAT(cluster, IsOk());
  const std::string conninfo = (*cluster)->ConnInfo();
  REQUIRE_THAT(pg::ApplyMigrations(conninfo, /*up_to_version=*/5), IsOk());
  // Owners with non-ASCII text: SQL hashes convert_to(owner, 'UTF8'), the
  // service the UTF-8 bytes. 300 keys give both signs of the bigint.
  std::vector<NewLink> old_links;
  for (int i = 0; i < 300; ++i) {
    const std::string owner = i % 3 == 0 ? "anonymous" : i % 3 == 1 ? "t\xc3\xa9nant" : "acme";
    old_links.push_back(MakeNewLink(owner, absl::StrCat("https://example.com/old/", i)));
  }
  {
    pqxx::connection conn(conninfo);
    pqxx::work tx(conn);
    for (const NewLink& link : old_links) InsertOldDedupe(tx, link);
    tx.commit();
  }
  REQUIRE_THAT(pg::ApplyMigrations(conninfo), IsOk());
  int negative = 0;
  {
    pqxx::connection conn(conninfo);
    pqxx::nontransaction tx(conn);
    for (const NewLink& link : old_links) {
      const int64_t key = DedupeKey(link.owner, link.long_url_sha256);
      negative += key < 0 ? 1 : 0;
      pqxx::result r = tx.exec_params("SELECT id FROM links WHERE url_key = $1", key);
      REQUIRE(r.size() == 1);
      CHECK(r[0][0].as<int64_t>() == link.id);
    }
    CHECK(tx.exec1("SELECT count(*) FROM links WHERE url_key IS NOT NULL")[0].as<size_t>() ==
          old_links.size());
  }
  CHECK(negative > 0);
  CHECK(negative < static_cast<int>(old_links.size()));
  // The service's view: the same (owner, URL) now returns the old link.
  PgLinkStoreOptions options;
  options.conninfo = conninfo;
  auto store = PgLinkStore::Create(options);
  REQUIRE_THAT(store, IsOk());
  for (size_t i = 0; i < old_links.size(); i += 37) {
    NewLink again = MakeNewLink(old_links[i].owner, old_links[i].long_url);
    auto r = CreateOne(**store, again);
    REQUIRE_THAT(r, IsOk());
    CHECK_FALSE(r->created);
    CHECK(r->link.id == old_links[i].id);
  }
}

TEST_CASE("Migration 0007 moves each link_dedupe_keys row onto the link it names",
          "[lib/store/pg][pg]") {
  auto cluster = PgCluster::Start(/*apply_migrations=*/false);
  REQUIRE_THAT(cluster, IsOk());
  const std::string conninfo = (*cluster)->ConnInfo();
  REQUIRE_THAT(pg::ApplyMigrations(conninfo, /*up_to_version=*/6), IsOk());
  // What a 0006 binary leaves: a target with its key, a force_new link
  // without one, and a key whose link is missing.
  NewLink target = MakeNewLink("anonymous", "https://example.com/0007/target");
  NewLink forced = MakeNewLink("anonymous", "https://example.com/0007/forced");
  const int64_t target_key = DedupeKey(target.owner, target.long_url_sha256);
  const int64_t orphan_key = target_key ^ 1;
  {
    pqxx::connection conn(conninfo);
    pqxx::work tx(conn);
    for (const NewLink* link : {&target, &forced}) {
      tx.exec_params0(
          "INSERT INTO links (id, long_url, long_url_sha256, owner, create_time)"
          " VALUES ($1, $2, $3::text::bytea, $4, now())",
          link->id, link->long_url, ByteaHex(link->long_url_sha256), link->owner);
    }
    tx.exec_params0("INSERT INTO link_dedupe_keys (url_key, link_id) VALUES ($1, $2), ($3, $4)",
                    target_key, target.id, orphan_key, int64_t{1} << 60);
    tx.commit();
  }
  REQUIRE_THAT(pg::ApplyMigrations(conninfo), IsOk());
  {
    pqxx::connection conn(conninfo);
    pqxx::nontransaction tx(conn);
    pqxx::result keyed = tx.exec("SELECT id, url_key FROM links WHERE url_key IS NOT NULL");
    REQUIRE(keyed.size() == 1);
    CHECK(keyed[0][0].as<int64_t>() == target.id);
    CHECK(keyed[0][1].as<int64_t>() == target_key);
    // Look-ups by key can use the partial unique index.
    tx.exec0("SET enable_seqscan = off");
    std::string plan;
    for (const pqxx::row& row : tx.exec("EXPLAIN SELECT id FROM links WHERE url_key = 42")) {
      plan += row[0].as<std::string>();
    }
    CHECK_THAT(plan, Catch::Contains("links_url_key"));
  }
  PgLinkStoreOptions options;
  options.conninfo = conninfo;
  auto store = PgLinkStore::Create(options);
  REQUIRE_THAT(store, IsOk());
  auto again = CreateOne(**store, MakeNewLink(target.owner, target.long_url));
  REQUIRE_THAT(again, IsOk());
  CHECK_FALSE(again->created);
  CHECK(again->link.id == target.id);
  auto forced_again = CreateOne(**store, MakeNewLink(forced.owner, forced.long_url));
  REQUIRE_THAT(forced_again, IsOk());
  CHECK(forced_again->created);  // forced held no key: the new link takes it
}

TEST_CASE("A dedupe key collision in the database creates a link of its own and leaves the key",
          "[lib/store/pg][pg]") {
  // Finding two URLs whose keys collide would take ~2^32 hashes, so the
  // collision is staged: the key of (owner, A) is given to a link of URL B
  // made without dedupe (B's own target keeps B's key).
  auto store = NewContractStore();
  const std::string owner = UniqueName("collide");
  NewLink b = MakeNewLink(owner, "https://example.com/collision/b");
  REQUIRE_THAT(CreateOne(*store, b), IsOk());
  NewLink holder = MakeNewLink(owner, b.long_url);
  holder.dedupe = false;
  REQUIRE_THAT(CreateOne(*store, holder), IsOk());
  NewLink a = MakeNewLink(owner, "https://example.com/collision/a");
  const int64_t key_a = DedupeKey(owner, a.long_url_sha256);
  {
    pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
    pqxx::work tx(conn);
    tx.exec_params0("UPDATE links SET url_key = $1 WHERE id = $2", key_a, holder.id);
    tx.commit();
  }
  for (int round = 0; round < 2; ++round) {
    NewLink try_a = MakeNewLink(owner, a.long_url);
    auto r = CreateOne(*store, try_a);
    REQUIRE_THAT(r, IsOk());
    CHECK(r->created);  // never B's link
    CHECK(r->link.id == try_a.id);
    CHECK(r->link.long_url == a.long_url);
  }
  // The key still names B's holder; B still dedupes to its own target.
  {
    pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
    pqxx::nontransaction tx(conn);
    CHECK(tx.exec_params1("SELECT id FROM links WHERE url_key = $1", key_a)[0].as<int64_t>() ==
          holder.id);
  }
  auto b_again = CreateOne(*store, MakeNewLink(owner, b.long_url));
  REQUIRE_THAT(b_again, IsOk());
  CHECK_FALSE(b_again->created);
  CHECK(b_again->link.id == b.id);
}

}  // namespace shortener::store::testing
