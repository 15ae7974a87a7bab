// PgClickStore's upkeep of the rollups: the merge of pending rollup rows
// into the hourly rollups (MergePendingRollups) and the fold of old hours
// into days (FoldHourlyRollupsBefore). The merge adds the rows up here,
// not in SQL: grouping every element with unnest in the merge statement
// took PostgreSQL's CPU per click in the ingest benchmark from about 14 to
// about 23 µs, where these loops cost the service well under one. It reads
// the pending rows with binary results (lib/pg/binary_result.h): parsing
// their arrays as text was 14 % of the service's CPU in that benchmark.
#include <map>
#include <pqxx/pqxx>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "lib/clicks/pg/pg_click_store.h"
#include "lib/clicks/pg/queries.h"
#include "lib/clicks/rollups.h"
#include "lib/pg/arrays.h"
#include "lib/pg/binary_result.h"

namespace shortener::clicks {
namespace {

using pg::ArrayLiteral;

// (kind, subject, hour in epoch seconds).
using HourKey = std::tuple<char, int64_t, int64_t>;
// (kind, subject, hour, dimension).
using GroupKey = std::tuple<char, int64_t, int64_t, int16_t>;

struct HourSum {
  int64_t human = 0;
  int64_t bot = 0;
  absl::flat_hash_set<int64_t> visitors;
};

// What a merge adds, summed over its pending rows.
struct PendingSums {
  std::map<HourKey, HourSum> hours;
  std::map<GroupKey, absl::flat_hash_map<std::string, std::pair<int64_t, int64_t>>> groups;
};

PendingSums Sum(const pg::BinaryResult& taken) {
  PendingSums sums;
  for (int row = 0; row < taken.rows(); ++row) {
    const HourKey key{taken.Char(row, 0), taken.Int64(row, 1), taken.Int64(row, 2)};
    HourSum& hour = sums.hours[key];
    hour.human += taken.Int64(row, 3);
    hour.bot += taken.Int64(row, 4);
    for (int64_t v : taken.Int64Array(row, 5)) hour.visitors.insert(v);
    const std::vector<int16_t> dims = taken.Int16Array(row, 6);
    const std::vector<std::string> values = taken.TextArray(row, 7);
    const std::vector<int64_t> humans = taken.Int64Array(row, 8);
    const std::vector<int64_t> bots = taken.Int64Array(row, 9);
    if (values.size() != dims.size() || humans.size() != dims.size() ||
        bots.size() != dims.size()) {
      throw pqxx::data_exception("rollup merge: a pending row's arrays differ in length");
    }
    for (size_t i = 0; i < dims.size(); ++i) {
      auto& counts = sums.groups[GroupKey{std::get<0>(key), std::get<1>(key), std::get<2>(key),
                                          dims[i]}][values[i]];
      counts.first += humans[i];
      counts.second += bots[i];
    }
  }
  return sums;
}

void AddKey(char kind, int64_t subject, int64_t hour, ArrayLiteral& kinds, ArrayLiteral& subjects,
            ArrayLiteral& hours) {
  kinds.Add(absl::string_view(&kind, 1));
  subjects.Add(subject);
  hours.AddTime(absl::FromUnixSeconds(hour));
}

void UpsertHours(pqxx::work& tx, const PendingSums& sums) {
  ArrayLiteral kinds, subjects, hours, humans, bots, visitors;
  for (const auto& [key, sum] : sums.hours) {
    AddKey(std::get<0>(key), std::get<1>(key), std::get<2>(key), kinds, subjects, hours);
    humans.Add(sum.human);
    bots.Add(sum.bot);
    ArrayLiteral v;
    for (int64_t h : sum.visitors) v.Add(h);
    visitors.Add(v.Build());
  }
  tx.exec_prepared(pg_queries::kUpsertHours.name, kinds.Build(), subjects.Build(), hours.Build(),
                   humans.Build(), bots.Build(), visitors.Build());
}

// Adds each link's human clicks of the merge to link_click_totals, the
// rank ListLinks orders by (migration 0012), in the transaction that moves
// them into the rollups: each click adds to the rank once.
void UpsertLinkTotals(pqxx::work& tx, const PendingSums& sums) {
  std::map<int64_t, int64_t> human_by_link;  // ordered: one lock order
  for (const auto& [key, sum] : sums.hours) {
    if (std::get<0>(key) == static_cast<char>(SubjectKind::kLink) && sum.human > 0) {
      human_by_link[std::get<1>(key)] += sum.human;
    }
  }
  if (human_by_link.empty()) return;
  ArrayLiteral ids, humans;
  for (const auto& [id, human] : human_by_link) {
    ids.Add(id);
    humans.Add(human);
  }
  tx.exec_prepared(pg_queries::kUpsertLinkTotals.name, ids.Build(), humans.Build());
}

void UpsertDims(pqxx::work& tx, const PendingSums& sums) {
  if (sums.groups.empty()) return;
  // What the groups hold now (one writer at a time: nothing changes it
  // until this transaction ends).
  std::vector<const GroupKey*> order;
  ArrayLiteral kinds, subjects, hours, dims;
  for (const auto& [key, values] : sums.groups) {
    order.push_back(&key);
    AddKey(std::get<0>(key), std::get<1>(key), std::get<2>(key), kinds, subjects, hours);
    dims.Add(static_cast<int64_t>(std::get<3>(key)));
  }
  std::vector<absl::flat_hash_set<std::string>> held(order.size());
  for (const pqxx::row& row : tx.exec_prepared(pg_queries::kStoredValues.name, kinds.Build(),
                                               subjects.Build(), hours.Build(), dims.Build())) {
    const int64_t i = row[0].as<int64_t>() - 1;
    if (i >= 0 && i < static_cast<int64_t>(held.size())) held[i].insert(row[1].as<std::string>());
  }
  ArrayLiteral k, s, h, d, v, hu, bo;
  size_t i = 0;
  for (const auto& [key, values] : sums.groups) {
    const absl::flat_hash_set<std::string>& there = held[i++];
    std::vector<DimensionCount> adds;
    for (const auto& [value, counts] : values) {
      adds.push_back(DimensionCount{static_cast<Dimension>(std::get<3>(key)), value, counts.first,
                                    counts.second});
    }
    const size_t stored = there.size() - there.count("");
    for (const DimensionCount& c : BoundToLimit(
             std::move(adds), stored,
             [&there](const std::string& value) { return there.count(value) > 0; },
             kMaxValuesPerHour)) {
      AddKey(std::get<0>(key), std::get<1>(key), std::get<2>(key), k, s, h);
      d.Add(static_cast<int64_t>(std::get<3>(key)));
      v.Add(c.value);
      hu.Add(c.human);
      bo.Add(c.bot);
    }
  }
  tx.exec_prepared(pg_queries::kUpsertHourDims.name, k.Build(), s.Build(), h.Build(), d.Build(),
                   v.Build(), hu.Build(), bo.Build());
}

}  // namespace

absl::StatusOr<int64_t> PgClickStore::MergePendingRollups(int64_t max_rows) {
  int64_t moved = -1;
  absl::Status status = pool_.Run("merge click rollups", Deadline(), [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    if (!tx.exec_prepared1(pg_queries::kTryRollupLock.name)[0].as<bool>()) {
      return absl::OkStatus();  // another replica is at it
    }
    // Binary results: the rows' arrays arrive as they are stored, with no
    // array_out on the server and no text to parse here.
    const std::string limit = std::to_string(max_rows);
    const pg::BinaryResult taken =
        pg::BinaryResult::Exec(tx, pg_queries::kTakePending.sql, {&limit, 1});
    moved = taken.rows();
    if (moved > 0) {
      const PendingSums sums = Sum(taken);
      UpsertHours(tx, sums);
      UpsertLinkTotals(tx, sums);
      UpsertDims(tx, sums);
    }
    tx.commit();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return moved;
}

absl::StatusOr<std::vector<absl::Time>> PgClickStore::FoldHourlyRollupsBefore(absl::Time cutoff) {
  std::vector<absl::Time> folded;
  while (true) {
    bool done = false;
    absl::Status status = pool_.Run("fold click rollups", Deadline(), [&](pqxx::connection& conn) {
      pqxx::work tx(conn);
      // Waits for a merge (or another replica's fold, after which this
      // one finds nothing left to fold).
      tx.exec_prepared(pg_queries::kRollupLock.name);
      pqxx::row oldest =
          tx.exec_prepared1(pg_queries::kOldestHourBefore.name, pg::PgTimestamp(cutoff));
      if (oldest[0].is_null()) {
        done = true;
        return absl::OkStatus();
      }
      const absl::Duration day = absl::Hours(24);
      const absl::Time start =
          absl::UnixEpoch() +
          absl::Floor(absl::FromUnixSeconds(oldest[0].as<int64_t>()) - absl::UnixEpoch(), day);
      if (start + day > cutoff) {
        done = true;  // a cutoff inside a day leaves that day hourly
        return absl::OkStatus();
      }
      tx.exec_prepared1(pg_queries::kFoldDay.name, pg::PgTimestamp(start),
                        pg::PgTimestamp(start + day), kMaxValuesPerDay);
      tx.commit();
      folded.push_back(start);
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    if (done) return folded;
  }
}

}  // namespace shortener::clicks
