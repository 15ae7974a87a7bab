#include "tests/bench/edge/edge_bench.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/bench/common/bench_util.h"
#include "tests/bench/edge/link_loader.h"
#include "tests/bench/edge/pg_reference.h"
#include "tests/bench/edge/proc_stats.h"

namespace shortener::bench::edge {
namespace {

// Every request a different code: the codes file is split over wrk's
// threads (thread t takes lines t, t + n, t + 2n, ...), each thread walks
// its share once, in order. A thread that runs out asks for /healthz
// instead and counts it: the driver reports those (a run must not wrap).
constexpr char kLuaScript[] = R"lua(-- edge_bench: each request the next unused code.
local counter = 0
local threads = {}

function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

function init(args)
  local nthreads = tonumber(args[2])
  requests = {}
  local i = 0
  for line in io.lines(args[1]) do
    if i % nthreads == tid then
      requests[#requests + 1] = wrk.format(nil, "/" .. line)
    end
    i = i + 1
  end
  next_index = 1
  if tid == 0 and requests[1] ~= nil then
    -- wrk calls request() once on thread 0 before the run, only to check
    -- that the request parses: that call must not use up a code.
    requests[0] = requests[1]
    next_index = 0
  end
  exhausted = 0
  fallback = wrk.format(nil, "/healthz")
end

function request()
  local r = requests[next_index]
  if r == nil then
    exhausted = exhausted + 1
    return fallback
  end
  next_index = next_index + 1
  return r
end

function done(summary, latency, reqs)
  local used, exh = 0, 0
  for _, t in ipairs(threads) do
    used = used + t:get("next_index") - 1
    exh = exh + t:get("exhausted")
  end
  io.write(string.format("edgebench codes_requested %d\nedgebench exhausted %d\n", used, exh))
end
)lua";

std::string CommandOutput(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[512];
  while (fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  pclose(p);
  return std::string(absl::StripAsciiWhitespace(out));
}

}  // namespace

absl::Status Run(const Config& c) {
  const absl::Time start = absl::Now();
  Report report;
  report.command = c.command;
  struct utsname u {};
  uname(&u);
  report.machine =
      absl::StrCat(sysconf(_SC_NPROCESSORS_ONLN), " CPUs (", CpuModel(), "), Linux ", u.release);
  report.versions =
      absl::StrCat(CommandOutput("/usr/sbin/nginx -v 2>&1"), ", ",
                   CommandOutput("/usr/bin/wrk -v 2>&1 | head -1 | cut -d' ' -f1,2"), ", ",
                   CommandOutput("/usr/lib/postgresql/15/bin/postgres --version"));
  Fixture f;
  absl::Status st = SetUp(c, f);
  if (st.ok() && c.Has("cached")) st = RunCached(c, f, /*pinned=*/true, report);
  if (st.ok() && c.Has("threads2")) st = RunCached(c, f, /*pinned=*/false, report);
  if (st.ok() && c.Has("uncached")) st = RunUncached(c, f, report);
  if (st.ok() && c.Has("memory")) st = RunMemory(c, f, report);
  if (st.ok() && !f.service->process().running()) {
    report.problems.push_back(absl::StrCat(
        "shorten-service is not running at the end; log tail:\n",
        f.service->Log().substr(f.service->Log().size() > 2000 ? f.service->Log().size() - 2000
                                                               : 0)));
  }
  if (!f.work_dir.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(f.work_dir, ignored);
  }
  if (!st.ok()) return st;
  report.total_seconds = absl::ToDoubleSeconds(absl::Now() - start);
  std::printf("%s", FormatReport(report).c_str());
  std::fflush(stdout);
  return absl::OkStatus();
}

absl::Status SetUp(const Config& c, Fixture& f) {
  absl::StatusOr<std::unique_ptr<testing::PgCluster>> pg = testing::PgCluster::Start();
  if (!pg.ok()) return pg.status();
  f.pg = *std::move(pg);
  f.postmaster = PostmasterPid(f.pg->socket_dir() + "/data");
  testing::ServiceProcessOptions so;
  so.conninfo = f.pg->ConnInfo();
  so.extra_flags = c.service_flags;
  absl::StatusOr<std::unique_ptr<testing::ServiceProcess>> service =
      testing::ServiceProcess::Start(so);
  if (!service.ok()) return service.status();
  f.service = *std::move(service);
  char templ[] = "/tmp/edge-bench-XXXXXX";
  if (mkdtemp(templ) == nullptr) return absl::InternalError("mkdtemp failed");
  f.work_dir = templ;
  std::ofstream lua(f.work_dir + "/each_code_once.lua");
  lua << kLuaScript;
  if (!lua) return absl::InternalError("cannot write the Lua script");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<testing::EdgeProcess>> StartEdge(const Config& c, Fixture& f,
                                                                std::vector<std::string> flags,
                                                                std::vector<std::string> launcher) {
  flags.insert(flags.end(), c.edge_flags.begin(), c.edge_flags.end());
  testing::EdgeProcessOptions eo;
  eo.service_target = f.service->target();
  eo.secret_file = f.service->secret_file();
  absl::StatusOr<std::string> key_file = f.service->EdgeKeyFile();
  if (!key_file.ok()) return key_file.status();
  eo.api_key_file = *key_file;
  eo.extra_flags = std::move(flags);
  eo.launcher = std::move(launcher);
  return testing::EdgeProcess::Start(eo);
}

std::string EdgeCommand(const Config& c, const std::vector<std::string>& flags,
                        const std::vector<std::string>& launcher) {
  std::vector<std::string> all = launcher;
  all.push_back("redirect-edge --listen=127.0.0.1:PORT --service=... --codec_secret_file=...");
  all.insert(all.end(), flags.begin(), flags.end());
  all.insert(all.end(), c.edge_flags.begin(), c.edge_flags.end());
  return absl::StrJoin(all, " ");
}

std::vector<std::string> UncachedEdgeFlags(int64_t entries) {
  // Room for every code (shards fill unevenly), nothing expires mid-run.
  const int64_t max_entries = std::max<int64_t>(2 * entries, 1000000);
  return {absl::StrCat("--cache_entries=", max_entries),
          absl::StrCat("--cache_bytes=", int64_t{1} << 30), "--cache_ttl=1h"};
}

absl::Status EnsureLinks(const Config& c, Fixture& f, int64_t count, Report& report) {
  (void)c;
  const int64_t have = static_cast<int64_t>(f.codes.size());
  if (have >= count) return absl::OkStatus();
  std::fprintf(stderr, "creating %lld links\n", static_cast<long long>(count - have));
  LinkLoadOptions lo;
  lo.target = f.service->target();
  lo.api_key = f.service->admin_key();
  lo.count = count - have;
  lo.inflight = 4;
  lo.tag = absl::StrCat("bulk", have);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<std::string>> codes = CreateLinks(lo);
  if (!codes.ok()) return codes.status();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  f.codes.insert(f.codes.end(), codes->begin(), codes->end());
  if (!report.creation) report.creation.emplace();
  report.creation->links += lo.count;
  report.creation->seconds += seconds;
  std::fprintf(stderr, "created %lld links in %.1f s; VACUUM ANALYZE, CHECKPOINT\n",
               static_cast<long long>(lo.count), seconds);
  return ExecSql(f.pg->ConnInfo(), "VACUUM ANALYZE links; CHECKPOINT");
}

absl::Status WriteCodes(const std::vector<std::string>& codes, const std::string& path) {
  std::ofstream out(path);
  for (const std::string& code : codes) out << code << '\n';
  return out ? absl::OkStatus() : absl::InternalError(absl::StrCat("cannot write ", path));
}

void CollectEdgeProblems(testing::EdgeProcess& edge, const std::string& label,
                         std::vector<std::string>* problems) {
  if (!edge.process().running()) {
    problems->push_back(absl::StrCat(label, ": the edge process is not running any more"));
  }
  int shown = 0, total = 0;
  const std::string log = edge.Log();
  const std::vector<absl::string_view> lines = absl::StrSplit(log, '\n', absl::SkipEmpty());
  std::fprintf(stderr, "%s edge log: %zu lines%s\n", label.c_str(), lines.size(),
               lines.empty() ? "" : absl::StrCat(", first: ", lines[0]).c_str());
  for (absl::string_view line : lines) {
    const std::string lower = absl::AsciiStrToLower(line);
    const bool bad = absl::StrContains(lower, "error") || absl::StrContains(lower, "warn") ||
                     absl::StrContains(lower, "fail") || absl::StrContains(lower, "fatal") ||
                     absl::StrContains(lower, "abort") || absl::StrContains(lower, "sanitizer") ||
                     (line.size() > 1 && (line[0] == 'E' || line[0] == 'W' || line[0] == 'F') &&
                      absl::ascii_isdigit(line[1]));
    if (!bad) continue;
    ++total;
    if (shown++ < 5) problems->push_back(absl::StrCat(label, " edge log: `", line, "`"));
  }
  if (total > shown) {
    problems->push_back(absl::StrCat(label, " edge log: ", total - shown, " more such lines"));
  }
}

}  // namespace shortener::bench::edge
