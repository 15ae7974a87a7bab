#include "lib/store/pg/pg_link_store.h"

#include <cstdint>
#include <pqxx/pqxx>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/common/store_time.h"
#include "lib/pg/arrays.h"
#include "lib/pg/pg_error.h"
#include "lib/store/pg/pg_batch.h"
#include "lib/store/pg/queries.h"

namespace shortener::store {
namespace {

using pg::ArrayLiteral;
using pg::PgTimestamp;

// How one CreateLinks attempt reads and writes.
struct Attempt {
  WriteMode mode = WriteMode::kFast;
  bool read = true;         // false: assume every key of the batch is new
  bool found_keys = false;  // out: the read found existing keys
};

// One attempt: read, plan, write, commit. When a key of the batch exists
// after all (taken by a concurrent transaction since the read, or assumed new
// without a read): ABORTED (a write count came back short) or, in fast mode,
// ALREADY_EXISTS (a unique violation). Nothing is committed then. `keys` is
// read only when attempt.read (and must then be set).
absl::Status TryCreate(pqxx::connection& conn, absl::Span<const NewLink> links,
                       const BatchKeys* keys, const LabelIds& label_ids, size_t copy_min_links,
                       Attempt& attempt, CreatePlan& plan) {
  if (!attempt.read && attempt.mode == WriteMode::kFast && links.size() >= copy_min_links) {
    // A big batch of (presumably) new keys: COPY. Like the fast insert, a
    // key that exists after all throws unique_violation and the transaction
    // rolls back with nothing committed.
    pqxx::work tx(conn);
    attempt.found_keys = false;
    plan = PlanCreate(links, KeyState{});
    if (!CopyPlan(tx, links, plan, label_ids)) {
      // Not expected: without a read nothing is repointed.
      return absl::InternalError("create links: a plan made without a read repoints a row");
    }
    tx.commit();
    return absl::OkStatus();
  }
  if (!attempt.read && attempt.mode == WriteMode::kFast) {
    // Without a read the write statement is the whole attempt, and in fast
    // mode it either writes every row or fails (a unique violation aborts the
    // whole statement): run it on its own, autocommitted, which saves the
    // BEGIN and COMMIT round trips. Careful mode cannot: a short count must
    // roll back rows the statement did write.
    pqxx::nontransaction tx(conn);
    attempt.found_keys = false;
    plan = PlanCreate(links, KeyState{});
    if (!WritePlan(tx, links, plan, attempt.mode, label_ids)) {
      // Not expected: without a read nothing is repointed, and a fast insert
      // either writes every row or throws.
      return absl::InternalError("create links: an autocommitted write came back short");
    }
    return absl::OkStatus();
  }
  pqxx::work tx(conn);
  KeyState state;
  if (attempt.read) state = ReadKeyState(tx, *keys);
  attempt.found_keys = !state.requests.empty() || !state.dedupe.empty() || !state.aliases.empty();
  plan = PlanCreate(links, std::move(state));
  if (!WritePlan(tx, links, plan, attempt.mode, label_ids)) {
    return absl::AbortedError(
        "create links: concurrent transactions kept taking keys of this batch");
  }
  tx.commit();
  return absl::OkStatus();
}

absl::Status NotFoundId(int64_t id) {
  return absl::NotFoundError(absl::StrCat("no link with id ", id));
}

absl::Status NotFoundAlias(absl::string_view alias) {
  return absl::NotFoundError(absl::StrCat("no link with alias \"", absl::CHexEscape(alias), "\""));
}

}  // namespace

absl::StatusOr<std::unique_ptr<PgLinkStore>> PgLinkStore::Create(PgLinkStoreOptions options) {
  if (options.max_create_attempts < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_create_attempts: must be at least 1, got ", options.max_create_attempts));
  }
  if (options.copy_min_links < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("copy_min_links: must be at least 1, got ", options.copy_min_links));
  }
  if (options.invalidation_channel.empty()) {
    return absl::InvalidArgumentError("invalidation_channel: must not be empty");
  }
  if (options.acquire_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("acquire_timeout: must be positive");
  }
  absl::Status valid = pg::ConnectionPool::Validate(
      pg::ConnectionPoolOptions{options.conninfo, options.pool_size, nullptr});
  if (!valid.ok()) return valid;
  return std::unique_ptr<PgLinkStore>(new PgLinkStore(std::move(options)));
}

PgLinkStore::PgLinkStore(PgLinkStoreOptions options)
    : options_(std::move(options)),
      pool_(pg::ConnectionPoolOptions{options_.conninfo, options_.pool_size, PrepareLinkQueries}) {}

std::vector<absl::StatusOr<CreateOutcome>> PgLinkStore::CreateLinks(
    absl::Span<const NewLink> links) {
  if (links.empty()) return {};
  // Collected only if an attempt reads: a batch written without a read (the
  // common case, see CreateWithRetries) has no use for them, and hashing,
  // validating and sorting 1000 keys is ~2 % of a BatchShorten's CPU.
  std::optional<BatchKeys> keys;
  CreatePlan plan;
  absl::Status status = pool_.Run("create links", Deadline(), [&](pqxx::connection& conn) {
    return CreateWithRetries(conn, links, keys, plan);
  });
  if (absl::IsAlreadyExists(status)) {
    // The only unique key written without ON CONFLICT is links.id.
    status = absl::InternalError(
        "create links: a link id of this batch exists already (ids must come from the allocator)");
  }
  if (!status.ok()) return std::vector<absl::StatusOr<CreateOutcome>>(links.size(), status);
  return std::move(plan.results);
}

absl::Status PgLinkStore::CreateWithRetries(pqxx::connection& conn, absl::Span<const NewLink> links,
                                            std::optional<BatchKeys>& keys, CreatePlan& plan) {
  // The unique indexes check every key on insert anyway. When the last batch
  // found none of its keys existing, skip the read: a violation (a replayed
  // request_id, a taken alias, an existing dedupe link) just sends this batch
  // down the normal path.
  Attempt attempt;
  attempt.read = !expect_new_keys_.load();
  absl::Status status;
  LabelIds label_ids;
  if (HasLabels(links)) {
    status = pg::CatchPqxx("create links: label ids", [&] {
      label_ids = EnsureLabels(conn, links);
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
  }
  bool lost = false;
  for (int i = 0; i < options_.max_create_attempts; ++i) {
    if (attempt.read && !keys.has_value()) keys = CollectKeys(links);
    status = pg::CatchPqxx("create links", [&] {
      return TryCreate(conn, links, attempt.read ? &*keys : nullptr, label_ids,
                       static_cast<size_t>(options_.copy_min_links), attempt, plan);
    });
    // A lost race or a wrong guess leaves nothing behind: the next attempt
    // reads what is committed and decides again. ABORTED covers deadlocks.
    lost = absl::IsAborted(status) ||
           (attempt.mode == WriteMode::kFast && absl::IsAlreadyExists(status));
    if (!lost) break;
    if (!attempt.read) expect_new_keys_.store(false);
    attempt = Attempt{WriteMode::kCareful, true, false};
  }
  if (lost) {
    return absl::AbortedError(absl::StrCat("create links: lost races for keys of this batch ",
                                           options_.max_create_attempts, " times"));
  }
  if (status.ok() && attempt.read) {
    bool has_keys = !keys->requests.empty() || !keys->dedupe.empty() || !keys->aliases.empty();
    if (has_keys) expect_new_keys_.store(!attempt.found_keys);
  }
  return status;
}

template <typename... Args>
absl::StatusOr<std::optional<Link>> PgLinkStore::QueryOneLink(const char* what, const char* query,
                                                              Args... args) {
  std::optional<Link> link;
  absl::Status status = pool_.Run(what, Deadline(), [&](pqxx::connection& conn) {
    pqxx::nontransaction tx(conn);
    pqxx::result rows = tx.exec_prepared(query, args...);
    if (!rows.empty()) link = ParseLink(rows[0], 0);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return link;
}

absl::StatusOr<Link> PgLinkStore::GetById(int64_t id) {
  absl::StatusOr<std::optional<Link>> link =
      QueryOneLink("get link", pg_queries::kGetById.name, id);
  if (!link.ok()) return link.status();
  if (!link->has_value()) return NotFoundId(id);
  return **std::move(link);
}

absl::StatusOr<Link> PgLinkStore::GetByAlias(const std::string& alias) {
  // Text PostgreSQL cannot hold cannot name a stored alias.
  if (!IsStorableText(alias)) return NotFoundAlias(alias);
  absl::StatusOr<std::optional<Link>> link =
      QueryOneLink("get link by alias", pg_queries::kGetByAlias.name, alias);
  if (!link.ok()) return link.status();
  if (!link->has_value()) return NotFoundAlias(alias);
  return **std::move(link);
}

absl::StatusOr<std::vector<absl::StatusOr<Link>>> PgLinkStore::GetByAliases(
    absl::Span<const std::string> aliases) {
  // Text PostgreSQL cannot hold cannot name a stored alias, and in the
  // array it would fail the whole statement: it is left out.
  ArrayLiteral list;
  for (const std::string& alias : aliases) {
    if (IsStorableText(alias)) list.Add(alias);
  }
  absl::flat_hash_map<std::string, Link> found;
  if (!list.empty()) {
    absl::Status status = pool_.Run("get links by alias", Deadline(), [&](pqxx::connection& conn) {
      pqxx::nontransaction tx(conn);
      for (const pqxx::row& row : tx.exec_prepared(pg_queries::kGetByAliases.name, list.Build())) {
        std::optional<Link> link = ParseLink(row, 0);
        if (link.has_value()) {
          found.emplace(row[pg_queries::kLinkColumnCount].as<std::string>(), *std::move(link));
        }
      }
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
  }
  std::vector<absl::StatusOr<Link>> result;
  result.reserve(aliases.size());
  for (const std::string& alias : aliases) {
    auto it = found.find(alias);
    if (it != found.end()) {
      result.push_back(it->second);
    } else {
      result.push_back(NotFoundAlias(alias));
    }
  }
  return result;
}

absl::StatusOr<std::vector<absl::StatusOr<Link>>> PgLinkStore::GetByIds(
    absl::Span<const int64_t> ids) {
  if (ids.empty()) return std::vector<absl::StatusOr<Link>>{};
  ArrayLiteral list;
  for (int64_t id : ids) list.Add(id);
  absl::flat_hash_map<int64_t, Link> found;
  absl::Status status = pool_.Run("get links", Deadline(), [&](pqxx::connection& conn) {
    pqxx::nontransaction tx(conn);
    for (const pqxx::row& row : tx.exec_prepared(pg_queries::kGetByIds.name, list.Build())) {
      std::optional<Link> link = ParseLink(row, 0);
      if (link.has_value()) found.emplace(link->id, *std::move(link));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  std::vector<absl::StatusOr<Link>> result;
  result.reserve(ids.size());
  for (int64_t id : ids) {
    auto it = found.find(id);
    if (it != found.end()) {
      result.push_back(it->second);
    } else {
      result.push_back(NotFoundId(id));
    }
  }
  return result;
}

absl::StatusOr<int64_t> PgLinkStore::FindLabelId(const std::string& tenant, const std::string& key,
                                                 const std::string& value) {
  // Text PostgreSQL cannot hold cannot name a stored label.
  if (!IsStorableText(tenant) || !IsStorableText(key) || !IsStorableText(value)) {
    return NoLabelError(tenant, key, value);
  }
  std::optional<int64_t> id;
  absl::Status status = pool_.Run("find label", Deadline(), [&](pqxx::connection& conn) {
    pqxx::nontransaction tx(conn);
    pqxx::result rows = tx.exec_prepared(pg_queries::kFindLabel.name, tenant, key, value);
    if (!rows.empty()) id = rows[0][0].as<int64_t>();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  if (!id.has_value()) return NoLabelError(tenant, key, value);
  return *id;
}

absl::StatusOr<Link> PgLinkStore::UpdateLink(const LinkUpdate& update) {
  if (absl::Status valid = ValidateLinkUpdate(update); !valid.ok()) return valid;
  if (update.code.size() >= 7999) {
    return absl::InvalidArgumentError("update link: the code to notify is too long for a NOTIFY");
  }
  // New labels get their ids first (autocommitted, as CreateLinks does):
  // they need the owner, which never changes.
  LabelIds label_ids;
  if (update.labels.has_value() && !update.labels->empty()) {
    absl::StatusOr<Link> current = GetById(update.id);
    if (!current.ok()) return current.status();
    NewLink carrier;
    carrier.owner = current->owner;
    carrier.long_url = "-";
    carrier.long_url_sha256 = std::string(32, '\0');
    carrier.labels = *update.labels;
    absl::Status made = pool_.Run("update link", Deadline(), [&](pqxx::connection& conn) {
      label_ids = EnsureLabels(conn, {&carrier, 1});
      return absl::OkStatus();
    });
    if (!made.ok()) return made;
  }
  std::optional<Link> result;
  absl::Status refused;
  absl::Status run = pool_.Run("update link", Deadline(), [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    pqxx::result rows = tx.exec_prepared(pg_queries::kLockLink.name, update.id);
    if (rows.empty()) {
      refused = absl::NotFoundError(absl::StrCat("no link with id ", update.id));
      return absl::OkStatus();
    }
    std::optional<Link> before = ParseLink(rows[0], 0);
    if (!before.has_value()) throw pqxx::data_exception("update link: the locked row is empty");
    if (before->revoke_time.has_value()) {
      refused = absl::FailedPreconditionError("link is revoked: a revoked link cannot be changed");
      return absl::OkStatus();
    }
    const bool held_key = rows[0][pg_queries::kLinkColumnCount].as<bool>();
    const int64_t human_clicks = rows[0][pg_queries::kLinkColumnCount + 1].as<int64_t>();
    const std::string stored_sha =
        absl::HexStringToBytes(rows[0][pg_queries::kLinkColumnCount + 2].as<std::string>());
    LinkUpdate stored = update;
    if (stored.expire_time.has_value() && stored.expire_time->has_value()) {
      stored.expire_time = StoreTime(**stored.expire_time);
    }
    Link after = ApplyUpdate(*before, stored);
    if (update.max_clicks.has_value()) {
      after.clicks_exhausted_time = ExhaustedAfter(after, human_clicks, StoreTime(update.when));
    }
    const std::vector<FieldChange> changes = DiffLink(*before, after);
    if (changes.empty()) {
      result = *std::move(before);
      return absl::OkStatus();
    }
    const std::string& sha = update.long_url_sha256.value_or(stored_sha);
    std::string sha_hex = "\\x";
    pg::AppendHex(sha, &sha_hex);
    // Label ids in key order, as CreateLinks writes them.
    std::optional<std::string> label_array;
    if (update.labels.has_value() && !after.labels.empty()) {
      ArrayLiteral labels;
      for (const auto& [key, value] : after.labels) {
        auto id = label_ids.find(std::make_tuple(after.owner, key, value));
        if (id == label_ids.end()) throw pqxx::data_exception("update link: a label has no id");
        labels.Add(id->second);
      }
      label_array = labels.Build();
    }
    const bool key_moves =
        held_key && (after.long_url != before->long_url || after.labels != before->labels ||
                     after.max_clicks != before->max_clicks);
    auto time_or_null = [](const std::optional<absl::Time>& t) {
      return t.has_value() ? std::optional<std::string>(PgTimestamp(*t)) : std::nullopt;
    };
    tx.exec_prepared(pg_queries::kUpdateLink.name, update.id, after.long_url, sha_hex,
                     time_or_null(after.expire_time), after.redirect_status, after.max_clicks,
                     time_or_null(after.clicks_exhausted_time), update.labels.has_value(),
                     label_array, key_moves);
    if (key_moves && KeepsDedupe(true, after)) {
      const int64_t key = DedupeKey(after.owner, sha, after.labels);
      // A concurrent creator holding the key uncommitted makes the take
      // fail: the link is then left without a key, as when another holds it.
      try {
        pqxx::subtransaction take(tx, "take_dedupe_key");
        take.exec_prepared(pg_queries::kTakeDedupeKey.name, update.id, key);
        take.commit();
      } catch (const pqxx::unique_violation&) {
      }
    }
    ArrayLiteral fields, olds, news;
    for (const FieldChange& change : changes) {
      fields.Add(change.field);
      olds.Add(change.old_value);
      news.Add(change.new_value);
    }
    tx.exec_prepared(pg_queries::kInsertHistory.name, update.id, PgTimestamp(update.when),
                     update.actor, fields.Build(), olds.Build(), news.Build());
    tx.exec_prepared(pg_queries::kNotify.name, options_.invalidation_channel, update.code);
    tx.commit();
    result = std::move(after);
    return absl::OkStatus();
  });
  if (!run.ok()) return run;
  if (!refused.ok()) return refused;
  return *std::move(result);
}

absl::StatusOr<std::vector<LinkChange>> PgLinkStore::LinkHistory(int64_t id) {
  std::vector<LinkChange> history;
  absl::Status run = pool_.Run("read link history", Deadline(), [&](pqxx::connection& conn) {
    pqxx::nontransaction tx(conn);
    int64_t change_no = 0;
    for (const pqxx::row& row : tx.exec_prepared(pg_queries::kLinkHistory.name, id)) {
      if (history.empty() || row[0].as<int64_t>() != change_no) {
        change_no = row[0].as<int64_t>();
        LinkChange change;
        change.time = absl::FromUnixMicros(row[1].as<int64_t>());
        change.actor = row[2].as<std::string>();
        history.push_back(std::move(change));
      }
      history.back().fields.push_back(
          {row[3].as<std::string>(), row[4].as<std::string>(), row[5].as<std::string>()});
    }
    return absl::OkStatus();
  });
  if (!run.ok()) return run;
  return history;
}

absl::StatusOr<Link> PgLinkStore::Revoke(int64_t id, absl::Time when, const std::string& code) {
  // NOTIFY payloads are text shorter than 8000 bytes.
  if (!IsStorableText(code) || code.size() >= 7999) {
    return absl::InvalidArgumentError(
        "revoke link: the code to notify is not text a NOTIFY can carry");
  }
  absl::StatusOr<std::optional<Link>> link =
      QueryOneLink("revoke link", pg_queries::kRevoke.name, id, PgTimestamp(when),
                   options_.invalidation_channel, code);
  if (!link.ok()) return link.status();
  if (link->has_value()) return **std::move(link);
  // Absent, or revoked already (idempotent: returned as it is, no NOTIFY).
  return GetById(id);
}

}  // namespace shortener::store
