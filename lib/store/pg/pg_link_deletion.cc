// PgLinkStore's deletion and bulk revocation (LinkStore::DeleteLinks,
// RevokeLinks and the erasure bookkeeping; migration 0014).
#include <algorithm>
#include <cstdint>
#include <pqxx/pqxx>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "lib/pg/arrays.h"
#include "lib/store/pg/pg_batch.h"
#include "lib/store/pg/pg_link_store.h"
#include "lib/store/pg/queries.h"

namespace shortener::store {
namespace {

using pg::ArrayLiteral;
using pg::PgTimestamp;

// The links of `rows` (each: its place in the call's ids, from 1, then the
// link columns), in the order of the call's ids.
std::vector<Link> LinksInCallOrder(const pqxx::result& rows) {
  std::vector<std::pair<int64_t, Link>> placed;
  placed.reserve(rows.size());
  for (const pqxx::row& row : rows) {
    std::optional<Link> link = ParseLink(row, 1);
    if (link.has_value()) placed.emplace_back(row[0].as<int64_t>(), *std::move(link));
  }
  std::sort(placed.begin(), placed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Link> links;
  links.reserve(placed.size());
  for (auto& [place, link] : placed) links.push_back(std::move(link));
  return links;
}

std::string IdsLiteral(absl::Span<const LinkRef> links) {
  ArrayLiteral ids;
  for (const LinkRef& link : links) ids.Add(link.id);
  return ids.Build();
}

}  // namespace

absl::StatusOr<std::vector<Link>> PgLinkStore::DeleteLinks(const LinkDeletion& deletion) {
  if (absl::Status valid = ValidateLinkRefs(deletion.links, "delete links"); !valid.ok()) {
    return valid;
  }
  if (deletion.links.empty()) return std::vector<Link>{};
  absl::flat_hash_map<int64_t, const std::string*> code_of;
  for (const LinkRef& link : deletion.links) code_of[link.id] = &link.code;
  std::vector<Link> deleted;
  absl::Status status = pool_.Run("delete links", Deadline(), [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    deleted = LinksInCallOrder(
        tx.exec_prepared(pg_queries::kDeleteLinks.name, IdsLiteral(deletion.links)));
    if (deleted.empty()) return absl::OkStatus();  // nothing to commit
    ArrayLiteral ids, owners, codes, aliases;
    for (const Link& link : deleted) {
      ids.Add(link.id);
      owners.Add(link.owner);
      codes.Add(*code_of[link.id]);
      aliases.Add(link.alias);
    }
    tx.exec_prepared(pg_queries::kRecordDeletions.name, ids.Build(), owners.Build(), codes.Build(),
                     aliases.Build(), PgTimestamp(deletion.when), deletion.actor,
                     PgTimestamp(deletion.alias_release_time), options_.invalidation_channel);
    tx.commit();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return deleted;
}

absl::StatusOr<std::vector<Link>> PgLinkStore::RevokeLinks(absl::Span<const LinkRef> links,
                                                           absl::Time when) {
  if (absl::Status valid = ValidateLinkRefs(links, "revoke links"); !valid.ok()) return valid;
  if (links.empty()) return std::vector<Link>{};
  ArrayLiteral codes;
  for (const LinkRef& link : links) codes.Add(link.code);
  std::vector<Link> revoked;
  absl::Status status = pool_.Run("revoke links", Deadline(), [&](pqxx::connection& conn) {
    pqxx::nontransaction tx(conn);
    revoked = LinksInCallOrder(tx.exec_prepared(pg_queries::kRevokeLinks.name, IdsLiteral(links),
                                                codes.Build(), PgTimestamp(when),
                                                options_.invalidation_channel));
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return revoked;
}

absl::StatusOr<std::vector<int64_t>> PgLinkStore::LinksToErase(int limit) {
  std::vector<int64_t> ids;
  absl::Status status = pool_.Run("read links to erase", Deadline(), [&](pqxx::connection& conn) {
    pqxx::nontransaction tx(conn);
    for (const pqxx::row& row : tx.exec_prepared(pg_queries::kLinksToErase.name, limit)) {
      ids.push_back(row[0].as<int64_t>());
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return ids;
}

absl::Status PgLinkStore::MarkErased(absl::Span<const int64_t> ids, absl::Time when) {
  if (ids.empty()) return absl::OkStatus();
  ArrayLiteral list;
  for (int64_t id : ids) list.Add(id);
  return pool_.Run("mark links erased", Deadline(), [&](pqxx::connection& conn) {
    pqxx::nontransaction tx(conn);
    tx.exec_prepared(pg_queries::kMarkErased.name, list.Build(), PgTimestamp(when));
    return absl::OkStatus();
  });
}

absl::StatusOr<int64_t> PgLinkStore::ReleaseDeletedLinks(absl::Time now) {
  int64_t forgotten = 0;
  absl::Status status = pool_.Run("release deleted links", Deadline(), [&](pqxx::connection& conn) {
    pqxx::nontransaction tx(conn);
    // Bounded statements; a round that freed aliases is followed by one
    // that forgets their links. 100 rounds at most per call: the next call
    // goes on.
    for (int round = 0; round < 100; ++round) {
      pqxx::row counts = tx.exec_prepared1(pg_queries::kReleaseDeleted.name, PgTimestamp(now));
      const int64_t freed = counts[0].as<int64_t>();
      const int64_t gone = counts[1].as<int64_t>();
      forgotten += gone;
      if (freed == 0 && gone < 1000) break;
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return forgotten;
}

}  // namespace shortener::store
