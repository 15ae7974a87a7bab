// ClickStore: the seam between the click logic (ClickRecorder, which turns
// an edge's batch into ClickRow values, and the statistics of GetClickStats
// and GetLink) and where clicks are kept.
// Implementations: PgClickStore (lib/clicks/pg, PostgreSQL, shared by every
// service replica) and InMemoryClickStore (unit tests of the logic above the
// seam). Both pass the contract suite in tests/lib/clicks/click_store_contract*.
//
// One interface for writes and reads, not a writer and a reader: what Stats
// and HumanTotal answer is defined by what Record wrote (its hourly counts
// and its rollups), so one
// implementation must own both halves and one contract tests them together.
//
// Exactly once: a batch id names one batch for the life of the store. The
// first Record of an id writes the batch, all of it or (on any error) none
// of it; every later Record of that id, by any replica and with whatever
// rows, writes nothing and says duplicate. Of concurrent calls with one id
// exactly one writes. So a caller whose Record failed, however (including
// an UNAVAILABLE after which the outcome is unknown), may send the same
// batch id again at any time, as often as needed.
//
// Errors every implementation uses: INVALID_ARGUMENT for a batch that
// ValidateClickBatch refuses and for a statistics range BucketRangeOf
// refuses (nothing is written or read); UNAVAILABLE when the storage is
// unreachable (retry later, with the same batch id). PgClickStore adds its
// own (ABORTED, DEADLINE_EXCEEDED, INTERNAL: see its header).
//
// Thread safety: implementations are thread-safe; every method may block
// (a database round trip): never call one on an event loop or a gRPC
// reactor thread.
#ifndef SHORTENER_LIB_CLICKS_CLICK_STORE_H_
#define SHORTENER_LIB_CLICKS_CLICK_STORE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "lib/clicks/click_stats.h"
#include "lib/clicks/clicks.h"
#include "lib/clicks/rollups.h"

namespace shortener::clicks {

// Bytes of a batch id at most (at least 1).
inline constexpr size_t kMaxBatchIdBytes = 128;

// What a click store's Record did with a batch.
struct RecordOutcome {
  // The batch id had been recorded before: nothing was written.
  bool duplicate = false;
  // Clicks added to the hourly counts (0 for a duplicate).
  int64_t counted = 0;
  // Visits stored (0 for a duplicate or without record_visits).
  int64_t visits = 0;
  // Links whose click budget this batch exhausted, for a store that keeps
  // budgets (PgClickStore: links.max_clicks, see its header). Empty for a
  // duplicate, and always empty from InMemoryClickStore, which knows no
  // budgets.
  std::vector<int64_t> exhausted;
};

// The checks every ClickStore applies to a batch before it writes anything:
// INVALID_ARGUMENT naming the problem for a batch id that is empty, longer
// than kMaxBatchIdBytes or holds a NUL byte; a row whose device is not
// desktop, mobile, tablet or bot (DeviceColumn's words); a NUL byte in a
// row's text field. OK otherwise.
absl::Status ValidateClickBatch(const std::string& batch_id, absl::Span<const ClickRow> rows);

class ClickStore {
 public:
  virtual ~ClickStore() = default;

  // Records batch `batch_id` of `rows` once (see "Exactly once" above):
  // each row adds one click to the count of (link_id, UTC hour of time,
  // bot), the same to the rollups of every subject it counts under
  // (SubjectsOf, lib/clicks/rollups.h: clicks, the visitor, one value per
  // dimension), and, when `record_visits`, one visit (the row itself, kept
  // for export and retention; statistics never read it). An empty batch
  // records its id only. Returns what was done; counted is rows.size() for
  // a batch recorded now, 0 for a duplicate. Errors: see the file comment;
  // after any error nothing of the batch was written, unless the outcome is
  // unknown (UNAVAILABLE), which a retry with the same id resolves.
  virtual absl::StatusOr<RecordOutcome> Record(const std::string& batch_id,
                                               absl::Span<const ClickRow> rows,
                                               bool record_visits) = 0;

  // Statistics of `link_id` over [start, end), widened to whole UTC buckets
  // (BucketRangeOf): every bucket, zeros included; all of it from the
  // rollups, with or without visits: human and bot clicks (exact), unique
  // visitors (distinct client ids of human clicks, per bucket and over the
  // whole range; exact in InMemoryClickStore, a HyperLogLog estimate in
  // PgClickStore, exact there too up to a few hundred visitors per hour) and
  // top lists (exact while no hour of the range held more than
  // kMaxValuesPerHour distinct values of that dimension; beyond, the values
  // first seen later in such an hour are missing from the list: never a
  // count above the truth). See ClickStats for the shape of the answer. A
  // link never clicked, or unknown, gets zeros. The answer is one state:
  // a batch recorded meanwhile is in all of it or in none.
  // INVALID_ARGUMENT for end before start or more buckets than
  // kMaxHourBuckets / kMaxDayBuckets; storage errors as Record's.
  virtual absl::StatusOr<ClickStats> Stats(int64_t link_id, absl::Time start, absl::Time end,
                                           StatsGranularity granularity) = 0;

  // The same for any subject (lib/clicks/rollups.h): a link's (what Stats
  // answers) or a label's (SubjectKind::kLabel: the clicks of every link
  // counted while it carried the label, in one answer from the label's own
  // rollups). An unknown subject gets zeros. Errors as Stats'.
  virtual absl::StatusOr<ClickStats> SubjectStats(const Subject& subject, absl::Time start,
                                                  absl::Time end, StatsGranularity granularity) = 0;

  // Human clicks of `link_id` ever counted (what GetLink reports); 0 for a
  // link never clicked or unknown. Storage errors as Record's.
  virtual absl::StatusOr<int64_t> HumanTotal(int64_t link_id) = 0;

  // HumanTotal of each of `link_ids`, in one read (ListLinks' page): result
  // i is link_ids[i]'s. Storage errors as Record's.
  virtual absl::StatusOr<std::vector<int64_t>> HumanTotals(absl::Span<const int64_t> link_ids) = 0;

  // Erases every click of `link_ids` (deleted links: the privacy case of
  // DeleteLink): their hourly counts, visits and own rollups
  // (SubjectKind::kLink; Stats and HumanTotal answer zeros for them), and
  // counts nothing for them ever after: a Record after this call (also
  // one of a batch that was in flight when it was made, or replayed from an
  // edge's spool days later) leaves their rows out, as if the batch had not
  // held them (RecordOutcome::counted and visits do not include them). The
  // store keeps the erased ids for that (PgClickStore: 16 bytes a link in
  // erased_links; link ids are never reused). The rollups of their labels
  // keep the clicks. `when` is the time of the erasure. Idempotent.
  // Storage errors as Record's; after an error some of it may be done, and
  // calling again finishes it.
  virtual absl::Status EraseLinks(absl::Span<const int64_t> link_ids, absl::Time when) = 0;
};

}  // namespace shortener::clicks

#endif  // SHORTENER_LIB_CLICKS_CLICK_STORE_H_
