// PgClickStore's reads: Stats and HumanTotal (the writes are in
// pg_click_store.cc).
#include <pqxx/pqxx>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/clicks/pg/pg_click_store.h"
#include "lib/clicks/pg/queries.h"
#include "lib/common/status_macros.h"
#include "lib/pg/arrays.h"

namespace shortener::clicks {
namespace {

std::vector<CountedValue>* TopList(ClickStats& stats, const std::string& kind) {
  if (kind == "browser") return &stats.top_browsers;
  if (kind == "os") return &stats.top_os;
  if (kind == "device") return &stats.top_devices;
  if (kind == "country") return &stats.top_countries;
  if (kind == "referrer") return &stats.top_referrers;
  return nullptr;
}

}  // namespace

absl::StatusOr<ClickStats> PgClickStore::Stats(int64_t link_id, absl::Time start, absl::Time end,
                                               StatsGranularity granularity) {
  SHORTENER_ASSIGN_OR_RETURN(const BucketRange range, BucketRangeOf(start, end, granularity));
  ClickStats stats;
  stats.buckets = range.ZeroBuckets();
  const std::string from = pg::PgTimestamp(range.first);
  const std::string to = pg::PgTimestamp(range.end);
  const std::string unit = granularity == StatsGranularity::kHour ? "hour" : "day";
  absl::Status status = pool_.Run("read click stats", Deadline(), [&](pqxx::connection& conn) {
    // Read committed (pqxx's read_transaction): each statement sees the
    // batches committed when it starts, so a batch committed between them
    // can be in the counts but not yet in the uniques and tops.
    pqxx::read_transaction tx(conn);
    for (const pqxx::row& row :
         tx.exec_prepared(pg_queries::kStatsCounts.name, link_id, from, to, unit)) {
      const int64_t i = range.IndexOf(absl::FromUnixSeconds(row[0].as<int64_t>()));
      if (i < 0) continue;  // cannot happen: the range is bucket-aligned
      StatsBucket& b = stats.buckets[i];
      (row[1].as<bool>() ? b.bot_clicks : b.human_clicks) += row[2].as<int64_t>();
      (row[1].as<bool>() ? stats.total_bot_clicks : stats.total_human_clicks) +=
          row[2].as<int64_t>();
    }
    for (const pqxx::row& row :
         tx.exec_prepared(pg_queries::kStatsUniques.name, link_id, from, to, unit)) {
      if (row[0].is_null()) {
        stats.total_unique_visitors = row[1].as<int64_t>();
        continue;
      }
      const int64_t i = range.IndexOf(absl::FromUnixSeconds(row[0].as<int64_t>()));
      if (i >= 0) stats.buckets[i].unique_visitors = row[1].as<int64_t>();
    }
    for (const pqxx::row& row :
         tx.exec_prepared(pg_queries::kStatsTops.name, link_id, from, to, kMaxTopEntries)) {
      std::vector<CountedValue>* list = TopList(stats, row[0].as<std::string>());
      if (list != nullptr) list->push_back({row[1].as<std::string>(), row[2].as<int64_t>()});
    }
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

}  // namespace shortener::clicks
