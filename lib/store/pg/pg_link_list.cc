// PgLinkStore::ListLinks (lib/store/link_list.h): one statement per walk
// (queries.h, "ListLinks"), the pages made by ListByScans. In a file of
// its own beside pg_link_store.cc, which holds the rest of the store.
#include <cstdint>
#include <limits>
#include <optional>
#include <pqxx/pqxx>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/pg/arrays.h"
#include "lib/store/create_planner.h"
#include "lib/store/pg/pg_batch.h"
#include "lib/store/pg/pg_link_store.h"
#include "lib/store/pg/queries.h"

namespace shortener::store {

using pg::ArrayLiteral;
using pg::PgTimestamp;

namespace {

const char* StatusWord(LinkStatus status) {
  switch (status) {
    case LinkStatus::kActive:
      break;
    case LinkStatus::kRevoked:
      return "revoked";
    case LinkStatus::kExpired:
      return "expired";
  }
  return "active";
}

const pg_queries::Query& WalkQuery(ScanPhase phase, bool by_label) {
  switch (phase) {
    case ScanPhase::kNewest:
      break;
    case ScanPhase::kOldest:
      return by_label ? pg_queries::kListOldestLabel : pg_queries::kListOldest;
    case ScanPhase::kClicked:
      return pg_queries::kListClicked;
    case ScanPhase::kUnclicked:
      return by_label ? pg_queries::kListUnclickedLabel : pg_queries::kListUnclicked;
  }
  return by_label ? pg_queries::kListNewestLabel : pg_queries::kListNewest;
}

}  // namespace

absl::StatusOr<LinkPage> PgLinkStore::ListLinks(const LinkListQuery& query) {
  if (query.page_size < 1 || query.page_size > kMaxPageSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("list links: page_size must be 1 to ", kMaxPageSize));
  }
  if (query.owner.empty()) return absl::InvalidArgumentError("list links: no owner");
  // Text PostgreSQL cannot hold is no stored owner or host: nothing matches.
  if (!IsStorableText(query.owner) || (query.host.has_value() && !IsStorableText(*query.host))) {
    return LinkPage{};
  }
  ArrayLiteral labels;
  for (int64_t id : query.label_ids) labels.Add(id);
  const std::string label_array = labels.Build();
  const std::optional<std::string> status =
      query.status.has_value() ? std::optional<std::string>(StatusWord(*query.status))
                               : std::nullopt;
  const std::string from =
      query.created_from.has_value() ? PgTimestamp(*query.created_from) : "-infinity";
  const std::string before =
      query.created_before.has_value() ? PgTimestamp(*query.created_before) : "infinity";
  const std::string now = PgTimestamp(query.now);
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

  auto scan = [&](const ScanRequest& request) -> absl::StatusOr<ScanResult> {
    // The cursor's first key and id; from the walk's start without one.
    std::string key;
    int64_t id = 0;
    if (request.phase == ScanPhase::kClicked) {
      key = absl::StrCat(request.after.has_value() ? request.after->clicks : kMax);
      id = request.after.has_value() ? request.after->id : kMax;
    } else if (request.after.has_value()) {
      key = PgTimestamp(request.after->create_time);
      id = request.after->id;
    } else {
      const bool oldest = request.phase == ScanPhase::kOldest;
      key = oldest ? "-infinity" : "infinity";
      id = oldest ? kMin : kMax;
    }
    const pg_queries::Query& walk = WalkQuery(request.phase, !query.label_ids.empty());
    ScanResult result;
    absl::Status run = pool_.Run("list links", Deadline(), [&](pqxx::connection& conn) {
      pqxx::nontransaction tx(conn);
      pqxx::result rows = tx.exec_prepared(walk.name, query.owner, label_array, status,
                                           query.status_negated, now, from, before, query.host, key,
                                           id, request.match_limit, request.scan_limit);
      for (const pqxx::row& row : rows) {
        ListCursor cursor;
        cursor.unclicked = request.phase == ScanPhase::kUnclicked;
        cursor.clicks = row[2].as<int64_t>();
        cursor.create_time = absl::FromUnixMicros(row[3].as<int64_t>());
        cursor.id = row[4].as<int64_t>();
        if (row[0].as<bool>() && static_cast<int>(result.matches.size()) < request.match_limit) {
          std::optional<Link> link = ParseLink(row, pg_queries::kListKeyColumns);
          if (!link.has_value()) {
            throw pqxx::data_exception("list links: a matched link has no row");
          }
          result.matches.push_back({*std::move(link), cursor});
        }
        if (row[1].as<int64_t>() == request.scan_limit) {
          result.budget_spent = true;
          result.last_scanned = cursor;
        }
      }
      return absl::OkStatus();
    });
    if (!run.ok()) return run;
    return result;
  };
  return ListByScans(query, scan);
}

}  // namespace shortener::store
