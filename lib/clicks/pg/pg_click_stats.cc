// PgClickStore's reads: Stats and HumanTotal (the writes are in
// pg_click_store.cc).
#include <pqxx/pqxx>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "lib/clicks/pg/pg_click_store.h"
#include "lib/clicks/pg/queries.h"
#include "lib/store/pg/pg_arrays.h"

namespace shortener::clicks {
namespace {

// Rounds `t` down to a multiple of `step_s` seconds since the epoch, which
// for hours and days is a UTC boundary (Unix time has no leap seconds).
int64_t FloorTo(absl::Time t, int64_t step_s) {
  const int64_t s = absl::ToUnixSeconds(t);  // rounds toward negative infinity
  const int64_t r = s % step_s;
  return r < 0 ? s - r - step_s : s - r;
}

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
  if (end < start) return absl::InvalidArgumentError("end_time: before start_time");
  const bool hourly = granularity == StatsGranularity::kHour;
  const int64_t step = hourly ? 3600 : 86400;
  const int64_t first = FloorTo(start, step);
  int64_t last = FloorTo(end, step);  // exclusive, rounded up below
  if (absl::FromUnixSeconds(last) < end) last += step;
  const int64_t count = (last - first) / step;
  const int64_t max = hourly ? kMaxHourBuckets : kMaxDayBuckets;
  if (count > max) {
    return absl::InvalidArgumentError(absl::StrCat(
        "granularity: at most ", max, hourly ? " hourly" : " daily", " buckets, got ", count));
  }

  ClickStats stats;
  absl::flat_hash_map<int64_t, size_t> index;  // bucket start -> position
  for (int64_t i = 0; i < count; ++i) {
    index[first + i * step] = stats.buckets.size();
    stats.buckets.push_back(StatsBucket{absl::FromUnixSeconds(first + i * step)});
  }
  const std::string from = store::PgTimestamp(absl::FromUnixSeconds(first));
  const std::string to = store::PgTimestamp(absl::FromUnixSeconds(last));
  const std::string unit = hourly ? "hour" : "day";
  absl::Status status = pool_.Run("read click stats", Deadline(), [&](pqxx::connection& conn) {
    // One snapshot, so counts, uniques and tops agree with each other.
    pqxx::read_transaction tx(conn);
    for (const pqxx::row& row :
         tx.exec_prepared(pg_queries::kStatsCounts.name, link_id, from, to, unit)) {
      auto it = index.find(row[0].as<int64_t>());
      if (it == index.end()) continue;  // cannot happen: the range is bucket-aligned
      StatsBucket& b = stats.buckets[it->second];
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
      auto it = index.find(row[0].as<int64_t>());
      if (it != index.end()) stats.buckets[it->second].unique_visitors = row[1].as<int64_t>();
    }
    for (const pqxx::row& row :
         tx.exec_prepared(pg_queries::kStatsTops.name, link_id, from, to, kMaxTop)) {
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
