// The load shapes of the hostile-traffic scenarios that HttpConnection
// (one blocking request at a time) cannot make: a paced flood on several
// keep-alive connections from one thread that may be pinned to a CPU, and
// hundreds of slowloris clients trickling a head that never ends. Both talk
// only to 127.0.0.1 and are bounded in time and requests.
//
// Thread safety: RunFlood blocks its caller (the flood runs on a thread of
// its own, joined before it returns). SlowClients runs one thread; its
// methods are called from the thread that made it.
#ifndef SHORTENER_TESTS_EDGE_HOSTILE_HOSTILE_CLIENTS_H_
#define SHORTENER_TESTS_EDGE_HOSTILE_HOSTILE_CLIENTS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace shortener::testing {

// A blocking TCP socket connected to 127.0.0.1:port (TCP_NODELAY), or why
// not. `receive_buffer` > 0: SO_RCVBUF set to it before connecting (the
// kernel then buffers little for a client that does not read).
absl::StatusOr<int> ConnectLoopback(int port, int receive_buffer = 0);

// One HTTP/1.1 answer to a GET, read off the front of a byte stream.
struct Answer {
  int status = 0;
  std::string location;
  bool retry_after = false;  // carries Retry-After
  bool close = false;        // Connection: close
};
enum class Take { kAnswer, kIncomplete, kMalformed };
// Takes the first complete answer (head and Content-Length bytes of body)
// off the front of `in`; kIncomplete leaves `in` as it was.
Take TakeAnswer(std::string& in, Answer* answer);

struct FloodOptions {
  int port = 0;
  int connections = 16;
  // Requests sent on one connection before its first answer came back
  // (pipelined); a request due while every connection has this many waits.
  int pipeline_depth = 4;
  double rate = 5000;  // requests/s due
  absl::Duration duration = absl::Seconds(5);
  // After the last request was sent: how long the answers still owed may
  // take before they count as unanswered.
  absl::Duration drain = absl::Seconds(5);
  int cpu = -1;  // pin the flood's thread to this CPU; -1: no pinning
  // The path of the n-th request (a GET with a browser's User-Agent).
  std::function<std::string(uint64_t)> path;
};

struct FloodFigures {
  uint64_t due = 0;  // rate * duration
  uint64_t sent = 0;
  uint64_t answered = 0;
  std::map<int, uint64_t> statuses;              // answers by status
  uint64_t unavailable_without_retry_after = 0;  // 503s lacking Retry-After
  uint64_t unanswered = 0;        // sent and never answered (drain over, or connection lost)
  uint64_t connections_lost = 0;  // closed by the edge, or failed
  uint64_t malformed = 0;         // answers that did not parse
  absl::Duration send_span;       // first request to the last one sent
  absl::Duration answer_span;     // first request to the last answer
  absl::Duration max_lag;         // how late (past due) a request went out, at worst
  std::vector<absl::Duration> latencies;  // sent -> answered
  std::string pin_error;                  // pinning failed (the flood ran unpinned)
  double sent_rate() const;               // sent / send_span
  double answered_rate() const;           // answered / answer_span
};

// Sends options.rate requests/s for options.duration (sent in small bursts,
// at least once a millisecond, as they come due) over options.connections
// keep-alive connections, reads every answer, then waits for the answers
// still owed for up to options.drain. A connection the edge closes is
// reopened and its unanswered requests counted.
FloodFigures RunFlood(const FloodOptions& options);

struct SlowFigures {
  int clients = 0;
  int connected = 0;
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;  // anything the edge answered to them
  int closed_by_edge = 0;
  // From a client's first byte to the edge closing it: the shortest and
  // the longest over the clients the edge closed.
  absl::Duration min_life = absl::InfiniteDuration();
  absl::Duration max_life;
};

// `clients` connections that each send `head` (a request head that does
// not end within the test) one byte every `byte_interval`, staggered, from
// one thread, until Stop or until the edge closes them.
class SlowClients {
 public:
  SlowClients(int port, int clients, std::string head, absl::Duration byte_interval);
  ~SlowClients();
  // Connections the edge has not closed yet.
  int open() const { return open_.load(); }
  SlowFigures Stop();

 private:
  void Run();

  const std::string head_;
  const absl::Duration byte_interval_;
  std::vector<int> fds_;
  SlowFigures figures_;
  std::atomic<int> open_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_EDGE_HOSTILE_HOSTILE_CLIENTS_H_
