// Click limits in PgClickStore::Record on a real PostgreSQL: the batch that
// brings a link's human total to links.max_clicks marks it exhausted and
// NOTIFYs its code in the same transaction; bots, other links, revoked links
// and replayed batches never do; of many concurrent batches exactly one
// marks it.
#include <catch2/catch.hpp>
#include <cstdint>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/clicks/clicks.h"
#include "lib/clicks/pg/pg_click_store.h"
#include "tests/lib/clicks/pg/pg_click_test_util.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/status_matchers.h"

namespace shortener::clicks {
namespace {

using shortener::testing::HasCode;
using shortener::testing::IsOk;
using shortener::testing::SharedPgCluster;

const absl::Time kHour = absl::FromUnixSeconds(1'900'000'800);  // 2030-03-17T16:00:00Z

// A links row with a budget (0: none) and an optional alias.
void InsertLink(int64_t id, int64_t max_clicks, const std::string& alias = "") {
  pqxx::connection conn(SharedPgCluster().ConnInfo());
  pqxx::nontransaction tx(conn);
  tx.exec_params(
      "INSERT INTO links (id, alias, long_url, long_url_sha256, owner, create_time, max_clicks)"
      " VALUES ($1, NULLIF($2, ''), 'https://example.com/', sha256('x'), 'anonymous', now(),"
      "         NULLIF($3, 0))",
      id, alias, max_clicks);
}

// Whether the link is marked exhausted, read over a fresh connection.
bool Exhausted(int64_t id) {
  pqxx::connection conn(SharedPgCluster().ConnInfo());
  pqxx::nontransaction tx(conn);
  return !tx.exec_params1("SELECT clicks_exhausted_time FROM links WHERE id = $1", id)[0].is_null();
}

std::vector<ClickRow> Clicks(int64_t link_id, int n, bool bot = false, absl::Time hour = kHour) {
  std::vector<ClickRow> rows;
  for (int i = 0; i < n; ++i) {
    ClickRow r;
    r.link_id = link_id;
    r.time = hour + absl::Seconds(i);
    r.bot = bot;
    r.client_id = ClientId("192.0.2.7", "Mozilla/5.0");
    r.browser = bot ? "Googlebot" : "Chrome";
    r.os = "Android";
    r.device = bot ? "bot" : "mobile";
    rows.push_back(r);
  }
  return rows;
}

// Collects the NOTIFY payloads of one channel (LISTENs on construction).
class Listener {
 public:
  explicit Listener(const std::string& channel)
      : conn_(SharedPgCluster().ConnInfo()), receiver_(conn_, channel, &payloads_) {}

  // Waits up to `wait` for at least `n` payloads; returns all received so far.
  const std::vector<std::string>& AwaitAtLeast(size_t n, absl::Duration wait = absl::Seconds(5)) {
    absl::Time until = absl::Now() + wait;
    while (payloads_.size() < n && absl::Now() < until) conn_.await_notification(0, 50'000);
    return payloads_;
  }
  // Whatever arrived within `wait` (for asserting that nothing more did).
  const std::vector<std::string>& Drain(absl::Duration wait = absl::Milliseconds(500)) {
    absl::Time until = absl::Now() + wait;
    while (absl::Now() < until) conn_.await_notification(0, 50'000);
    return payloads_;
  }

 private:
  struct Receiver final : pqxx::notification_receiver {
    Receiver(pqxx::connection& c, const std::string& channel, std::vector<std::string>* out)
        : pqxx::notification_receiver(c, channel), out_(out) {}
    void operator()(const std::string& payload, int) override { out_->push_back(payload); }
    std::vector<std::string>* out_;
  };
  std::vector<std::string> payloads_;
  pqxx::connection conn_;
  Receiver receiver_;
};

TEST_CASE("the batch that reaches max_clicks exhausts the link and notifies its code once",
          "[lib/clicks/pg][limits][pg]") {
  const std::string channel = "limits_once";
  auto store = NewTestClickStore(SharedPgCluster().ConnInfo(), channel);
  Listener listener(channel);
  InsertLink(91001, 5);

  auto first = store->Record("limit-a", Clicks(91001, 3), true);
  REQUIRE_THAT(first, IsOk());
  CHECK(first->exhausted.empty());
  // Bots never spend the budget.
  auto bots = store->Record("limit-b", Clicks(91001, 10, /*bot=*/true), true);
  REQUIRE_THAT(bots, IsOk());
  CHECK(bots->exhausted.empty());
  CHECK_FALSE(Exhausted(91001));
  CHECK(listener.Drain().empty());

  // 3 + 2 = 5: this batch crosses.
  auto crossing = store->Record("limit-c", Clicks(91001, 2), true);
  REQUIRE_THAT(crossing, IsOk());
  CHECK(crossing->exhausted == std::vector<int64_t>{91001});
  CHECK(Exhausted(91001));
  CHECK(listener.AwaitAtLeast(1) == std::vector<std::string>{TestGeneratedCode(91001)});

  // Later clicks (in flight when it crossed) are still counted, but the link
  // is marked and announced only once; a replayed batch changes nothing.
  auto later = store->Record("limit-d", Clicks(91001, 4), true);
  REQUIRE_THAT(later, IsOk());
  CHECK(later->counted == 4);
  CHECK(later->exhausted.empty());
  auto replay = store->Record("limit-c", Clicks(91001, 2), true);
  REQUIRE_THAT(replay, IsOk());
  CHECK(replay->duplicate);
  CHECK(replay->exhausted.empty());
  CHECK(listener.Drain().size() == 1);
}

TEST_CASE("a batch overshooting the budget exhausts the link and an alias is notified as itself",
          "[lib/clicks/pg][limits][pg]") {
  const std::string channel = "limits_alias";
  auto store = NewTestClickStore(SharedPgCluster().ConnInfo(), channel);
  Listener listener(channel);
  InsertLink(91101, 1, "spring-sale");
  InsertLink(91102, 0);    // no budget
  InsertLink(91103, 100);  // budget far away
  std::vector<ClickRow> rows = Clicks(91101, 3);
  for (const ClickRow& r : Clicks(91102, 50)) rows.push_back(r);
  for (const ClickRow& r : Clicks(91103, 50)) rows.push_back(r);
  auto outcome = store->Record("limit-alias", rows, false);
  REQUIRE_THAT(outcome, IsOk());
  CHECK(outcome->exhausted == std::vector<int64_t>{91101});
  CHECK(listener.AwaitAtLeast(1) == std::vector<std::string>{"spring-sale"});
  CHECK_FALSE(Exhausted(91102));
  CHECK_FALSE(Exhausted(91103));
}

TEST_CASE("a revoked link is not exhausted", "[lib/clicks/pg][limits][pg]") {
  auto store = NewTestClickStore(SharedPgCluster().ConnInfo());
  InsertLink(91201, 2);
  {
    pqxx::connection conn(SharedPgCluster().ConnInfo());
    pqxx::nontransaction tx(conn);
    tx.exec("UPDATE links SET revoke_time = now() WHERE id = 91201");
  }
  auto outcome = store->Record("limit-revoked", Clicks(91201, 5), true);
  REQUIRE_THAT(outcome, IsOk());
  CHECK(outcome->exhausted.empty());
  CHECK_FALSE(Exhausted(91201));
}

TEST_CASE("a store without a code function or channel is refused", "[lib/clicks/pg][limits][pg]") {
  PgClickStoreOptions options;
  options.conninfo = SharedPgCluster().ConnInfo();
  auto no_code = PgClickStore::Create(options);
  CHECK_THAT(no_code.status(), HasCode(absl::StatusCode::kInvalidArgument));
  CHECK(absl::StrContains(no_code.status().message(), "generated_code"));
  options.generated_code = [](int64_t id) -> absl::StatusOr<std::string> {
    return TestGeneratedCode(id);
  };
  options.invalidation_channel = "";
  auto no_channel = PgClickStore::Create(options);
  CHECK_THAT(no_channel.status(), HasCode(absl::StatusCode::kInvalidArgument));
  CHECK(absl::StrContains(no_channel.status().message(), "invalidation_channel"));
}

TEST_CASE("of many concurrent batches exactly one exhausts the link",
          "[lib/clicks/pg][limits][concurrent][pg]") {
  const std::string channel = "limits_race";
  auto store = NewTestClickStore(SharedPgCluster().ConnInfo(), channel);
  Listener listener(channel);
  constexpr int64_t kLink = 91301;
  constexpr int kThreads = 8, kBatchesPerThread = 10, kClicksPerBatch = 3;
  // The budget is every click of the run: only the very last batches can
  // cross it, concurrently. Should two of them each miss the other's count,
  // nobody would mark the link (and no later click would ever come to fix
  // it).
  InsertLink(kLink, kThreads * kBatchesPerThread * kClicksPerBatch);
  std::vector<int> marked(kThreads, 0);
  std::vector<int> failed(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatchesPerThread; ++b) {
        // Each thread its own hour: the batches share no click_counts row,
        // so nothing but the links row lock orders them.
        auto outcome =
            store->Record(absl::StrCat("race-", t, "-", b),
                          Clicks(kLink, kClicksPerBatch, false, kHour + absl::Hours(t)), false);
        if (!outcome.ok()) {
          ++failed[t];
        } else {
          marked[t] += static_cast<int>(outcome->exhausted.size());
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  int total_marked = 0, total_failed = 0;
  for (int t = 0; t < kThreads; ++t) {
    total_marked += marked[t];
    total_failed += failed[t];
  }
  CHECK(total_failed == 0);
  CHECK(total_marked == 1);
  CHECK(Exhausted(kLink));
  CHECK(listener.AwaitAtLeast(1).size() == 1);
  CHECK(listener.Drain().size() == 1);
}

}  // namespace
}  // namespace shortener::clicks
