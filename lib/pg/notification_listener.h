// NotificationListener: LISTEN on one channel over a dedicated libpqxx
// connection, in a thread of its own, and hand every notification's payload
// to a callback. How service replicas learn of each other's changes (and of
// their own: PgLinkStore::Revoke NOTIFYs in the revoking transaction).
//
// PostgreSQL delivers a notification only to sessions that were listening
// when it was committed. So whenever the listener starts listening (the first
// time and after every reconnection) it calls on_listening: anything committed
// while it was not listening was missed, and the receiver must assume the
// worst (the service tells its subscribers to drop everything).
//
// Connection loss (server restart, network, idle kill) is noticed within
// poll_interval on a unix socket or a TCP connection the server closed, and
// within ~30 s (TCP keepalives, pg::TcpKeepaliveDefaults) for a server that
// vanished silently. The listener then calls on_lost, waits a backoff
// (initial_backoff doubling up to max_backoff) and reconnects, forever, until
// stopped. libpqxx's own silent reactivation is never used: it would listen
// again without anyone knowing notifications were missed.
//
// Stop() returns within poll_interval, or within connect_timeout when it
// interrupts a connection attempt to an unresponsive host.
//
// Thread-safe. Callbacks run on the listener thread, one at a time: keep them
// short and never call Stop() or the destructor from one.
#ifndef SHORTENER_LIB_PG_NOTIFICATION_LISTENER_H_
#define SHORTENER_LIB_PG_NOTIFICATION_LISTENER_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace shortener::pg {

struct NotificationListenerOptions {
  // libpq connection string; may hold a password (never in a message).
  // Required.
  std::string conninfo;
  // The channel to LISTEN on: a plain identifier ([a-z_][a-z0-9_]*, at most
  // 63 bytes). Required.
  std::string channel;
  // How long one wait for notifications lasts: bounds how long Stop() takes
  // and how late a lost connection is noticed. Default 100 ms.
  absl::Duration poll_interval = absl::Milliseconds(100);
  // Wait before the first reconnection attempt; doubles per failed attempt.
  // Default 100 ms.
  absl::Duration initial_backoff = absl::Milliseconds(100);
  // Longest wait between reconnection attempts. Default 5 s.
  absl::Duration max_backoff = absl::Seconds(5);
  // Bounds opening the connection (libpq's connect_timeout, whole seconds,
  // at least 2) unless conninfo sets its own. Default 5 s.
  absl::Duration connect_timeout = absl::Seconds(5);
};

struct NotificationCallbacks {
  // A notification's payload, in the order the server delivered them.
  std::function<void(const std::string& payload)> on_notification;
  // LISTEN took effect on a new connection; `first` is true for the first
  // connection of this listener. Notifications committed before this call
  // (and after the previous connection was lost) were missed.
  std::function<void(bool first)> on_listening;
  // Connecting, listening or waiting failed (UNAVAILABLE with libpq's reason;
  // no password). A reconnection attempt follows after the backoff.
  std::function<void(const absl::Status& why)> on_lost;
};

class NotificationListener {
 public:
  // Checks the options (INVALID_ARGUMENT naming the field: an empty or
  // unsafe channel, a malformed conninfo, durations <= 0) and starts the
  // thread, which connects in the background: Start does not wait for the
  // database (see WaitUntilListening).
  static absl::StatusOr<std::unique_ptr<NotificationListener>> Start(
      NotificationListenerOptions options, NotificationCallbacks callbacks);
  // Stops (see Stop).
  ~NotificationListener();
  NotificationListener(const NotificationListener&) = delete;
  NotificationListener& operator=(const NotificationListener&) = delete;

  // Stops listening, closes the connection and joins the thread; no callback
  // runs once it returns. Idempotent.
  void Stop();

  // Waits until the listener is listening, and on_listening has returned,
  // (true) or `deadline` passes (false).
  bool WaitUntilListening(absl::Time deadline);

  struct Stats {
    int64_t notifications = 0;  // payloads delivered
    int64_t connections = 0;    // times LISTEN took effect
    int64_t losses = 0;         // on_lost calls
  };
  Stats GetStats() const;

 private:
  NotificationListener(NotificationListenerOptions options, NotificationCallbacks callbacks);
  void Run();
  // Connects, listens and delivers until the connection fails or Stop();
  // returns why it ended (OK when stopped).
  absl::Status ListenOnce();
  // Sleeps `d` unless Stop() comes first; false when stopping.
  bool SleepUnlessStopped(absl::Duration d);
  bool stopping() const;

  const NotificationListenerOptions options_;
  const NotificationCallbacks callbacks_;

  mutable std::mutex mu_;
  std::condition_variable changed_;  // stopping_ or listening_ changed
  // Guarded by mu_:
  bool stopping_ = false;
  bool listening_ = false;
  Stats stats_;
  std::thread thread_;
};

}  // namespace shortener::pg

#endif  // SHORTENER_LIB_PG_NOTIFICATION_LISTENER_H_
