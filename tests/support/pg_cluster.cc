#include "tests/support/pg_cluster.h"

#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "lib/pg/migrations.h"
#include "tests/support/orphan_reaper.h"

namespace shortener::testing {
namespace {

constexpr char kPgBin[] = "/usr/lib/postgresql/15/bin";

std::string CurrentUserName() {
  struct passwd* pw = getpwuid(geteuid());
  return pw != nullptr ? pw->pw_name : "postgres";
}

}  // namespace

absl::StatusOr<std::unique_ptr<PgCluster>> PgCluster::Start(bool apply_migrations) {
  ReapOrphans("shortener-pg-");
  std::unique_ptr<PgCluster> c(new PgCluster());
  char templ[] = "/tmp/shortener-pg-XXXXXX";
  if (mkdtemp(templ) == nullptr) return absl::InternalError("mkdtemp failed");
  c->dir_ = templ;
  RecordOwner(c->dir_);
  c->user_ = geteuid() == 0 ? "postgres" : CurrentUserName();
  if (geteuid() == 0) {
    struct passwd* pw = getpwnam("postgres");
    if (pw == nullptr) {
      return absl::FailedPreconditionError(
          "running as root but there is no `postgres` user: apt-get install postgresql");
    }
    if (chown(c->dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      return absl::InternalError("chown of the cluster dir failed");
    }
  }
  absl::Status st = c->RunAsOwner(absl::StrCat(
      kPgBin, "/initdb -D ", c->dir_, "/data -U ", c->user_,
      " --auth=trust --no-sync -E UTF8 --locale=C.UTF-8 >", c->dir_, "/initdb.log 2>&1"));
  if (!st.ok()) return st;
  // In postgresql.conf, not on the command line: ALTER SYSTEM (benchmarks'
  // --pg_settings) can then still override them.
  {
    std::ofstream conf(c->dir_ + "/data/postgresql.conf", std::ios::app);
    conf << "\n# tests/support/pg_cluster.cc\nmax_connections = 200\nshared_buffers = 64MB\n";
    // Profiling a benchmark (say, shared_preload_libraries =
    // 'pg_stat_statements'): lines given by the environment, appended as they are.
    if (const char* extra = std::getenv("SHORTENER_TEST_PG_CONF")) conf << extra << "\n";
    if (!conf.flush()) return absl::InternalError("cannot append to postgresql.conf");
  }
  st = c->Resume();
  if (!st.ok()) return st;
  if (apply_migrations) {
    absl::StatusOr<int> applied = pg::ApplyMigrations(c->ConnInfo());
    if (!applied.ok()) return applied.status();
  }
  return c;
}

PgCluster::~PgCluster() {
  if (running_) (void)Stop();
  if (!dir_.empty()) {
    std::string cmd = absl::StrCat("rm -rf '", dir_, "'");
    int rc = std::system(cmd.c_str());
    (void)rc;
  }
}

std::string PgCluster::ConnInfo() const {
  return absl::StrCat("host=", dir_, " port=", port_, " dbname=postgres user=", user_,
                      " connect_timeout=5");
}

absl::Status PgCluster::RunAsOwner(const std::string& command) const {
  std::string full =
      geteuid() == 0 ? absl::StrCat("runuser -u postgres -- sh -c '", command, "'") : command;
  int rc = std::system(full.c_str());
  if (rc != 0) {
    return absl::InternalError(
        absl::StrCat("command failed (", rc, "): ", command, " (logs in ", dir_, ")"));
  }
  return absl::OkStatus();
}

absl::Status PgCluster::Resume() {
  // fsync stays on: durability tests (kill -9) must see real commits.
  absl::Status st = RunAsOwner(
      absl::StrCat(kPgBin, "/pg_ctl -D ", dir_, "/data -l ", dir_, "/server.log -w -t 60 -o \"",
                   "-c listen_addresses= -c unix_socket_directories=", dir_, " -p ", port_,
                   "\" start >/dev/null"));
  if (st.ok()) running_ = true;
  return st;
}

absl::Status PgCluster::Stop() {
  absl::Status st = RunAsOwner(
      absl::StrCat(kPgBin, "/pg_ctl -D ", dir_, "/data -m fast -w -t 60 stop >/dev/null"));
  if (st.ok()) running_ = false;
  return st;
}

PgCluster& SharedPgCluster() {
  // A static unique_ptr: its destructor stops the server at normal exit.
  static std::unique_ptr<PgCluster> cluster = [] {
    absl::StatusOr<std::unique_ptr<PgCluster>> c = PgCluster::Start();
    if (!c.ok()) {
      std::fprintf(stderr, "cannot start a private PostgreSQL cluster: %s\n",
                   c.status().ToString().c_str());
      std::abort();
    }
    return std::move(c).value();
  }();
  return *cluster;
}

}  // namespace shortener::testing
