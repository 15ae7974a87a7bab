// InMemoryClickStore: the ClickStore of unit tests (ClickRecorder, the
// service's statistics) and of runs without a database. Same semantics as
// PgClickStore (both pass the contract suite in tests/lib/clicks): exactly once
// per batch id, hourly counts per bot flag, visits, rollups per subject and
// hour with the same per-hour value limit (lib/clicks/rollups.h), and the
// same Stats and HumanTotal answers (and SubjectStats, for links and
// labels, whose link -> label ids it asks a function given at
// construction, as PgClickStore reads links.label_ids), but for unique
// visitors, which it
// counts exactly (a set of VisitorHash values per hour, where PgClickStore
// keeps a HyperLogLog sketch); it never folds hours into days. Nothing
// durable, and no click budgets: it does not
// know links, so RecordOutcome::exhausted is always empty (budgets are
// tested on PgClickStore, which shares the links table). For failures, wrap
// it (tests/support/faulty_click_store.h).
//
// Thread-safe: one std::shared_mutex (seen by ThreadSanitizer); Record
// applies a whole batch under it, so a batch is atomic like a database
// transaction, and Stats reads one state.
#ifndef SHORTENER_LIB_CLICKS_IN_MEMORY_CLICK_STORE_H_
#define SHORTENER_LIB_CLICKS_IN_MEMORY_CLICK_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <shared_mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "lib/clicks/click_store.h"
#include "lib/clicks/rollups.h"

namespace shortener::clicks {

class InMemoryClickStore final : public ClickStore {
 public:
  // The label ids a link carries now (lib/clicks/rollups.h, LinkLabels);
  // called under the store's lock, once per distinct link of a batch.
  using LabelIdsOf = std::function<std::vector<int64_t>(int64_t link_id)>;

  // A store whose links carry no labels.
  InMemoryClickStore() = default;
  explicit InMemoryClickStore(LabelIdsOf label_ids_of) : label_ids_of_(std::move(label_ids_of)) {}
  InMemoryClickStore(const InMemoryClickStore&) = delete;
  InMemoryClickStore& operator=(const InMemoryClickStore&) = delete;

  // See ClickStore. Errors: INVALID_ARGUMENT only (ValidateClickBatch,
  // BucketRangeOf).
  absl::StatusOr<RecordOutcome> Record(const std::string& batch_id, absl::Span<const ClickRow> rows,
                                       bool record_visits) override;
  absl::StatusOr<ClickStats> Stats(int64_t link_id, absl::Time start, absl::Time end,
                                   StatsGranularity granularity) override;
  absl::StatusOr<int64_t> HumanTotal(int64_t link_id) override;
  absl::StatusOr<std::vector<int64_t>> HumanTotals(absl::Span<const int64_t> link_ids) override;
  absl::StatusOr<ClickStats> SubjectStats(const Subject& subject, absl::Time start, absl::Time end,
                                          StatsGranularity granularity) override;
  absl::Status EraseLinks(absl::Span<const int64_t> link_ids, absl::Time when) override;

  // For tests of what callers hand the store: the number of batch ids
  // recorded, and every visit recorded, in the order recorded (rows exactly
  // as Record received them).
  size_t BatchCount() const;
  std::vector<ClickRow> Visits() const;

 private:
  struct HourCounts {
    int64_t human = 0;
    int64_t bot = 0;
  };
  // One subject's hour of rollups.
  struct HourRollup {
    int64_t human = 0;
    int64_t bot = 0;
    absl::flat_hash_set<int64_t> visitors;  // VisitorHash of human visitors
    // Per dimension: value ("" for other) -> human, bot clicks.
    std::map<Dimension, absl::flat_hash_map<std::string, HourCounts>> dims;
  };

  const LabelIdsOf label_ids_of_;  // may be empty: no labels
  mutable std::shared_mutex mu_;
  // Guarded by mu_:
  absl::flat_hash_set<std::string> batches_;
  // Link id -> start of a UTC hour -> its clicks (click_counts' rows).
  absl::flat_hash_map<int64_t, std::map<absl::Time, HourCounts>> counts_;
  std::vector<ClickRow> visits_;
  // Subject -> start of a UTC hour -> its rollups.
  std::map<Subject, std::map<absl::Time, HourRollup>> rollups_;
  // Erased link id -> when (EraseLinks).
  absl::flat_hash_map<int64_t, absl::Time> erased_;
};

}  // namespace shortener::clicks

#endif  // SHORTENER_LIB_CLICKS_IN_MEMORY_CLICK_STORE_H_
