// --migrate with the real binary on a private cluster: `only` migrates an
// empty database and exits 0 without a code secret (two at once too);
// `off` refuses an empty database, naming both versions and the fix, and
// serves once `only` ran, also on a newer schema; `only` gives up on an
// unreachable database after --db_startup_timeout.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <optional>
#include <pqxx/pqxx>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/pg/migrations.h"
#include "tests/services/shorten/e2e/e2e_fixture.h"
#include "tests/support/status_matchers.h"
#include "tests/support/subprocess.h"

namespace shortener::testing {
namespace {

struct Outcome {
  std::optional<int> exit_code;  // nullopt: still running after the timeout (killed)
  std::string log;
};

// A temp dir for logs, removed with its content.
struct LogDir {
  LogDir() {
    char templ[] = "/tmp/shortener-migrate-XXXXXX";
    REQUIRE(mkdtemp(templ) != nullptr);
    path = templ;
  }
  ~LogDir() { std::filesystem::remove_all(path); }
  std::string path;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Starts `shorten-service args...` for each entry of `runs` at once, waits
// for all of them (up to 60 s each) and returns their exit codes and logs.
std::vector<Outcome> RunServices(const std::vector<std::vector<std::string>>& runs) {
  LogDir dir;
  std::vector<Subprocess> children;
  for (size_t i = 0; i < runs.size(); ++i) {
    std::vector<std::string> argv = {BinaryPath("shorten-service")};
    argv.insert(argv.end(), runs[i].begin(), runs[i].end());
    absl::StatusOr<Subprocess> child =
        Subprocess::Spawn(argv, absl::StrCat(dir.path, "/", i, ".log"));
    REQUIRE(child.ok());
    children.push_back(*std::move(child));
  }
  std::vector<Outcome> outcomes(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    outcomes[i].exit_code = children[i].Wait(absl::Seconds(60));
    outcomes[i].log = ReadFile(absl::StrCat(dir.path, "/", i, ".log"));
  }
  return outcomes;
}

Outcome RunService(const std::vector<std::string>& args) { return RunServices({args})[0]; }

TEST_CASE("migrate only brings an empty database forward and exits 0, off then serves on it",
          "[services/shorten/e2e][migrate][pg][e2e]") {
  auto cluster = PgCluster::Start(/*apply_migrations=*/false);
  REQUIRE_THAT(cluster, IsOk());
  const std::string conninfo = (*cluster)->ConnInfo();
  // Two Jobs at once (a retried Job overlapping its first try): the
  // advisory lock makes one wait for the other; both succeed. Neither has
  // --codec_secret_file: migrating does not need it.
  const std::vector<std::string> only = {"--migrate=only", "--postgres=" + conninfo};
  std::vector<Outcome> outcomes = RunServices({only, only});
  for (const Outcome& outcome : outcomes) {
    INFO(outcome.log);
    CHECK(outcome.exit_code == std::optional<int>(0));
    CHECK_THAT(outcome.log, Catch::Contains("--migrate=only: schema migrations done, exiting"));
    CHECK_THAT(outcome.log, Catch::Contains(absl::StrCat("database schema at version ",
                                                         pg::EmbeddedMigrations().back().version)));
  }
  // Each migration is its own transaction: the two may share the work, but
  // every migration is applied exactly once.
  int applied = 0;
  for (const Outcome& outcome : outcomes) {
    std::smatch match;
    if (std::regex_search(outcome.log, match, std::regex("applied ([0-9]+) schema migration"))) {
      applied += std::stoi(match[1]);
    }
  }
  CHECK(applied == static_cast<int>(pg::EmbeddedMigrations().size()));
  absl::StatusOr<pg::SchemaState> state = pg::ReadSchemaState(conninfo);
  REQUIRE_THAT(state, IsOk());
  CHECK(state->current());
  CHECK(state->database_version == pg::EmbeddedMigrations().back().version);

  ServiceProcessOptions options;
  options.conninfo = conninfo;
  options.extra_flags = {"--migrate=off"};
  auto service = ServiceProcess::Start(options);
  REQUIRE_THAT(service, IsOk());
  v1::ShortenRequest request;
  request.set_long_url("https://example.com/after-the-job");
  v1::ShortenResponse response;
  grpc::Status shortened =
      (*service)->NewStub()->Shorten(E2eFixture::Ctx().get(), request, &response);
  REQUIRE(shortened.error_message() == "");
  CHECK(!response.code().empty());

  // The next release's Job ran (a migration this binary does not know):
  // a replica of this release still starts and serves, and says so.
  {
    pqxx::connection conn(conninfo);
    pqxx::work tx(conn);
    tx.exec0("INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_future.sql')");
    tx.commit();
  }
  REQUIRE((*service)->process().Signal(SIGKILL));
  REQUIRE((*service)->process().Wait(absl::Seconds(10)).has_value());
  REQUIRE_THAT((*service)->Restart(), IsOk());
  CHECK_THAT((*service)->Log(),
             Catch::Contains(absl::StrCat("database schema at version 9999, newer than this "
                                          "binary's ",
                                          pg::EmbeddedMigrations().back().version)));
  v1::ResolveRequest resolve;
  resolve.set_code(response.code());
  v1::ResolveResponse resolved;
  CHECK((*service)->NewStub()->Resolve(E2eFixture::Ctx().get(), resolve, &resolved).ok());
  CHECK(resolved.long_url() == "https://example.com/after-the-job");
}

TEST_CASE("migrate off on an empty database exits non-zero naming both versions and the fix",
          "[services/shorten/e2e][migrate][pg][e2e]") {
  auto cluster = PgCluster::Start(/*apply_migrations=*/false);
  REQUIRE_THAT(cluster, IsOk());
  ServiceProcessOptions options;
  options.conninfo = (*cluster)->ConnInfo();
  options.extra_flags = {"--migrate=off"};
  auto service = ServiceProcess::Start(options);
  REQUIRE_FALSE(service.ok());
  const std::string message(service.status().message());
  CHECK_THAT(message,
             Catch::Contains(absl::StrCat("--migrate=off: database schema at version 0, this "
                                          "binary needs version ",
                                          pg::EmbeddedMigrations().back().version,
                                          " (pending: ", pg::EmbeddedMigrations().front().name)));
  CHECK_THAT(message, Catch::Contains("apply them first with shorten-service --migrate=only"));
  // Nothing was applied, not even the bookkeeping table.
  pqxx::connection conn((*cluster)->ConnInfo());
  pqxx::work tx(conn);
  CHECK_FALSE(tx.exec1("SELECT to_regclass('schema_migrations') IS NOT NULL")[0].as<bool>());
}

TEST_CASE("migrate only on an unreachable database gives up after db_startup_timeout",
          "[services/shorten/e2e][migrate][e2e]") {
  const absl::Time start = absl::Now();
  Outcome outcome = RunService({"--migrate=only",
                                absl::StrCat("--postgres=host=127.0.0.1 port=", PickUnusedPort(),
                                             " dbname=shortener connect_timeout=1"),
                                "--db_startup_timeout=2s"});
  INFO(outcome.log);
  CHECK(outcome.exit_code == std::optional<int>(1));
  CHECK(absl::Now() - start < absl::Seconds(20));
  CHECK_THAT(outcome.log, Catch::Contains("database not ready"));
  CHECK_THAT(outcome.log, Catch::Contains("shorten-service: UNAVAILABLE"));
}

}  // namespace
}  // namespace shortener::testing
