// Closed-loop gRPC load on shorten-service: `inflight` calls always
// outstanding (each completion starts the next call from the completion
// callback), spread over `channels` separate TCP connections, every link a
// distinct URL so that every call inserts new rows. Runs a warm-up, then a
// measured window; only calls that complete inside the window count.
//
// Thread-safety: RunShortenLoad/RunBatchShortenLoad block the calling thread
// for warm-up + window; the hooks run on that thread.
#ifndef SHORTENER_TESTS_BENCH_SHORTEN_GRPC_LOAD_H_
#define SHORTENER_TESTS_BENCH_SHORTEN_GRPC_LOAD_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace shortener::bench {

struct LoadOptions {
  std::string target;   // host:port of the service
  std::string api_key;  // sent with every call (scope shorten)
  int channels = 4;     // separate TCP connections
  // Client API. kAsyncQueue: `client_threads` threads, each polling its own
  // completion queue and starting the next call of a slot right where the
  // last one completed (gRPC's own benchmark client design: no thread
  // handoff per call). kCallback: the callback API, whose completions
  // gRPC 1.51 hands to its "nexting" threads (one more handoff per call,
  // ~3 µs more client CPU per unary call here).
  enum class Api { kAsyncQueue, kCallback };
  Api api = Api::kAsyncQueue;
  int client_threads = 2;
  int inflight = 64;      // calls outstanding at all times
  int batch_size = 1000;  // BatchShorten items per call
  absl::Duration warmup = absl::Seconds(2);
  absl::Duration window = absl::Seconds(10);
  absl::Duration call_timeout = absl::Seconds(30);
  std::string url_tag;  // makes URLs unique across runs
  // Diagnostics: send URLs the service must reject (ftp://) so that a call
  // costs the RPC and validation but no id, commit or database; then
  // INVALID_ARGUMENT is the expected answer and counts as a call.
  bool rejected_urls = false;
  // Diagnostics: force_new on every link, so no de-duplication row is read
  // or written (what the dedupe index costs).
  bool force_new = false;
  // Labels set on every link (ShortenRequest.labels): what labelled links
  // cost. Default none.
  std::map<std::string, std::string> labels;
  // Called on the driver thread right when the window opens and closes
  // (resource samples are taken there).
  std::function<void()> on_window_start = [] {};
  std::function<void()> on_window_end = [] {};
};

struct LoadResult {
  double seconds = 0;  // measured window
  int64_t calls = 0;   // calls completed OK in the window
  int64_t links = 0;   // links created (created = true) in the window
  double links_per_s = 0;
  double calls_per_s = 0;
  // Latency of the calls completed in the window (whole call for a batch).
  double p50_ms = 0, p99_ms = 0, mean_ms = 0, max_ms = 0;
  // Over warm-up and window: failed calls, failed batch items, and OK
  // answers with created = false (a distinct URL must always be new).
  int64_t call_errors = 0;
  int64_t item_errors = 0;
  int64_t not_created = 0;
  std::string first_error;  // empty when there was none
  int64_t errors() const { return call_errors + item_errors + not_created; }
};

// Single Shorten calls (force_new as in the options), distinct URLs.
absl::StatusOr<LoadResult> RunShortenLoad(const LoadOptions& options);

// BatchShorten calls of `batch_size` distinct URLs each.
absl::StatusOr<LoadResult> RunBatchShortenLoad(const LoadOptions& options);

}  // namespace shortener::bench

#endif  // SHORTENER_TESTS_BENCH_SHORTEN_GRPC_LOAD_H_
