// Where the time of a benchmark window goes: CPU seconds of the service, of
// the PostgreSQL server processes, of this load generator and of the whole
// machine (from /proc), plus database counters that show how well writes are
// grouped (write transactions, WAL bytes, WAL fsyncs), and the service's
// resident memory (/proc/<pid>/status).
//
// A Sample() is a snapshot; the difference of two is the cost of the window
// between them. Not thread-safe: one driver thread samples.
#ifndef SHORTENER_TESTS_BENCH_SHORTEN_RESOURCE_PROBE_H_
#define SHORTENER_TESTS_BENCH_SHORTEN_RESOURCE_PROBE_H_

#include <libpq-fe.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace shortener::bench {

struct ResourceSample {
  absl::Time when;
  double service_cpu_s = 0;   // utime + stime of the service process
  double postgres_cpu_s = 0;  // postmaster and its live children
  double client_cpu_s = 0;    // this process
  double machine_busy_s = 0;  // /proc/stat, every CPU, all but idle/iowait
  double machine_total_s = 0;
  // Transaction ids handed out (xmax of a fresh snapshot): exact count of
  // transactions that wrote something, read without writing one ourselves.
  int64_t next_xid = 0;
  int64_t wal_bytes = 0;  // pg_current_wal_lsn(), exact
  // WAL fsyncs (pg_stat_wal.wal_sync). Backends publish it at most once a
  // second, so a delta over a window of several seconds is approximate.
  int64_t wal_syncs = 0;
  uint64_t service_rss_bytes = 0;       // VmRSS of the service now
  uint64_t service_peak_rss_bytes = 0;  // its VmHWM (since ResetServicePeak)
};

// The cost of a window, per operation where it makes sense.
struct ResourceDelta {
  double seconds = 0;
  double service_cpu_s = 0;
  double postgres_cpu_s = 0;
  double client_cpu_s = 0;
  double machine_busy_s = 0;
  double machine_utilisation = 0;  // busy / total, 0..1
  int64_t write_transactions = 0;
  int64_t wal_bytes = 0;
  int64_t wal_syncs = 0;
  // The service's memory (not a difference): VmRSS at the window's end and
  // VmHWM then, i.e. its peak since the last ResetServicePeak (the window's
  // start in shorten_bench) or, where that failed, since it started.
  uint64_t service_rss_end_bytes = 0;
  uint64_t service_peak_rss_bytes = 0;
};
ResourceDelta Diff(const ResourceSample& before, const ResourceSample& after);

class ResourceProbe {
 public:
  // `service_pid` may be 0 (no service yet); `pg_data_dir` holds
  // postmaster.pid; `conninfo` is where the counters are read.
  static absl::StatusOr<std::unique_ptr<ResourceProbe>> Create(pid_t service_pid,
                                                               const std::string& pg_data_dir,
                                                               const std::string& conninfo);
  // Fields it cannot read stay 0 (a probe must never stop a benchmark).
  ResourceSample Sample();

  // Restarts the service's VmHWM from its current VmRSS (writes 5 to
  // /proc/<pid>/clear_refs), so that the next samples' peak is the peak of
  // what follows. False if the kernel refused; then VmHWM stays the peak
  // since the service started.
  bool ResetServicePeak();

  // Runs one SQL command on the probe's connection (setup of bench tables).
  absl::Status Exec(const std::string& sql);

 private:
  using ConnPtr = std::unique_ptr<PGconn, void (*)(PGconn*)>;
  ResourceProbe(pid_t service_pid, pid_t postmaster_pid, ConnPtr conn)
      : service_pid_(service_pid), postmaster_pid_(postmaster_pid), conn_(std::move(conn)) {}
  int64_t QueryInt(const char* sql);

  pid_t service_pid_;
  pid_t postmaster_pid_;
  ConnPtr conn_;
};

// CPU seconds (utime + stime) of one process; 0 if it is gone.
double ProcessCpuSeconds(pid_t pid);

}  // namespace shortener::bench

#endif  // SHORTENER_TESTS_BENCH_SHORTEN_RESOURCE_PROBE_H_
