// Benchmark of ID allocation in process (design.md targets: >= 20 M IDs/s per
// core, <= 1 database round trip per 1000 IDs at steady state, no request
// waits on a lease). Starts a private Postgres cluster, leases from it with
// PgSegmentSource, and prints a markdown table. References measured in the
// same run: a bare std::atomic fetch_add (the floor of any allocator) and one
// lease round trip per ID (what allocating from the database directly costs).
//
//   tests/bench/idalloc/run.sh        (Release build: build/release/bin)
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "lib/idalloc/pg/pg_segment_source.h"
#include "lib/idalloc/segment_id_allocator.h"
#include "tests/bench/common/bench_util.h"
#include "tests/support/pg_cluster.h"

namespace shortener::idalloc {
namespace {

constexpr absl::Duration kRunTime = absl::Seconds(2);
constexpr int kBatch = 1024;  // ids between two looks at the stop flag

// Wraps a source to record how long each lease takes.
class TimedSource : public SegmentSource {
 public:
  explicit TimedSource(SegmentSource* inner) : inner_(inner) {}
  absl::StatusOr<Segment> Lease(const std::string& name, int64_t step,
                                absl::Time deadline) override {
    const absl::Time start = absl::Now();
    absl::StatusOr<Segment> segment = inner_->Lease(name, step, deadline);
    const absl::Duration took = absl::Now() - start;
    std::lock_guard<std::mutex> lock(mu_);
    max_ = std::max(max_, took);
    total_ += took;
    ++count_;
    return segment;
  }
  // Mean and max lease time since the last call; resets them.
  std::pair<absl::Duration, absl::Duration> TakeMeanAndMax() {
    std::lock_guard<std::mutex> lock(mu_);
    std::pair<absl::Duration, absl::Duration> r{count_ > 0 ? total_ / count_ : absl::ZeroDuration(),
                                                max_};
    max_ = total_ = absl::ZeroDuration();
    count_ = 0;
    return r;
  }

 private:
  SegmentSource* const inner_;
  std::mutex mu_;
  absl::Duration max_, total_;
  int64_t count_ = 0;
};

struct Row {
  std::string what;
  int threads = 1;
  double ids_per_second = 0;
  int64_t ids = 0;
  int64_t leases = -1;  // -1: not applicable
  int64_t waits = -1;
  int64_t errors = 0;
  absl::Duration max_stall;   // longest batch of kBatch ids
  absl::Duration lease_mean;  // lease round trip (allocator rows)
  absl::Duration lease_max;
};

// Runs `draw_batch` (which draws kBatch ids and returns the errors among them)
// in `threads` threads for kRunTime; fills ids and ids_per_second.
template <typename DrawBatch>
void RunThreads(int threads, DrawBatch draw_batch, Row& row) {
  std::atomic<bool> stop{false};
  std::atomic<int64_t> ids{0};
  std::atomic<int64_t> errors{0};
  std::mutex mu;
  absl::Duration max_stall;
  std::vector<std::thread> workers;
  const absl::Time start = absl::Now();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      int64_t n = 0;
      int64_t e = 0;
      absl::Duration stall;
      absl::Time last = absl::Now();
      while (!stop.load(std::memory_order_relaxed)) {
        e += draw_batch();
        n += kBatch;
        const absl::Time now = absl::Now();
        stall = std::max(stall, now - last);
        last = now;
      }
      ids.fetch_add(n);
      errors.fetch_add(e);
      std::lock_guard<std::mutex> lock(mu);
      max_stall = std::max(max_stall, stall);
    });
  }
  absl::SleepFor(kRunTime);
  stop.store(true);
  for (std::thread& w : workers) w.join();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  row.threads = threads;
  row.ids = ids.load();
  row.errors = errors.load();
  row.ids_per_second = static_cast<double>(row.ids) / seconds;
  row.max_stall = max_stall;
}

Row MeasureAllocator(SegmentIdAllocator& allocator, TimedSource& timed, int threads) {
  Row row;
  row.what = "SegmentIdAllocator::Next (Postgres source)";
  const absl::Time deadline = absl::Now() + absl::Minutes(5);
  const SegmentIdAllocator::Stats before = allocator.GetStats();
  RunThreads(
      threads,
      [&] {
        int64_t errors = 0;
        for (int i = 0; i < kBatch; ++i) errors += allocator.Next(deadline).ok() ? 0 : 1;
        return errors;
      },
      row);
  const SegmentIdAllocator::Stats after = allocator.GetStats();
  row.leases = after.leases - before.leases;
  row.waits = after.waits - before.waits;
  std::tie(row.lease_mean, row.lease_max) = timed.TakeMeanAndMax();
  return row;
}

Row MeasureBareAtomic(int threads) {
  Row row;
  row.what = "reference: bare std::atomic fetch_add";
  std::atomic<int64_t> counter{0};
  RunThreads(
      threads,
      [&] {
        int64_t sum = 0;
        for (int i = 0; i < kBatch; ++i) sum += counter.fetch_add(1);
        return sum < 0 ? 1 : 0;  // keeps the loop from being optimised away
      },
      row);
  return row;
}

// One lease per ID: allocating from the database directly.
Row MeasureLeasePerId(PgSegmentSource& source) {
  Row row;
  row.what = "reference: one lease round trip per id";
  const absl::Time start = absl::Now();
  absl::Time last = start;
  while (last - start < kRunTime) {
    if (source.Lease("links", 1, absl::Now() + absl::Seconds(5)).ok()) {
      ++row.ids;
    } else {
      ++row.errors;
    }
    const absl::Time now = absl::Now();
    row.lease_max = std::max(row.lease_max, now - last);
    last = now;
  }
  row.ids_per_second = static_cast<double>(row.ids) / absl::ToDoubleSeconds(last - start);
  row.leases = row.ids;
  if (row.ids > 0) row.lease_mean = (last - start) / row.ids;
  return row;
}

std::string Micros(absl::Duration d) {
  return absl::StrFormat("%.0f", absl::ToDoubleMicroseconds(d));
}

// "122.1 M" or "4.8 k".
std::string Rate(double per_second) {
  return per_second >= 1e6 ? absl::StrFormat("%.1f M", per_second / 1e6)
                           : absl::StrFormat("%.1f k", per_second / 1e3);
}

void PrintRow(const Row& r) {
  const bool leases = r.leases >= 0;
  std::string per_1000 = !leases || r.ids == 0
                             ? "-"
                             : absl::StrFormat("%.4f", 1000.0 * static_cast<double>(r.leases) /
                                                           static_cast<double>(r.ids));
  std::printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %lld |\n", r.what.c_str(), r.threads,
              Rate(r.ids_per_second).c_str(), Rate(r.ids_per_second / r.threads).c_str(),
              leases ? absl::StrCat(r.leases).c_str() : "-", per_1000.c_str(),
              r.waits < 0 ? "-" : absl::StrCat(r.waits).c_str(),
              r.max_stall > absl::ZeroDuration() ? Micros(r.max_stall).c_str() : "-",
              leases ? absl::StrCat(Micros(r.lease_mean), " / ", Micros(r.lease_max)).c_str() : "-",
              static_cast<long long>(r.errors));
}

int Run() {
  absl::StatusOr<std::unique_ptr<testing::PgCluster>> cluster = testing::PgCluster::Start();
  if (!cluster.ok()) {
    std::fprintf(stderr, "idalloc_bench: %s\n", cluster.status().ToString().c_str());
    return 1;
  }
  PgSegmentSource source((*cluster)->ConnInfo());
  TimedSource timed(&source);
  const IdAllocatorOptions options;  // production defaults
  SegmentIdAllocator allocator(&timed, options);
  // Warm-up: the step grows from initial_step to max_step while segments go fast.
  const absl::Time warm_up_end = absl::Now() + absl::Seconds(2);
  while (absl::Now() < warm_up_end) (void)allocator.Next(warm_up_end + absl::Seconds(5));
  (void)timed.TakeMeanAndMax();

  std::vector<Row> rows;
  rows.push_back(MeasureAllocator(allocator, timed, 1));
  rows.push_back(MeasureAllocator(allocator, timed, 2));
  rows.push_back(MeasureBareAtomic(1));
  rows.push_back(MeasureBareAtomic(2));
  PgSegmentSource reference_source((*cluster)->ConnInfo());
  rows.push_back(MeasureLeasePerId(reference_source));

  const SegmentIdAllocator::Stats stats = allocator.GetStats();
  std::printf(
      "ID allocation: %s per row; default options (max_step %lld, prefetch at %.0f%%); "
      "at the end: step %lld, segments kept ahead %lld\n\n",
      absl::FormatDuration(kRunTime).c_str(), static_cast<long long>(options.max_step),
      options.prefetch_threshold * 100, static_cast<long long>(stats.current_step),
      static_cast<long long>(stats.prefetch_depth));
  std::printf(
      "| what | threads | ids/s | ids/s per thread | leases (DB round trips) "
      "| round trips per 1000 ids | waits | longest stall (us per %d ids) "
      "| lease mean / max (us) | errors |\n",
      kBatch);
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const Row& r : rows) PrintRow(r);
  std::printf("\nallocator / bare atomic, 1 thread: %.2f; allocator / one lease per id: %.0fx\n",
              rows[0].ids_per_second / rows[2].ids_per_second,
              rows[0].ids_per_second / rows[4].ids_per_second);
  return 0;
}

}  // namespace
}  // namespace shortener::idalloc

int main() {
  shortener::bench::StopChildrenOnSignals("idalloc_bench");
  const int rc = shortener::idalloc::Run();
  shortener::bench::AwaitExitIfStoppingOnSignal();
  return rc;
}
