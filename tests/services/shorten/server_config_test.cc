// ValidateConfig (services/shorten/server_config.h): a config with the
// required fields passes; each field out of its range is refused with
// INVALID_ARGUMENT naming its flag, before any part is built.
#include "services/shorten/server_config.h"

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/support/status_matchers.h"

namespace shortener::service {
namespace {

using shortener::testing::HasCodeAndMessage;
using shortener::testing::IsOk;

ServerConfig Minimal() {
  ServerConfig config;
  config.postgres = "host=/run/postgresql dbname=shortener";
  config.codec_secret_file = "/etc/shortener/secret";
  return config;
}

TEST_CASE("a config with the required fields and the defaults is valid",
          "[services/shorten][config]") {
  absl::StatusOr<ValidServerConfig> valid = ValidateConfig(Minimal());
  REQUIRE_THAT(valid, IsOk());
  CHECK((*valid)->postgres == "host=/run/postgresql dbname=shortener");
  CHECK((*valid)->blocking_queue == 256);
}

TEST_CASE("each field out of range is refused naming its flag", "[services/shorten][config]") {
  struct Case {
    std::function<void(ServerConfig&)> set;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](ServerConfig& c) { c.postgres.clear(); }, "--postgres is required"},
      {[](ServerConfig& c) { c.codec_secret_file.clear(); },
       "--codec_secret_file is required (except with --migrate=only)"},
      {[](ServerConfig& c) { c.base_url = "ftp://sho.rt/"; },
       "--base_url must start with http:// or https://"},
      {[](ServerConfig& c) { c.base_url = "https://sho.rt"; }, "--base_url must end with /"},
      {[](ServerConfig& c) { c.min_code_length = 11; },
       "--min_code_length must be between 1 and 10"},
      {[](ServerConfig& c) { c.blocking_threads = 0; },
       "--db_pool_size, --group_commit_threads and --blocking_threads must be >= 1"},
      {[](ServerConfig& c) { c.group_commit_parallel_backlog = 0; },
       "--group_commit_parallel_backlog must be >= 1"},
      {[](ServerConfig& c) { c.group_commit_parallel_after = absl::Milliseconds(-1); },
       "--group_commit_parallel_after must not be negative"},
      {[](ServerConfig& c) { c.resolve_batch = 10001; },
       "--resolve_batch must be between 1 and 10000 and --resolve_threads >= 1"},
      {[](ServerConfig& c) { c.invalidation_flush = absl::Seconds(2); },
       "--invalidation_flush must be between 0 and 1s"},
      {[](ServerConfig& c) { c.invalidation_max_pending = 0; },
       "--invalidation_max_pending must be >= 1"},
      {[](ServerConfig& c) { c.admin_listen = "127.0.0.1"; },
       "--admin_listen=\"127.0.0.1\": no port (expected HOST:PORT)"},
      {[](ServerConfig& c) { c.admin_listen = "127.0.0.1:70000"; },
       "--admin_listen=\"127.0.0.1:70000\": port must be 0..65535 (expected HOST:PORT)"},
      {[](ServerConfig& c) { c.resolve_queue = 0; },
       "--blocking_queue, --key_lookup_queue and --resolve_queue must be >= 1"},
      {[](ServerConfig& c) { c.group_commit_queue = 999; },
       "--group_commit_queue must be >= 1000 (a full BatchShorten)"},
      {[](ServerConfig& c) { c.max_concurrent_streams = 0; },
       "--max_concurrent_streams and --max_invalidation_subscribers must be >= 1"},
      {[](ServerConfig& c) { c.max_url_length = 65537; },
       "--max_url_length must be between 1 and 65536"},
      {[](ServerConfig& c) { c.keepalive_timeout = absl::Milliseconds(500); },
       "--keepalive_time and --keepalive_timeout must be between 1s and 24h"},
      {[](ServerConfig& c) { c.max_connection_age = absl::Milliseconds(500); },
       "--max_connection_age must be 0 (never) or 1s to 24h"},
      {[](ServerConfig& c) { c.max_connection_age = absl::Hours(25); },
       "--max_connection_age must be 0 (never) or 1s to 24h"},
      {[](ServerConfig& c) { c.group_commit_batch = 0; },
       "--group_commit_batch must be between 1 and 10000"},
      {[](ServerConfig& c) { c.api_key_cache_ttl = absl::Minutes(11); },
       "--api_key_cache_ttl must be between 0 and 10m"},
      {[](ServerConfig& c) { c.id_max_step = c.id_initial_step - 1; },
       "--id_initial_step must be >= 1 and <= --id_max_step"},
      {[](ServerConfig& c) { c.allowed_schemes = {}; }, "--allowed_schemes: "},
      {[](ServerConfig& c) { c.denied_domains = {"exa mple.com"}; }, "--denied_domains: "},
      {[](ServerConfig& c) { c.visits_retention_months = -1; },
       "--visits_retention_months: must be 0 (keep forever) or more, got -1"},
      {[](ServerConfig& c) { c.rollup_merge_interval = absl::Milliseconds(50); },
       "--rollup_merge_interval: must be between 0.1s and 60s, got 50ms"},
      {[](ServerConfig& c) { c.rollup_merge_interval = absl::Minutes(2); },
       "--rollup_merge_interval: must be between 0.1s and 60s, got 2m"},
      {[](ServerConfig& c) { c.tls.key_file = "/k.pem"; }, "--tls_key needs --tls_cert"},
      {[](ServerConfig& c) { c.http_listen = "localhost"; },
       "--http_listen=\"localhost\": no port (expected HOST:PORT)"},
      {[](ServerConfig& c) { c.http_listen = "0.0.0.0:8081"; },
       "--http_listen: 0.0.0.0 is not a loopback address and the HTTP API has no TLS of its own; "
       "put a TLS proxy or ingress in front and pass --http_allow_plaintext"},
      {[](ServerConfig& c) {
         c.http_listen = "127.0.0.1:8081";
         c.http_max_connections = 0;
       },
       "--http_max_connections: must be 1 to 100000, got 0"},
      {[](ServerConfig& c) {
         c.http_listen = "127.0.0.1:8081";
         c.http_max_body_bytes = 100;
       },
       "--http_max_body_bytes: must be 1024 to 67108864 (64 MiB), got 100"},
  };
  for (const Case& c : cases) {
    INFO(c.message);
    ServerConfig config = Minimal();
    c.set(config);
    CHECK_THAT(ValidateConfig(config).status(),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument, c.message));
  }
}

TEST_CASE("the HTTP API listens on loopback, or anywhere with --http_allow_plaintext",
          "[services/shorten][config]") {
  CHECK(ServerConfig().http_listen.empty());  // off unless asked for
  for (const char* listen : {"127.0.0.1:8081", "[::1]:0"}) {
    INFO(listen);
    ServerConfig config = Minimal();
    config.http_listen = listen;
    CHECK_THAT(ValidateConfig(config), IsOk());
  }
  ServerConfig config = Minimal();
  config.http_listen = "0.0.0.0:8081";
  config.http_allow_plaintext = true;
  CHECK_THAT(ValidateConfig(config), IsOk());
}

TEST_CASE("migrate mode only needs only --postgres; auto and off need the code secret",
          "[services/shorten][config]") {
  CHECK(ServerConfig().migrate == MigrateMode::kAuto);
  ServerConfig only;
  only.migrate = MigrateMode::kOnly;
  only.postgres = "host=/run/postgresql dbname=shortener";
  absl::StatusOr<ValidServerConfig> valid = ValidateConfig(only);
  REQUIRE_THAT(valid, IsOk());
  CHECK((*valid)->migrate == MigrateMode::kOnly);
  only.postgres.clear();
  CHECK_THAT(ValidateConfig(only).status(),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--postgres is required"));
  // The other flags are still checked: a Job shares the replicas' flags,
  // and a typo there should fail the Job, not the rollout after it.
  only.postgres = "host=/run/postgresql dbname=shortener";
  only.blocking_queue = 0;
  CHECK_THAT(ValidateConfig(only).status(),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--blocking_queue"));
  for (MigrateMode mode : {MigrateMode::kAuto, MigrateMode::kOff}) {
    ServerConfig config = Minimal();
    config.migrate = mode;
    config.codec_secret_file.clear();
    CHECK_THAT(ValidateConfig(config).status(),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                 "--codec_secret_file is required (except with --migrate=only)"));
  }
}

TEST_CASE("migrate mode is auto, only or off, and a bad one names them",
          "[services/shorten][config]") {
  for (MigrateMode mode : {MigrateMode::kAuto, MigrateMode::kOnly, MigrateMode::kOff}) {
    absl::StatusOr<MigrateMode> parsed = ParseMigrateMode(MigrateModeName(mode));
    REQUIRE_THAT(parsed, IsOk());
    CHECK(*parsed == mode);
  }
  CHECK(MigrateModeName(MigrateMode::kOnly) == "only");
  for (const char* bad : {"", "AUTO", "yes", "on", "only "}) {
    INFO(bad);
    CHECK_THAT(
        ParseMigrateMode(bad).status(),
        HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                          absl::StrCat("--migrate must be auto, only or off, not \"", bad, "\"")));
  }
}

}  // namespace
}  // namespace shortener::service
