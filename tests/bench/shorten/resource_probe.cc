#include "tests/bench/shorten/resource_probe.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "tests/support/process_probe.h"

namespace shortener::bench {
namespace {

struct ProcStat {
  pid_t ppid = 0;
  double cpu_s = 0;
};

// /proc/<pid>/stat: "pid (comm) state ppid ... utime stime ...". comm may
// hold spaces and parentheses, so fields are counted after the last ')'.
bool ReadProcStat(pid_t pid, ProcStat* out) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(in, line)) return false;
  size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::vector<std::string> f = absl::StrSplit(line.substr(close + 1), ' ', absl::SkipEmpty());
  // f[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
  if (f.size() < 13) return false;
  int64_t ppid = 0, utime = 0, stime = 0;
  if (!absl::SimpleAtoi(f[1], &ppid) || !absl::SimpleAtoi(f[11], &utime) ||
      !absl::SimpleAtoi(f[12], &stime)) {
    return false;
  }
  static const double kTick = static_cast<double>(sysconf(_SC_CLK_TCK));
  out->ppid = static_cast<pid_t>(ppid);
  out->cpu_s = static_cast<double>(utime + stime) / kTick;
  return true;
}

// The postmaster and every process it forked (backends, WAL writer,
// checkpointer, ...): the server side of the database.
double ProcessTreeCpuSeconds(pid_t root) {
  if (root <= 0) return 0;
  double total = ProcessCpuSeconds(root);
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return total;
  while (struct dirent* e = readdir(dir)) {
    int64_t pid = 0;
    if (!absl::SimpleAtoi(e->d_name, &pid)) continue;
    ProcStat st;
    if (ReadProcStat(static_cast<pid_t>(pid), &st) && st.ppid == root) total += st.cpu_s;
  }
  closedir(dir);
  return total;
}

// First line of /proc/stat: "cpu user nice system idle iowait irq softirq
// steal ...", in ticks summed over every CPU.
void MachineCpuSeconds(double* busy, double* total) {
  std::ifstream in("/proc/stat");
  std::string label;
  in >> label;
  std::vector<int64_t> v;
  int64_t x = 0;
  for (int i = 0; i < 8 && (in >> x); ++i) v.push_back(x);
  if (label != "cpu" || v.size() < 8) return;
  static const double kTick = static_cast<double>(sysconf(_SC_CLK_TCK));
  int64_t idle = v[3] + v[4];
  int64_t sum = 0;
  for (int64_t t : v) sum += t;
  *busy = static_cast<double>(sum - idle) / kTick;
  *total = static_cast<double>(sum) / kTick;
}

pid_t ReadPostmasterPid(const std::string& data_dir) {
  std::ifstream in(data_dir + "/postmaster.pid");
  int64_t pid = 0;
  in >> pid;
  return static_cast<pid_t>(pid);
}

}  // namespace

double ProcessCpuSeconds(pid_t pid) {
  ProcStat st;
  return pid > 0 && ReadProcStat(pid, &st) ? st.cpu_s : 0;
}

ResourceDelta Diff(const ResourceSample& a, const ResourceSample& b) {
  ResourceDelta d;
  d.seconds = absl::ToDoubleSeconds(b.when - a.when);
  d.service_cpu_s = b.service_cpu_s - a.service_cpu_s;
  d.postgres_cpu_s = b.postgres_cpu_s - a.postgres_cpu_s;
  d.client_cpu_s = b.client_cpu_s - a.client_cpu_s;
  d.machine_busy_s = b.machine_busy_s - a.machine_busy_s;
  double total = b.machine_total_s - a.machine_total_s;
  d.machine_utilisation = total > 0 ? d.machine_busy_s / total : 0;
  d.write_transactions = b.next_xid - a.next_xid;
  d.wal_bytes = b.wal_bytes - a.wal_bytes;
  d.wal_syncs = b.wal_syncs - a.wal_syncs;
  d.service_rss_end_bytes = b.service_rss_bytes;
  d.service_peak_rss_bytes = b.service_peak_rss_bytes;
  return d;
}

absl::StatusOr<std::unique_ptr<ResourceProbe>> ResourceProbe::Create(pid_t service_pid,
                                                                     const std::string& pg_data_dir,
                                                                     const std::string& conninfo) {
  ConnPtr conn(PQconnectdb(conninfo.c_str()), &PQfinish);
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    return absl::UnavailableError(
        absl::StrCat("probe cannot connect to postgres: ", PQerrorMessage(conn.get())));
  }
  pid_t postmaster = ReadPostmasterPid(pg_data_dir);
  if (postmaster <= 0) {
    return absl::NotFoundError(absl::StrCat("no postmaster.pid in ", pg_data_dir));
  }
  return std::unique_ptr<ResourceProbe>(
      new ResourceProbe(service_pid, postmaster, std::move(conn)));
}

int64_t ResourceProbe::QueryInt(const char* sql) {
  PGresult* r = PQexec(conn_.get(), sql);
  int64_t v = 0;
  if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && !PQgetisnull(r, 0, 0)) {
    if (!absl::SimpleAtoi(PQgetvalue(r, 0, 0), &v)) v = 0;
  }
  PQclear(r);
  return v;
}

absl::Status ResourceProbe::Exec(const std::string& sql) {
  PGresult* r = PQexec(conn_.get(), sql.c_str());
  ExecStatusType st = PQresultStatus(r);
  std::string error = PQresultErrorMessage(r);
  PQclear(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    return absl::InternalError(absl::StrCat("bench setup SQL failed: ", error));
  }
  return absl::OkStatus();
}

ResourceSample ResourceProbe::Sample() {
  ResourceSample s;
  s.when = absl::Now();
  s.service_cpu_s = ProcessCpuSeconds(service_pid_);
  s.postgres_cpu_s = ProcessTreeCpuSeconds(postmaster_pid_);
  s.client_cpu_s = ProcessCpuSeconds(getpid());
  MachineCpuSeconds(&s.machine_busy_s, &s.machine_total_s);
  // xid8 -> text -> bigint: xid8 has no direct cast to bigint in PG 15.
  s.next_xid = QueryInt("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint");
  s.wal_bytes = QueryInt("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint");
  s.wal_syncs = QueryInt("SELECT wal_sync FROM pg_stat_wal");
  if (absl::StatusOr<testing::ProcessMemory> m = testing::ReadProcessMemory(service_pid_); m.ok()) {
    s.service_rss_bytes = m->rss_bytes;
    s.service_peak_rss_bytes = m->peak_rss_bytes;
  }
  return s;
}

bool ResourceProbe::ResetServicePeak() {
  if (service_pid_ <= 0) return false;
  std::ofstream out(absl::StrCat("/proc/", service_pid_, "/clear_refs"));
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace shortener::bench
