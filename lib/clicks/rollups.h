// Click rollups, the pure part: what a batch of clicks adds to the rollups
// that GetClickStats reads (per subject and UTC hour: human and bot clicks,
// the human visitors for the unique-visitor sketch, and human and bot clicks
// per value of each dimension), and the rules every ClickStore applies to
// them. No I/O, no clock. docs/analytics.md, "Rollups", is the full story.
//
// A subject is what a rollup counts the clicks of: every click counts under
// its link, and under each label (campaign) its link carried when the click
// was counted (SubjectsOf). The stores, their SQL and their reads take
// subjects, not link ids.
//
// Thread safety: stateless functions and plain values.
#ifndef SHORTENER_LIB_CLICKS_ROLLUPS_H_
#define SHORTENER_LIB_CLICKS_ROLLUPS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "lib/clicks/clicks.h"

namespace shortener::clicks {

// What the rollups count clicks by, one rollup per dimension (never per
// combination). The numbers are stored (click_rollup_*_dims.dim): never
// renumber, only add.
enum class Dimension : int16_t {
  kBrowser = 1,
  kOs = 2,
  kDevice = 3,
  kCountry = 4,
  kRegion = 5,   // ISO 3166-2 subdivision; empty until the City database fills it
  kCity = 6,     // empty until the City database fills it
  kNetwork = 7,  // ASN and organisation; empty until the ASN database fills it
  kReferrer = 8,
};

inline constexpr Dimension kDimensions[] = {
    Dimension::kBrowser, Dimension::kOs,   Dimension::kDevice,  Dimension::kCountry,
    Dimension::kRegion,  Dimension::kCity, Dimension::kNetwork, Dimension::kReferrer,
};

// The value of `row` in `dim` (a reference into the row); empty: unknown.
absl::string_view DimensionValue(const ClickRow& row, Dimension dim);

// Distinct values kept exactly per subject, hour and dimension. A value
// first seen once an hour already holds this many goes into that hour's
// "other" row (value ""), so that a link with millions of distinct
// referrers keeps at most kMaxValuesPerHour + 1 rows per hour for them. 256
// holds every country code. Daily rollups keep 24 times as many, so folding
// hours into a day never moves a value into "other".
inline constexpr int kMaxValuesPerHour = 256;
inline constexpr int kMaxValuesPerDay = 24 * kMaxValuesPerHour;

// The HyperLogLog sketches of unique visitors: 2^12 registers of 5 bits
// (the postgresql-hll parameters log2m = 12, regwidth = 5, expthresh = 0,
// sparse on), standard error 1.04 / sqrt(4096) = 1.625 %. No explicit
// form: a stored sketch holds registers, never a visitor's hash.
inline constexpr int kSketchLog2m = 12;
inline constexpr double kSketchStandardError = 0.01625;

// The 64-bit value a visitor is counted by in the sketches: the first 16 hex
// digits of its client id (which is already a SHA-256 prefix, so uniformly
// spread), read as a two's complement integer; a client id of another form
// (not ClientId's) is hashed with SHA-256 first. Stable across processes and
// versions: stored sketches depend on it.
int64_t VisitorHash(absl::string_view client_id);

enum class SubjectKind : char {
  kLink = 'l',   // id: the link's id
  kLabel = 'c',  // id: the label's id (labels.id, one per tenant, key and value)
};

struct Subject {
  SubjectKind kind = SubjectKind::kLink;
  int64_t id = 0;

  friend bool operator==(const Subject& a, const Subject& b) {
    return a.kind == b.kind && a.id == b.id;
  }
  friend bool operator<(const Subject& a, const Subject& b) {
    return a.kind != b.kind ? a.kind < b.kind : a.id < b.id;
  }
};

inline Subject LinkSubject(int64_t link_id) { return Subject{SubjectKind::kLink, link_id}; }
inline Subject LabelSubject(int64_t label_id) { return Subject{SubjectKind::kLabel, label_id}; }

// The label ids of the links of a batch, as they are when the batch is
// counted (read in the batch's transaction, or its equivalent): link id ->
// its labels' ids. A link that is absent has no labels.
using LinkLabels = absl::flat_hash_map<int64_t, std::vector<int64_t>>;

// The subjects a click counts under: its link, then each of its link's
// labels in `labels`.
std::vector<Subject> SubjectsOf(const ClickRow& row, const LinkLabels& labels = {});

// Clicks of one value of one dimension.
struct DimensionCount {
  Dimension dim = Dimension::kBrowser;
  std::string value;  // never empty: unknown values are not rolled up
  int64_t human = 0;
  int64_t bot = 0;
};

// What one batch adds to one subject's hour.
struct RollupDelta {
  Subject subject;
  absl::Time hour;
  int64_t human = 0;
  int64_t bot = 0;
  // VisitorHash of every distinct client id among the human clicks, sorted.
  std::vector<int64_t> visitors;
  // One entry per dimension and non-empty value, by dimension then value.
  std::vector<DimensionCount> dims;
};

// A batch's rows grouped into one delta per (subject, UTC hour), sorted by
// subject then hour: the per-batch rollup write of every ClickStore. A
// label's clicks from many links of the batch make one delta per hour.
std::vector<RollupDelta> GroupRollups(absl::Span<const ClickRow> rows,
                                      const LinkLabels& labels = {});
// The same over several batches written together (PgClickStore's grouped
// transactions): one delta per (subject, UTC hour) of all their rows.
std::vector<RollupDelta> GroupRollupsOfBatches(absl::Span<const absl::Span<const ClickRow>> batches,
                                               const LinkLabels& labels);
// The deltas of several batches, each GroupRollups of one batch without
// labels, summed per (subject, UTC hour), with every link delta also added
// to each label of its link in `labels`: equal to GroupRollupsOfBatches of
// the batches' rows. Works on deltas, not clicks (sorted merges, no
// hashing), so that PgClickStore groups each batch on its caller's thread
// and only this runs in the one transaction that writes them.
std::vector<RollupDelta> MergeRollupDeltas(
    absl::Span<const std::vector<RollupDelta>* const> batches, const LinkLabels& labels);
// The same without copying what needs no adding up: calls `fn` once per
// (subject, hour), in MergeRollupDeltas' order, with the subject and the
// sums (whose own `subject` is to be ignored: a label's sums may be a link's
// delta as it is). The references last for the call only.
void ForEachMergedDelta(absl::Span<const std::vector<RollupDelta>* const> batches,
                        const LinkLabels& labels,
                        const std::function<void(const Subject&, const RollupDelta&)>& fn);

// The per-bucket bound (kMaxValuesPerHour) for one bucket of one dimension:
// `adds` (one dimension, distinct values, "" for other allowed) go into a
// bucket that holds `stored` values besides other, `held` saying which.
// Values held, and "", are added as they are; new ones take the free
// places (limit - stored), most clicks (human + bot) first, ties by value;
// the rest are added to "". Returns what to add, one entry per value, by
// value. Both stores apply it (PgClickStore in its merge).
std::vector<DimensionCount> BoundToLimit(std::vector<DimensionCount> adds, size_t stored,
                                         const std::function<bool(const std::string&)>& held,
                                         int limit);

}  // namespace shortener::clicks

#endif  // SHORTENER_LIB_CLICKS_ROLLUPS_H_
