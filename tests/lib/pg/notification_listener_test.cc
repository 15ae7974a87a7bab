// NotificationListener on a private PostgreSQL: notifications committed by
// another connection arrive (and only on commit), a restart of the server is
// noticed and followed by a reconnection that reports it, and Stop is prompt.
#include "lib/pg/notification_listener.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/status_matchers.h"

namespace shortener::pg {
namespace {

using shortener::testing::HasCode;
using shortener::testing::IsOk;
using shortener::testing::PgCluster;

// What the callbacks saw (they run on the listener thread; the test reads
// under the lock).
struct Recorder {
  NotificationCallbacks Callbacks() {
    NotificationCallbacks c;
    c.on_notification = [this](const std::string& payload) {
      Add([&] { payloads.push_back(payload); });
    };
    c.on_listening = [this](bool first) { Add([&] { listening.push_back(first); }); };
    c.on_lost = [this](const absl::Status& why) { Add([&] { lost.push_back(why); }); };
    return c;
  }
  template <typename Fn>
  void Add(Fn fn) {
    std::lock_guard<std::mutex> lock(mu);
    fn();
    changed.notify_all();
  }
  // Waits (up to `timeout`) until `pred()` holds, under the lock.
  template <typename Pred>
  bool WaitFor(Pred pred, absl::Duration timeout = absl::Seconds(15)) {
    std::unique_lock<std::mutex> lock(mu);
    return changed.wait_for(lock, absl::ToChronoNanoseconds(timeout), pred);
  }

  std::mutex mu;
  std::condition_variable changed;
  std::vector<std::string> payloads;
  std::vector<bool> listening;
  std::vector<absl::Status> lost;
};

NotificationListenerOptions Options(const PgCluster& cluster, const std::string& channel) {
  NotificationListenerOptions options;
  options.conninfo = cluster.ConnInfo();
  options.channel = channel;
  options.initial_backoff = absl::Milliseconds(50);
  options.max_backoff = absl::Milliseconds(500);
  return options;
}

void Notify(const PgCluster& cluster, const std::string& channel, const std::string& payload) {
  pqxx::connection conn(cluster.ConnInfo());
  pqxx::work tx(conn);
  tx.exec_params("SELECT pg_notify($1, $2)", channel, payload);
  tx.commit();
}

TEST_CASE("the listener gets notifications another connection commits, and only on commit",
          "[lib/pg][pg]") {
  PgCluster& cluster = shortener::testing::SharedPgCluster();
  Recorder rec;
  auto listener = NotificationListener::Start(Options(cluster, "test_commit"), rec.Callbacks());
  REQUIRE_THAT(listener, IsOk());
  REQUIRE((*listener)->WaitUntilListening(absl::Now() + absl::Seconds(10)));
  {
    std::lock_guard<std::mutex> lock(rec.mu);
    CHECK(rec.listening == std::vector<bool>{true});
  }

  pqxx::connection conn(cluster.ConnInfo());
  pqxx::work tx(conn);
  tx.exec_params("SELECT pg_notify($1, $2)", std::string("test_commit"), std::string("Abc1234"));
  tx.exec_params("SELECT pg_notify($1, $2)", std::string("other_channel"), std::string("nope"));
  // Not committed yet: nothing may arrive.
  CHECK_FALSE(rec.WaitFor([&] { return !rec.payloads.empty(); }, absl::Milliseconds(300)));
  absl::Time committed = absl::Now();
  tx.commit();
  REQUIRE(rec.WaitFor([&] { return !rec.payloads.empty(); }));
  CHECK(absl::Now() - committed < absl::Seconds(1));
  Notify(cluster, "test_commit", "alias-2");
  REQUIRE(rec.WaitFor([&] { return rec.payloads.size() >= 2; }));
  std::lock_guard<std::mutex> lock(rec.mu);
  CHECK(rec.payloads == std::vector<std::string>{"Abc1234", "alias-2"});
  CHECK(rec.lost.empty());
}

TEST_CASE("after a server restart the listener reconnects and says it may have missed some",
          "[lib/pg][pg]") {
  auto cluster = PgCluster::Start(/*apply_migrations=*/false);
  REQUIRE_THAT(cluster, IsOk());
  Recorder rec;
  auto listener = NotificationListener::Start(Options(**cluster, "test_restart"), rec.Callbacks());
  REQUIRE_THAT(listener, IsOk());
  REQUIRE((*listener)->WaitUntilListening(absl::Now() + absl::Seconds(10)));

  REQUIRE_THAT((*cluster)->Stop(), IsOk());
  REQUIRE(rec.WaitFor([&] { return !rec.lost.empty(); }));
  // Stay down a while: reconnection attempts fail and back off.
  absl::SleepFor(absl::Milliseconds(700));
  REQUIRE_THAT((*cluster)->Resume(), IsOk());
  REQUIRE(rec.WaitFor([&] { return rec.listening.size() >= 2; }));
  {
    std::lock_guard<std::mutex> lock(rec.mu);
    CHECK(rec.listening == std::vector<bool>{true, false});
    CHECK(rec.lost.size() >= 2);  // the loss, then at least one failed attempt
    for (const absl::Status& why : rec.lost)
      CHECK_THAT(why, HasCode(absl::StatusCode::kUnavailable));
  }
  // And it listens again for real.
  Notify(**cluster, "test_restart", "after-restart");
  REQUIRE(rec.WaitFor([&] { return !rec.payloads.empty(); }));
  std::lock_guard<std::mutex> lock(rec.mu);
  CHECK(rec.payloads == std::vector<std::string>{"after-restart"});
  NotificationListener::Stats stats = (*listener)->GetStats();
  CHECK(stats.connections == 2);
  CHECK(stats.notifications == 1);
}

TEST_CASE("Stop is prompt, whether listening or waiting to reconnect", "[lib/pg][pg]") {
  PgCluster& cluster = shortener::testing::SharedPgCluster();
  Recorder rec;
  auto listening = NotificationListener::Start(Options(cluster, "test_stop"), rec.Callbacks());
  REQUIRE_THAT(listening, IsOk());
  REQUIRE((*listening)->WaitUntilListening(absl::Now() + absl::Seconds(10)));
  absl::Time start = absl::Now();
  (*listening)->Stop();
  CHECK(absl::Now() - start < absl::Seconds(1));

  // A database that is not there: the listener keeps retrying, with backoff.
  NotificationListenerOptions options = Options(cluster, "test_stop");
  options.conninfo = "host=/nonexistent-dir port=1 dbname=x";
  options.max_backoff = absl::Seconds(30);
  Recorder failing;
  auto retrying = NotificationListener::Start(options, failing.Callbacks());
  REQUIRE_THAT(retrying, IsOk());
  REQUIRE(failing.WaitFor([&] { return failing.lost.size() >= 2; }));
  CHECK_FALSE((*retrying)->WaitUntilListening(absl::Now() + absl::Milliseconds(50)));
  start = absl::Now();
  (*retrying)->Stop();
  CHECK(absl::Now() - start < absl::Seconds(1));
  std::lock_guard<std::mutex> lock(failing.mu);
  CHECK(failing.listening.empty());
}

TEST_CASE("NotificationListener::Start rejects bad options", "[lib/pg][pg]") {
  NotificationCallbacks none;
  NotificationListenerOptions options;
  options.conninfo = "host=/tmp dbname=x";
  options.channel = "";
  CHECK_THAT(NotificationListener::Start(options, none),
             HasCode(absl::StatusCode::kInvalidArgument));
  options.channel = "Bad-Name";
  CHECK_THAT(NotificationListener::Start(options, none),
             HasCode(absl::StatusCode::kInvalidArgument));
  options.channel = "ok_name";
  options.poll_interval = absl::ZeroDuration();
  CHECK_THAT(NotificationListener::Start(options, none),
             HasCode(absl::StatusCode::kInvalidArgument));
  options.poll_interval = absl::Milliseconds(100);
  options.conninfo = "host=/tmp password=hunter2 garbage";
  auto bad = NotificationListener::Start(options, none);
  CHECK_THAT(bad, HasCode(absl::StatusCode::kInvalidArgument));
  CHECK_FALSE(absl::StrContains(bad.status().message(), "hunter2"));
}

}  // namespace
}  // namespace shortener::pg
