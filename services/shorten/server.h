// Wiring of shorten-service: builds the codec, URL policy, store, id
// allocator, group committer and gRPC server from a ServerConfig, serves until
// SIGTERM/SIGINT, then drains and returns.
#ifndef SHORTENER_SERVICES_SHORTEN_SERVER_H_
#define SHORTENER_SERVICES_SHORTEN_SERVER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace shortener::service {

struct ServerConfig {
  std::string listen = "127.0.0.1:50051";
  std::string postgres;                 // libpq connection string (required)
  std::string base_url = "http://localhost:8080/";
  std::string codec_secret_file;        // required
  bool create_codec_secret = false;     // generate the secret file if missing
  int min_code_length = 6;              // body characters, 1..10
  size_t max_url_length = 2048;
  std::vector<std::string> short_domains;   // the base_url host is always added
  std::vector<std::string> denied_domains;
  int db_pool_size = 8;
  int group_commit_batch = 1000;
  int group_commit_threads = 2;
  int group_commit_parallel_backlog = 256;  // queued links that start a parallel commit
  absl::Duration group_commit_parallel_after = absl::Milliseconds(10);  // ... or a commit this long
  int blocking_threads = 16;            // for store reads off reactor threads
  int64_t id_initial_step = 1000;
  int64_t id_max_step = 1 << 20;
  absl::Duration id_segment_lifetime = absl::Minutes(15);
  absl::Duration db_startup_timeout = absl::Seconds(60);
  absl::Duration shutdown_grace = absl::Seconds(10);
};

// Checks flag values that do not need I/O. INVALID_ARGUMENT naming the flag.
absl::Status ValidateConfig(const ServerConfig& config);

// Runs the service until SIGTERM or SIGINT (both must be blocked in every
// thread by the caller before any thread starts: see BlockTerminationSignals).
// Returns OK after a clean drain, or why it could not start.
absl::Status RunServer(const ServerConfig& config);

// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (and so in every
// thread it creates afterwards) so that RunServer can wait for them.
void BlockTerminationSignals();

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_SERVER_H_
