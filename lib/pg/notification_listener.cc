#include "lib/pg/notification_listener.h"

#include <algorithm>
#include <pqxx/pqxx>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/pg/connection_pool.h"
#include "lib/pg/pg_error.h"

namespace shortener::pg {
namespace {

// Hands each notification of its channel to `deliver`.
class Receiver final : public pqxx::notification_receiver {
 public:
  Receiver(pqxx::connection_base& conn, const std::string& channel,
           std::function<void(const std::string&)> deliver)
      : pqxx::notification_receiver(conn, channel), deliver_(std::move(deliver)) {}
  void operator()(const std::string& payload, int /*backend_pid*/) override { deliver_(payload); }

 private:
  std::function<void(const std::string&)> deliver_;
};

// Closes the connection when it goes out of scope: declared after the
// Receiver, it runs first, so ~Receiver finds the connection closed and does
// not send UNLISTEN (a round trip that could hang on a vanished server).
struct CloseOnExit {
  pqxx::connection& conn;
  ~CloseOnExit() { conn.disconnect(); }
};

bool IsPlainIdentifier(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool ok = (c >= 'a' && c <= 'z') || c == '_' || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NotificationListener>> NotificationListener::Start(
    NotificationListenerOptions options, NotificationCallbacks callbacks) {
  if (!IsPlainIdentifier(options.channel)) {
    return absl::InvalidArgumentError(
        "channel: must be a plain identifier ([a-z_][a-z0-9_]*, at most 63 bytes)");
  }
  if (options.poll_interval <= absl::ZeroDuration() ||
      options.initial_backoff <= absl::ZeroDuration() ||
      options.max_backoff <= absl::ZeroDuration() ||
      options.connect_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "poll_interval, initial_backoff, max_backoff and connect_timeout must be positive");
  }
  ConnectionPoolOptions pool_options;
  pool_options.conninfo = options.conninfo;
  absl::Status valid = ConnectionPool::Validate(pool_options);
  if (!valid.ok()) return valid;
  std::unique_ptr<NotificationListener> listener(
      new NotificationListener(std::move(options), std::move(callbacks)));
  listener->thread_ = std::thread([l = listener.get()] { l->Run(); });
  return listener;
}

NotificationListener::NotificationListener(NotificationListenerOptions options,
                                           NotificationCallbacks callbacks)
    : options_(std::move(options)), callbacks_(std::move(callbacks)) {}

NotificationListener::~NotificationListener() { Stop(); }

void NotificationListener::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool NotificationListener::WaitUntilListening(absl::Time deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return changed_.wait_until(lock, absl::ToChronoTime(deadline), [this] {
    return listening_ || stopping_;
  }) && listening_;
}

NotificationListener::Stats NotificationListener::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

bool NotificationListener::stopping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

bool NotificationListener::SleepUnlessStopped(absl::Duration d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !changed_.wait_for(lock, absl::ToChronoNanoseconds(d), [this] { return stopping_; });
}

void NotificationListener::Run() {
  absl::Duration backoff = options_.initial_backoff;
  while (!stopping()) {
    const int64_t connections_before = GetStats().connections;
    absl::Status why = ListenOnce();
    {
      std::lock_guard<std::mutex> lock(mu_);
      listening_ = false;
      if (stopping_) break;
      stats_.losses += 1;
    }
    if (callbacks_.on_lost) callbacks_.on_lost(why);
    // After a healthy connection the first retry comes quickly; repeated
    // failures to connect back off.
    if (GetStats().connections > connections_before) backoff = options_.initial_backoff;
    if (!SleepUnlessStopped(backoff)) break;
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

absl::Status NotificationListener::ListenOnce() {
  // A pool of one: it brings connect_timeout, TCP keepalives and password
  // redaction. The connection is never reused after this call.
  ConnectionPoolOptions pool_options;
  pool_options.conninfo = options_.conninfo;
  pool_options.max_size = 1;
  pool_options.connect_timeout = options_.connect_timeout;
  pool_options.statement_timeout = absl::ZeroDuration();
  ConnectionPool pool(pool_options);
  absl::StatusOr<ConnectionPool::Lease> lease =
      pool.Acquire(absl::Now() + options_.connect_timeout + absl::Seconds(1));
  if (!lease.ok()) return lease.status();
  lease->Discard();
  pqxx::connection& conn = lease->conn();
  const long poll_us = static_cast<long>(absl::ToInt64Microseconds(options_.poll_interval));
  return CatchPqxx("listen for notifications", [&]() -> absl::Status {
  // libpqxx 6 would otherwise reopen a broken connection by itself and
  // LISTEN again, hiding the gap in which notifications were lost.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    conn.inhibit_reactivation(true);
#pragma GCC diagnostic pop
    Receiver receiver(conn, options_.channel, [this](const std::string& payload) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        stats_.notifications += 1;
      }
      if (callbacks_.on_notification) callbacks_.on_notification(payload);
    });  // LISTEN is in effect once this returns
    CloseOnExit close{conn};
    bool first;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.connections += 1;
      first = stats_.connections == 1;
    }
    // The callback runs before WaitUntilListening returns, so whoever waited
    // sees what the callback did (the hub's drop_all, a test's record).
    if (callbacks_.on_listening) callbacks_.on_listening(first);
    {
      std::lock_guard<std::mutex> lock(mu_);
      listening_ = true;
    }
    changed_.notify_all();
    while (!stopping()) {
      if (!conn.is_open()) {
        return absl::UnavailableError("listen for notifications: database connection lost");
      }
      conn.await_notification(poll_us / 1000000, poll_us % 1000000);
    }
    return absl::OkStatus();
  });
}

}  // namespace shortener::pg
