#include "lib/clicks/in_memory_click_store.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include "lib/common/status_macros.h"

namespace shortener::clicks {
namespace {

// Human clicks per value, as a ClickStats top list: most first, ties by
// value, empty values left out, at most kMaxTopEntries.
std::vector<CountedValue> TopList(const absl::flat_hash_map<std::string, int64_t>& counts) {
  std::vector<CountedValue> list;
  for (const auto& [value, clicks] : counts) {
    if (!value.empty()) list.push_back({value, clicks});
  }
  std::sort(list.begin(), list.end(), [](const CountedValue& a, const CountedValue& b) {
    return a.clicks != b.clicks ? a.clicks > b.clicks : a.value < b.value;
  });
  if (list.size() > static_cast<size_t>(kMaxTopEntries)) list.resize(kMaxTopEntries);
  return list;
}

}  // namespace

absl::StatusOr<RecordOutcome> InMemoryClickStore::Record(const std::string& batch_id,
                                                         absl::Span<const ClickRow> rows,
                                                         bool record_visits) {
  SHORTENER_RETURN_IF_ERROR(ValidateClickBatch(batch_id, rows));
  // The grouping PgClickStore's count upsert uses: hours as it keeps them.
  const std::vector<HourlyCount> grouped = GroupHourly(rows);
  RecordOutcome outcome;
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (!batches_.insert(batch_id).second) {
    outcome.duplicate = true;
    return outcome;
  }
  for (const HourlyCount& c : grouped) {
    HourCounts& hour = counts_[c.link_id][c.hour];
    (c.bot ? hour.bot : hour.human) += c.count;
  }
  if (record_visits) {
    visits_.insert(visits_.end(), rows.begin(), rows.end());
    outcome.visits = static_cast<int64_t>(rows.size());
  }
  outcome.counted = static_cast<int64_t>(rows.size());
  return outcome;
}

absl::StatusOr<ClickStats> InMemoryClickStore::Stats(int64_t link_id, absl::Time start,
                                                     absl::Time end, StatsGranularity granularity) {
  SHORTENER_ASSIGN_OR_RETURN(const BucketRange range, BucketRangeOf(start, end, granularity));
  ClickStats stats;
  stats.buckets = range.ZeroBuckets();
  std::vector<absl::flat_hash_set<std::string>> bucket_clients(stats.buckets.size());
  absl::flat_hash_set<std::string> clients;
  absl::flat_hash_map<std::string, int64_t> browsers, oses, devices, countries, referrers;
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (auto link = counts_.find(link_id); link != counts_.end()) {
    for (const auto& [hour, counts] : link->second) {
      const int64_t i = range.IndexOf(hour);
      if (i < 0) continue;
      stats.buckets[i].human_clicks += counts.human;
      stats.buckets[i].bot_clicks += counts.bot;
      stats.total_human_clicks += counts.human;
      stats.total_bot_clicks += counts.bot;
    }
  }
  // Uniques and top lists count human visits only, as PgClickStore's do.
  for (const ClickRow& visit : visits_) {
    if (visit.link_id != link_id || visit.bot) continue;
    const int64_t i = range.IndexOf(visit.time);
    if (i < 0) continue;
    bucket_clients[i].insert(visit.client_id);
    clients.insert(visit.client_id);
    ++browsers[visit.browser];
    ++oses[visit.os];
    ++devices[visit.device];
    ++countries[visit.country];
    ++referrers[visit.referrer_host];
  }
  lock.unlock();
  for (size_t i = 0; i < bucket_clients.size(); ++i) {
    stats.buckets[i].unique_visitors = static_cast<int64_t>(bucket_clients[i].size());
  }
  stats.total_unique_visitors = static_cast<int64_t>(clients.size());
  stats.top_browsers = TopList(browsers);
  stats.top_os = TopList(oses);
  stats.top_devices = TopList(devices);
  stats.top_countries = TopList(countries);
  stats.top_referrers = TopList(referrers);
  return stats;
}

absl::StatusOr<int64_t> InMemoryClickStore::HumanTotal(int64_t link_id) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  int64_t total = 0;
  if (auto link = counts_.find(link_id); link != counts_.end()) {
    for (const auto& [hour, counts] : link->second) total += counts.human;
  }
  return total;
}

size_t InMemoryClickStore::BatchCount() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return batches_.size();
}

std::vector<ClickRow> InMemoryClickStore::Visits() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return visits_;
}

}  // namespace shortener::clicks
