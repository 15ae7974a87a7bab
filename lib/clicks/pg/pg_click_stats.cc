// PgClickStore's reads: Stats (from the rollups) and HumanTotal (the writes
// are in pg_click_store.cc).
#include <pqxx/pqxx>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/clicks/pg/pg_click_store.h"
#include "lib/clicks/pg/queries.h"
#include "lib/clicks/rollups.h"
#include "lib/common/status_macros.h"
#include "lib/pg/arrays.h"

namespace shortener::clicks {
namespace {

std::vector<CountedValue>* TopList(ClickStats& stats, int dim) {
  switch (static_cast<Dimension>(dim)) {
    case Dimension::kBrowser:
      return &stats.top_browsers;
    case Dimension::kOs:
      return &stats.top_os;
    case Dimension::kDevice:
      return &stats.top_devices;
    case Dimension::kCountry:
      return &stats.top_countries;
    case Dimension::kReferrer:
      return &stats.top_referrers;
    case Dimension::kRegion:
      return &stats.top_regions;
    case Dimension::kCity:
      return &stats.top_cities;
    case Dimension::kNetwork:
      return &stats.top_networks;
  }
  return nullptr;  // a dimension number a newer binary stored
}

// The dimensions ClickStats has top lists for: all of them.
std::string ReportedDimensions() {
  pg::ArrayLiteral dims;
  for (Dimension d : kDimensions) dims.Add(static_cast<int64_t>(d));
  return dims.Build();
}

}  // namespace

absl::StatusOr<ClickStats> PgClickStore::Stats(int64_t link_id, absl::Time start, absl::Time end,
                                               StatsGranularity granularity) {
  return SubjectStats(LinkSubject(link_id), start, end, granularity);
}

absl::StatusOr<ClickStats> PgClickStore::SubjectStats(const Subject& subject, absl::Time start,
                                                      absl::Time end,
                                                      StatsGranularity granularity) {
  SHORTENER_ASSIGN_OR_RETURN(const BucketRange range, BucketRangeOf(start, end, granularity));
  ClickStats stats;
  stats.buckets = range.ZeroBuckets();
  const char kind_char = static_cast<char>(subject.kind);
  const std::string kind(1, kind_char);
  const std::string from = pg::PgTimestamp(range.first);
  const std::string to = pg::PgTimestamp(range.end);
  const std::string unit = granularity == StatsGranularity::kHour ? "hour" : "day";
  static const std::string* const dims = new std::string(ReportedDimensions());
  absl::Status status = pool_.Run("read click stats", Deadline(), [&](pqxx::connection& conn) {
    // One snapshot for both statements: a merge moves rows from pending to
    // the hourly tables atomically, so every row is read exactly once.
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(conn);
    for (const pqxx::row& row :
         tx.exec_prepared(pg_queries::kStatsRollupCounts.name, kind, subject.id, from, to, unit)) {
      const int64_t human = row[1].as<int64_t>();
      const int64_t bot = row[2].as<int64_t>();
      const int64_t visitors = row[3].as<int64_t>();
      if (row[0].is_null()) {
        stats.total_human_clicks = human;
        stats.total_bot_clicks = bot;
        stats.total_unique_visitors = visitors;
        continue;
      }
      const int64_t i = range.IndexOf(absl::FromUnixSeconds(row[0].as<int64_t>()));
      if (i < 0) continue;  // cannot happen: the range is bucket-aligned
      StatsBucket& b = stats.buckets[i];
      b.human_clicks = human;
      b.bot_clicks = bot;
      b.unique_visitors = visitors;
    }
    for (const pqxx::row& row :
         tx.exec_prepared(pg_queries::kStatsRollupTops.name, kind, subject.id, from, to, unit,
                          kMaxTopEntries, *dims)) {
      std::vector<CountedValue>* list = TopList(stats, row[0].as<int>());
      if (list != nullptr) list->push_back({row[1].as<std::string>(), row[2].as<int64_t>()});
    }
    tx.commit();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return stats;
}

absl::StatusOr<int64_t> PgClickStore::HumanTotal(int64_t link_id) {
  int64_t total = 0;
  absl::Status status = pool_.Run("read human clicks", Deadline(), [&](pqxx::connection& conn) {
    pqxx::nontransaction tx(conn);
    total = tx.exec_prepared1(pg_queries::kHumanTotal.name, link_id)[0].as<int64_t>();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return total;
}

absl::StatusOr<std::vector<int64_t>> PgClickStore::HumanTotals(absl::Span<const int64_t> link_ids) {
  std::vector<int64_t> totals(link_ids.size(), 0);
  if (link_ids.empty()) return totals;
  pg::ArrayLiteral ids;
  for (int64_t id : link_ids) ids.Add(id);
  absl::Status status = pool_.Run("read human clicks", Deadline(), [&](pqxx::connection& conn) {
    pqxx::nontransaction tx(conn);
    for (const pqxx::row& row : tx.exec_prepared(pg_queries::kHumanTotals.name, ids.Build())) {
      const int64_t i = row[0].as<int64_t>() - 1;
      if (i < 0 || i >= static_cast<int64_t>(totals.size())) {
        throw pqxx::data_exception("read human clicks: a row for no asked link");
      }
      totals[i] = row[1].as<int64_t>();
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return totals;
}

}  // namespace shortener::clicks
