// A private PostgreSQL 15 cluster for tests: initdb in a fresh temp dir,
// listening only on a unix socket in that dir (no TCP port to collide on),
// stopped and deleted on destruction. When the test runs as root the server
// runs as the `postgres` user (initdb/postgres refuse root).
//
// Not thread-safe; one test owns one cluster.
#ifndef SHORTENER_TESTS_SUPPORT_PG_CLUSTER_H_
#define SHORTENER_TESTS_SUPPORT_PG_CLUSTER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace shortener::testing {

class PgCluster {
 public:
  // Creates and starts a cluster (~1.5 s), with the schema migrations applied
  // when `apply_migrations`.
  static absl::StatusOr<std::unique_ptr<PgCluster>> Start(bool apply_migrations = true);
  ~PgCluster();

  // libpq connection string for the `postgres` database as the superuser.
  std::string ConnInfo() const;
  const std::string& socket_dir() const { return dir_; }
  int port() const { return port_; }
  const std::string& user() const { return user_; }

  // Stops the server (fast shutdown) / starts it again on the same data.
  absl::Status Stop();
  absl::Status Resume();
  bool running() const { return running_; }

 private:
  PgCluster() = default;
  absl::Status RunAsOwner(const std::string& command) const;

  std::string dir_;   // temp dir: data/ and the socket live here
  std::string user_;  // OS user that owns the cluster
  int port_ = 5432;   // only names the socket file; no TCP listener
  bool running_ = false;
};

// Starts a cluster once per test binary and returns it (aborts the test run
// with a clear message if it cannot). Tests that share it must use distinct
// data (e.g. distinct id_segments names) or clean up after themselves.
PgCluster& SharedPgCluster();

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SUPPORT_PG_CLUSTER_H_
