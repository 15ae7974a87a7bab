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
    if (!value.empty() && clicks > 0) list.push_back({value, clicks});
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
  RecordOutcome outcome;
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (!batches_.insert(batch_id).second) {
    outcome.duplicate = true;
    return outcome;
  }
  // Erased links' rows are left out, as if the batch had not held them.
  std::vector<ClickRow> kept;
  if (!erased_.empty() && std::any_of(rows.begin(), rows.end(), [this](const ClickRow& r) {
        return erased_.contains(r.link_id);
      })) {
    for (const ClickRow& r : rows) {
      if (!erased_.contains(r.link_id)) kept.push_back(r);
    }
    rows = kept;
  }
  // The grouping PgClickStore's count upsert uses: hours as it keeps them.
  const std::vector<HourlyCount> grouped = GroupHourly(rows);
  // The links' labels as they are now, under the lock (as PgClickStore
  // reads them in the batch's transaction).
  LinkLabels labels;
  if (label_ids_of_) {
    for (const HourlyCount& c : grouped) {
      if (labels.contains(c.link_id)) continue;
      labels[c.link_id] = label_ids_of_(c.link_id);
    }
  }
  const std::vector<RollupDelta> deltas = GroupRollups(rows, labels);
  for (const HourlyCount& c : grouped) {
    HourCounts& hour = counts_[c.link_id][c.hour];
    (c.bot ? hour.bot : hour.human) += c.count;
  }
  for (const RollupDelta& d : deltas) {
    HourRollup& hour = rollups_[d.subject][d.hour];
    hour.human += d.human;
    hour.bot += d.bot;
    hour.visitors.insert(d.visitors.begin(), d.visitors.end());
    // The bound PgClickStore's merge applies, per dimension.
    for (size_t i = 0; i < d.dims.size();) {
      const Dimension dim = d.dims[i].dim;
      std::vector<DimensionCount> adds;
      for (; i < d.dims.size() && d.dims[i].dim == dim; ++i) adds.push_back(d.dims[i]);
      auto& values = hour.dims[dim];
      const size_t stored = values.size() - values.count("");
      for (const DimensionCount& c : BoundToLimit(
               std::move(adds), stored,
               [&values](const std::string& v) { return values.count(v) > 0; },
               kMaxValuesPerHour)) {
        HourCounts& counts = values[c.value];
        counts.human += c.human;
        counts.bot += c.bot;
      }
    }
  }
  if (record_visits) {
    visits_.insert(visits_.end(), rows.begin(), rows.end());
    outcome.visits = static_cast<int64_t>(rows.size());
  }
  outcome.counted = static_cast<int64_t>(rows.size());
  return outcome;
}

absl::Status InMemoryClickStore::EraseLinks(absl::Span<const int64_t> link_ids, absl::Time when) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  for (int64_t id : link_ids) {
    erased_.try_emplace(id, when);
    counts_.erase(id);
    rollups_.erase(LinkSubject(id));
  }
  const absl::flat_hash_set<int64_t> ids(link_ids.begin(), link_ids.end());
  visits_.erase(std::remove_if(visits_.begin(), visits_.end(),
                               [&ids](const ClickRow& r) { return ids.contains(r.link_id); }),
                visits_.end());
  return absl::OkStatus();
}

absl::StatusOr<ClickStats> InMemoryClickStore::Stats(int64_t link_id, absl::Time start,
                                                     absl::Time end, StatsGranularity granularity) {
  return SubjectStats(LinkSubject(link_id), start, end, granularity);
}

absl::StatusOr<ClickStats> InMemoryClickStore::SubjectStats(const Subject& subject_wanted,
                                                            absl::Time start, absl::Time end,
                                                            StatsGranularity granularity) {
  SHORTENER_ASSIGN_OR_RETURN(const BucketRange range, BucketRangeOf(start, end, granularity));
  ClickStats stats;
  stats.buckets = range.ZeroBuckets();
  std::vector<absl::flat_hash_set<int64_t>> bucket_visitors(stats.buckets.size());
  absl::flat_hash_set<int64_t> visitors;
  absl::flat_hash_map<Dimension, absl::flat_hash_map<std::string, int64_t>> tops;
  std::shared_lock<std::shared_mutex> lock(mu_);
  // From the rollups only, as PgClickStore.
  if (auto subject = rollups_.find(subject_wanted); subject != rollups_.end()) {
    for (const auto& [hour, rollup] : subject->second) {
      const int64_t i = range.IndexOf(hour);
      if (i < 0) continue;
      stats.buckets[i].human_clicks += rollup.human;
      stats.buckets[i].bot_clicks += rollup.bot;
      stats.total_human_clicks += rollup.human;
      stats.total_bot_clicks += rollup.bot;
      bucket_visitors[i].insert(rollup.visitors.begin(), rollup.visitors.end());
      visitors.insert(rollup.visitors.begin(), rollup.visitors.end());
      for (const auto& [dim, values] : rollup.dims) {
        for (const auto& [value, counts] : values) tops[dim][value] += counts.human;
      }
    }
  }
  lock.unlock();
  for (size_t i = 0; i < bucket_visitors.size(); ++i) {
    stats.buckets[i].unique_visitors = static_cast<int64_t>(bucket_visitors[i].size());
  }
  stats.total_unique_visitors = static_cast<int64_t>(visitors.size());
  stats.top_browsers = TopList(tops[Dimension::kBrowser]);
  stats.top_os = TopList(tops[Dimension::kOs]);
  stats.top_devices = TopList(tops[Dimension::kDevice]);
  stats.top_countries = TopList(tops[Dimension::kCountry]);
  stats.top_referrers = TopList(tops[Dimension::kReferrer]);
  stats.top_regions = TopList(tops[Dimension::kRegion]);
  stats.top_cities = TopList(tops[Dimension::kCity]);
  stats.top_networks = TopList(tops[Dimension::kNetwork]);
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

absl::StatusOr<std::vector<int64_t>> InMemoryClickStore::HumanTotals(
    absl::Span<const int64_t> link_ids) {
  std::vector<int64_t> totals;
  totals.reserve(link_ids.size());
  for (int64_t id : link_ids) {
    SHORTENER_ASSIGN_OR_RETURN(int64_t total, HumanTotal(id));
    totals.push_back(total);
  }
  return totals;
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
