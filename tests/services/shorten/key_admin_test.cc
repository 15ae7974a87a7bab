// KeyAdmin over an InMemoryApiKeyStore (wrapped in a FaultyApiKeyStore for
// store failures and races) and a ManualClock: what Create makes of a spec
// and every refusal, List, Revoke with the clock's time, and the bootstrap
// admin key file in each of its states.
#include "services/shorten/key_admin.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/auth/api_key.h"
#include "lib/auth/in_memory_api_key_store.h"
#include "lib/common/private_file.h"
#include "lib/common/store_time.h"
#include "tests/support/fault_plan.h"
#include "tests/support/faulty_api_key_store.h"
#include "tests/support/status_matchers.h"

namespace shortener::service {
namespace {

using ::shortener::testing::FaultPlan;
using ::shortener::testing::FaultyApiKeyStore;
using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

struct Admin {
  ManualClock clock{absl::FromUnixSeconds(1800000000) + absl::Nanoseconds(123456789)};
  auth::InMemoryApiKeyStore keys{clock};
  FaultPlan plan;
  FaultyApiKeyStore store{&keys, &plan};
  KeyAdmin admin{&store, clock};

  size_t stored() {
    absl::StatusOr<std::vector<auth::ApiKeyRecord>> all = keys.List();
    REQUIRE_THAT(all, IsOk());
    return all->size();
  }
};

ApiKeySpec Spec(const std::string& name, std::vector<std::string> scopes) {
  ApiKeySpec spec;
  spec.name = name;
  spec.scopes = std::move(scopes);
  return spec;
}

TEST_CASE("Create makes a fresh key and stores only its hash, with the spec's fields",
          "[services/shorten][keys]") {
  Admin a;
  ApiKeySpec spec = Spec("campaigns", {"stats", "shorten"});
  spec.tenant = "acme";
  spec.allowed_domains = {"Example.COM", "*.example.org"};
  spec.rate_per_second = 12.5;
  spec.burst = 40;
  absl::StatusOr<CreatedApiKey> created = a.admin.Create(spec);
  REQUIRE_THAT(created, IsOk());
  CHECK(absl::StartsWith(created->key, auth::kApiKeyPrefix));
  CHECK(created->key.size() == auth::kApiKeyLength);
  const auth::ApiKeyRecord& r = created->record;
  CHECK(r.key_hash == auth::HashApiKey(created->key));
  CHECK(r.name == "campaigns");
  CHECK(r.tenant == "acme");
  CHECK_FALSE(r.infrastructure);
  CHECK(r.scopes == auth::ScopeSet{auth::Scope::kShorten, auth::Scope::kStats});
  CHECK(r.allowed_domains.ToString() == "*.example.org,example.com");
  CHECK(r.rate_per_second == 12.5);
  CHECK(r.burst == 40);
  CHECK(r.create_time == StoreTime(a.clock.Now()));
  CHECK_FALSE(r.revoke_time.has_value());
  // What the store holds is what Create returned; the key itself is nowhere.
  absl::StatusOr<auth::ApiKeyRecord> found = a.keys.FindByHash(auth::HashApiKey(created->key));
  REQUIRE_THAT(found, IsOk());
  CHECK(found->id == r.id);

  // Two keys from one spec are two different keys.
  absl::StatusOr<CreatedApiKey> again = a.admin.Create(spec);
  REQUIRE_THAT(again, IsOk());
  CHECK(again->key != created->key);
  CHECK(again->record.id != r.id);
}

TEST_CASE("Create fills in the defaults: the name as tenant, ceil(rate) as burst",
          "[services/shorten][keys]") {
  Admin a;
  absl::StatusOr<CreatedApiKey> plain = a.admin.Create(Spec("acme", {"shorten"}));
  REQUIRE_THAT(plain, IsOk());
  CHECK(plain->record.tenant == "acme");
  CHECK(plain->record.allowed_domains.empty());
  CHECK_FALSE(plain->record.rate_per_second.has_value());
  CHECK_FALSE(plain->record.burst.has_value());

  ApiKeySpec spec = Spec("rated", {"shorten"});
  for (const auto& [rate, burst] :
       std::vector<std::pair<double, int>>{{2.5, 3}, {0.2, 1}, {7, 7}, {1000, 1000}}) {
    INFO(rate);
    spec.rate_per_second = rate;
    absl::StatusOr<CreatedApiKey> rated = a.admin.Create(spec);
    REQUIRE_THAT(rated, IsOk());
    CHECK(rated->record.rate_per_second == rate);
    CHECK(rated->record.burst == burst);
  }

  ApiKeySpec edge = Spec("edge-eu-1", {"resolve", "record_clicks", "watch_invalidations"});
  edge.infrastructure = true;
  absl::StatusOr<CreatedApiKey> infrastructure = a.admin.Create(edge);
  REQUIRE_THAT(infrastructure, IsOk());
  CHECK(infrastructure->record.infrastructure);
  CHECK(infrastructure->record.tenant.empty());
}

TEST_CASE("Create refuses a bad spec naming the field, and stores nothing",
          "[services/shorten][keys]") {
  Admin a;
  struct Bad {
    const char* what;
    ApiKeySpec spec;
    std::string message;
  };
  std::vector<Bad> bad;
  bad.push_back({"no name", Spec("", {"shorten"}), "name: is required"});
  bad.push_back({"long name", Spec(std::string(201, 'n'), {"shorten"}),
                 "name and tenant: at most 200 bytes"});
  {
    ApiKeySpec spec = Spec("n", {"shorten"});
    spec.tenant = std::string(201, 't');
    bad.push_back({"long tenant", spec, "name and tenant: at most 200 bytes"});
  }
  {
    ApiKeySpec spec = Spec("edge", {"resolve"});
    spec.infrastructure = true;
    spec.tenant = "acme";
    bad.push_back({"infrastructure with a tenant", spec,
                   "tenant: an infrastructure key has no tenant (it acts for every tenant)"});
  }
  bad.push_back({"no scopes", Spec("n", {}), "scopes: at least one is required"});
  bad.push_back({"unknown scope", Spec("n", {"shorten", "fly"}), "scopes: unknown scope \"fly\""});
  bad.push_back({"tenant with record_clicks", Spec("n", {"record_clicks"}),
                 "scopes: record_clicks is for infrastructure keys only"});
  {
    ApiKeySpec spec = Spec("edge", {"resolve", "shorten"});
    spec.infrastructure = true;
    bad.push_back({"infrastructure with shorten", spec,
                   "scopes: an infrastructure key may hold only resolve, record_clicks and "
                   "watch_invalidations, not \"shorten\""});
  }
  {
    ApiKeySpec spec = Spec("n", {"shorten"});
    spec.allowed_domains = {"example.com", "exa mple.org"};
    bad.push_back({"malformed domain", spec, "allowed domains: entry \"exa mple.org\""});
  }
  for (double rate : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    ApiKeySpec spec = Spec("n", {"shorten"});
    spec.rate_per_second = rate;
    bad.push_back({"bad rate", spec, "rate_per_second: must be 0 (no limit) or positive, got "});
  }
  {
    ApiKeySpec spec = Spec("n", {"shorten"});
    spec.rate_per_second = 1;
    spec.burst = -1;
    bad.push_back({"negative burst", spec, "burst: must not be negative, got -1"});
  }
  {
    ApiKeySpec spec = Spec("n", {"shorten"});
    spec.burst = 5;
    bad.push_back({"burst without rate", spec, "burst: needs rate_per_second"});
  }
  for (const Bad& b : bad) {
    INFO(b.what);
    CHECK_THAT(a.admin.Create(b.spec),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument, b.message));
  }
  CHECK(a.plan.calls("Create") == 0);
  CHECK(a.stored() == 0);
}

TEST_CASE("Create, List and Revoke pass the store's errors through", "[services/shorten][keys]") {
  Admin a;
  a.plan.FailNext(1, absl::UnavailableError("database unavailable"), "Create");
  CHECK_THAT(a.admin.Create(Spec("n", {"shorten"})),
             HasCodeAndMessage(absl::StatusCode::kUnavailable, "database unavailable"));
  a.plan.FailNext(1, absl::UnavailableError("database unavailable"), "List");
  CHECK_THAT(a.admin.List(), HasCode(absl::StatusCode::kUnavailable));
  a.plan.FailNext(1, absl::UnavailableError("database unavailable"), "Revoke");
  CHECK_THAT(a.admin.Revoke(1), HasCode(absl::StatusCode::kUnavailable));
  CHECK(a.stored() == 0);
}

TEST_CASE("List gives every key by id, revoked ones included", "[services/shorten][keys]") {
  Admin a;
  std::vector<int64_t> ids;
  for (const char* name : {"one", "two", "three"}) {
    absl::StatusOr<CreatedApiKey> created = a.admin.Create(Spec(name, {"shorten"}));
    REQUIRE_THAT(created, IsOk());
    ids.push_back(created->record.id);
  }
  REQUIRE_THAT(a.admin.Revoke(ids[0]), IsOk());
  absl::StatusOr<std::vector<auth::ApiKeyRecord>> listed = a.admin.List();
  REQUIRE_THAT(listed, IsOk());
  REQUIRE(listed->size() == 3);
  CHECK((*listed)[0].name == "one");
  CHECK((*listed)[0].revoke_time.has_value());
  CHECK((*listed)[1].name == "two");
  CHECK((*listed)[2].name == "three");
  CHECK_FALSE((*listed)[2].revoke_time.has_value());
}

TEST_CASE("Revoke stamps the clock's time once; an unknown id is NOT_FOUND",
          "[services/shorten][keys]") {
  Admin a;
  absl::StatusOr<CreatedApiKey> created = a.admin.Create(Spec("n", {"shorten"}));
  REQUIRE_THAT(created, IsOk());
  const absl::Time first = a.clock.Now();
  absl::StatusOr<auth::ApiKeyRecord> revoked = a.admin.Revoke(created->record.id);
  REQUIRE_THAT(revoked, IsOk());
  CHECK(revoked->revoke_time == StoreTime(first));
  a.clock.Advance(absl::Hours(1));
  revoked = a.admin.Revoke(created->record.id);
  REQUIRE_THAT(revoked, IsOk());
  CHECK(revoked->revoke_time == StoreTime(first));
  CHECK_THAT(a.admin.Revoke(created->record.id + 100),
             HasCodeAndMessage(absl::StatusCode::kNotFound,
                               absl::StrCat("no api key with id ", created->record.id + 100)));
}

// A private directory for bootstrap key files, removed afterwards.
struct TempDir {
  TempDir() { std::filesystem::create_directory(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string File(const std::string& name) const { return (path / name).string(); }
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / absl::StrCat("key-admin-test-", ::getpid());
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

TEST_CASE("without a bootstrap file a new admin key is written there and stored once",
          "[services/shorten][keys]") {
  Admin a;
  TempDir dir;
  const std::string file = dir.File("admin.key");
  REQUIRE_THAT(a.admin.EnsureBootstrapAdminKey(file), IsOk());
  const std::string content = ReadFile(file);
  REQUIRE(absl::EndsWith(content, "\n"));
  const std::string key = content.substr(0, content.size() - 1);
  CHECK(absl::StartsWith(key, auth::kApiKeyPrefix));
  CHECK(key.size() == auth::kApiKeyLength);
  struct stat st;
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  absl::StatusOr<auth::ApiKeyRecord> stored = a.keys.FindByHash(auth::HashApiKey(key));
  REQUIRE_THAT(stored, IsOk());
  CHECK(stored->name == "bootstrap-admin");
  CHECK(stored->tenant == "admin");
  CHECK(stored->scopes == auth::ScopeSet{auth::Scope::kAdmin});
  // A restart finds the file and the key: nothing new.
  REQUIRE_THAT(a.admin.EnsureBootstrapAdminKey(file), IsOk());
  CHECK(ReadFile(file) == content);
  CHECK(a.stored() == 1);
}

TEST_CASE("a bootstrap file's own key is stored as the admin key", "[services/shorten][keys]") {
  Admin a;
  TempDir dir;
  const std::string file = dir.File("admin.key");
  const std::string key = "my-own-admin-key-of-at-least-32-characters";
  REQUIRE_THAT(CreatePrivateFile(file, "  " + key + "\n\n", "test"), IsOk());
  REQUIRE_THAT(a.admin.EnsureBootstrapAdminKey(file), IsOk());
  absl::StatusOr<auth::ApiKeyRecord> stored = a.keys.FindByHash(auth::HashApiKey(key));
  REQUIRE_THAT(stored, IsOk());
  CHECK(stored->scopes.Has(auth::Scope::kAdmin));
  CHECK(a.stored() == 1);
}

TEST_CASE("a bootstrap file that is malformed, not admin or revoked stops the start",
          "[services/shorten][keys]") {
  Admin a;
  TempDir dir;
  const std::string short_key = dir.File("short.key");
  REQUIRE_THAT(CreatePrivateFile(short_key, "too-short\n", "test"), IsOk());
  CHECK_THAT(a.admin.EnsureBootstrapAdminKey(short_key),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               absl::StrCat("--bootstrap_admin_key_file: the key in ", short_key)));

  // A key that exists without the admin scope.
  absl::StatusOr<CreatedApiKey> tenant = a.admin.Create(Spec("campaigns", {"shorten"}));
  REQUIRE_THAT(tenant, IsOk());
  const std::string not_admin = dir.File("tenant.key");
  REQUIRE_THAT(CreatePrivateFile(not_admin, tenant->key + "\n", "test"), IsOk());
  CHECK_THAT(a.admin.EnsureBootstrapAdminKey(not_admin),
             HasCodeAndMessage(absl::StatusCode::kFailedPrecondition,
                               absl::StrCat("is api key ", tenant->record.id,
                                            " \"campaigns\", which is not an admin key")));

  // A revoked admin key: remove the file for a new one.
  const std::string revoked = dir.File("revoked.key");
  REQUIRE_THAT(a.admin.EnsureBootstrapAdminKey(revoked), IsOk());
  const std::string key = ReadFile(revoked).substr(0, auth::kApiKeyLength);
  absl::StatusOr<auth::ApiKeyRecord> record = a.keys.FindByHash(auth::HashApiKey(key));
  REQUIRE_THAT(record, IsOk());
  REQUIRE_THAT(a.admin.Revoke(record->id), IsOk());
  CHECK_THAT(a.admin.EnsureBootstrapAdminKey(revoked),
             HasCodeAndMessage(absl::StatusCode::kFailedPrecondition,
                               "was revoked; remove the file to have a new admin key generated"));
  std::filesystem::remove(revoked);
  CHECK_THAT(a.admin.EnsureBootstrapAdminKey(revoked), IsOk());
  CHECK(ReadFile(revoked).substr(0, auth::kApiKeyLength) != key);

  // A file other users may write.
  const std::string writable = dir.File("writable.key");
  REQUIRE_THAT(CreatePrivateFile(writable, key + "\n", "test"), IsOk());
  REQUIRE(::chmod(writable.c_str(), 0666) == 0);
  CHECK_THAT(a.admin.EnsureBootstrapAdminKey(writable),
             HasCodeAndMessage(absl::StatusCode::kFailedPrecondition, "writable by other users"));
}

TEST_CASE("a replica that loses the race to store the bootstrap key accepts the winner's",
          "[services/shorten][keys]") {
  Admin a;
  TempDir dir;
  const std::string file = dir.File("admin.key");
  const std::string key = "shared-admin-key-of-the-whole-deployment";
  REQUIRE_THAT(CreatePrivateFile(file, key + "\n", "test"), IsOk());
  // This replica looks and finds nothing; another one stores the key before
  // this one's Create.
  a.plan.FailNext(1, absl::NotFoundError("no api key with this hash"), "FindByHash");
  auth::NewApiKey winner;
  winner.key_hash = auth::HashApiKey(key);
  winner.name = "bootstrap-admin";
  winner.tenant = "admin";
  winner.scopes = auth::ScopeSet{auth::Scope::kAdmin};
  REQUIRE_THAT(a.keys.Create(winner), IsOk());
  CHECK_THAT(a.admin.EnsureBootstrapAdminKey(file), IsOk());
  CHECK(a.plan.calls("Create") == 1);      // refused: ALREADY_EXISTS
  CHECK(a.plan.calls("FindByHash") == 2);  // and looked again
  CHECK(a.stored() == 1);
}

TEST_CASE("a store outage while ensuring the bootstrap key stops the start",
          "[services/shorten][keys]") {
  Admin a;
  TempDir dir;
  a.plan.FailNext(1, absl::UnavailableError("database unavailable"), "FindByHash");
  CHECK_THAT(a.admin.EnsureBootstrapAdminKey(dir.File("admin.key")),
             HasCode(absl::StatusCode::kUnavailable));
}

}  // namespace
}  // namespace shortener::service
