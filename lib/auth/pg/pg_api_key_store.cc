#include "lib/auth/pg/pg_api_key_store.h"

#include <optional>
#include <pqxx/pqxx>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/auth/pg/queries.h"
#include "lib/pg/arrays.h"
#include "lib/pg/pg_error.h"

namespace shortener::auth {
namespace {

void PrepareApiKeyQueries(pqxx::connection& conn) {
  for (const pg_queries::Query& q : pg_queries::kAllQueries) {
    conn.prepare(q.name, q.sql);
    conn.prepare_now(q.name);  // a schema problem shows at connect time
  }
}

// One row in the order of SHORTENER_API_KEY_COLUMNS. INTERNAL when the stored
// scopes or domains do not parse (written by something other than Create).
absl::StatusOr<ApiKeyRecord> ParseRow(const pqxx::row& row) {
  ApiKeyRecord r;
  r.id = row[0].as<int64_t>();
  r.key_hash = row[1].as<std::string>();
  r.name = row[2].as<std::string>();
  absl::StatusOr<ScopeSet> scopes = ScopeSet::Parse(row[3].as<std::string>());
  if (!scopes.ok()) {
    return absl::InternalError(absl::StrCat(
        "api key ", r.id, ": stored scopes do not parse: ", scopes.status().message()));
  }
  r.scopes = *std::move(scopes);
  absl::StatusOr<DomainAllowlist> domains = DomainAllowlist::Parse(row[4].as<std::string>());
  if (!domains.ok()) {
    return absl::InternalError(absl::StrCat(
        "api key ", r.id, ": stored domains do not parse: ", domains.status().message()));
  }
  r.allowed_domains = *std::move(domains);
  if (!row[5].is_null()) r.rate_per_second = row[5].as<double>();
  if (!row[6].is_null()) r.burst = row[6].as<int>();
  r.create_time = absl::FromUnixMicros(row[7].as<int64_t>());
  if (!row[8].is_null()) r.revoke_time = absl::FromUnixMicros(row[8].as<int64_t>());
  r.infrastructure = row[9].is_null();
  if (!r.infrastructure) r.tenant = row[9].as<std::string>();
  return r;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PgApiKeyStore>> PgApiKeyStore::Create(PgApiKeyStoreOptions options) {
  if (options.invalidation_channel.empty()) {
    return absl::InvalidArgumentError("invalidation_channel: must not be empty");
  }
  if (options.acquire_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("acquire_timeout: must be positive");
  }
  absl::Status valid = pg::ConnectionPool::Validate(
      pg::ConnectionPoolOptions{options.conninfo, options.pool_size, nullptr});
  if (!valid.ok()) return valid;
  return std::unique_ptr<PgApiKeyStore>(new PgApiKeyStore(std::move(options)));
}

PgApiKeyStore::PgApiKeyStore(PgApiKeyStoreOptions options)
    : options_(std::move(options)),
      pool_(
          pg::ConnectionPoolOptions{options_.conninfo, options_.pool_size, PrepareApiKeyQueries}) {}

template <typename... Args>
absl::StatusOr<std::vector<ApiKeyRecord>> PgApiKeyStore::Query(const char* what, const char* query,
                                                               Args&&... args) {
  std::vector<ApiKeyRecord> records;
  absl::Status status = pool_.Run(what, Deadline(), [&](pqxx::connection& conn) {
    pqxx::nontransaction tx(conn);
    pqxx::result rows = tx.exec_prepared(query, std::forward<Args>(args)...);
    records.reserve(rows.size());
    for (const pqxx::row& row : rows) {
      absl::StatusOr<ApiKeyRecord> record = ParseRow(row);
      if (!record.ok()) return record.status();
      records.push_back(*std::move(record));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return records;
}

absl::StatusOr<ApiKeyRecord> PgApiKeyStore::Create(const NewApiKey& key) {
  absl::Status valid = ValidateNewApiKey(key);
  if (!valid.ok()) return valid;
  absl::StatusOr<std::vector<ApiKeyRecord>> rows =
      Query("create api key", pg_queries::kCreate.name, key.key_hash, key.name,
            key.scopes.ToString(), key.allowed_domains.ToString(), key.rate_per_second, key.burst,
            key.infrastructure ? std::nullopt : std::optional<std::string>(key.tenant));
  if (absl::IsAlreadyExists(rows.status())) {
    // The only unique key besides the generated id.
    return absl::AlreadyExistsError("create api key: a key with this hash exists already");
  }
  if (!rows.ok()) return rows.status();
  if (rows->size() != 1) return absl::InternalError("create api key: insert returned no row");
  return std::move(rows->front());
}

absl::StatusOr<ApiKeyRecord> PgApiKeyStore::FindByHash(const std::string& key_hash) {
  // A malformed hash cannot be stored (CHECK), and non-UTF-8 text would fail
  // as a parameter: not found, without a round trip.
  if (!IsApiKeyHash(key_hash)) return absl::NotFoundError("no api key with this hash");
  absl::StatusOr<std::vector<ApiKeyRecord>> rows =
      Query("find api key", pg_queries::kFindByHash.name, key_hash);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return absl::NotFoundError("no api key with this hash");
  return std::move(rows->front());
}

absl::StatusOr<std::vector<ApiKeyRecord>> PgApiKeyStore::List() {
  return Query("list api keys", pg_queries::kList.name);
}

absl::StatusOr<ApiKeyRecord> PgApiKeyStore::Revoke(int64_t id, absl::Time when) {
  absl::StatusOr<std::vector<ApiKeyRecord>> rows =
      Query("revoke api key", pg_queries::kRevoke.name, id, pg::PgTimestamp(when),
            options_.invalidation_channel);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return absl::NotFoundError(absl::StrCat("no api key with id ", id));
  return std::move(rows->front());
}

}  // namespace shortener::auth
