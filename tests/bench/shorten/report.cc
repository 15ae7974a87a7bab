#include "tests/bench/shorten/report.h"

#include <algorithm>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "tests/bench/common/bench_util.h"

namespace shortener::bench {
namespace {

// Per-link cost in microseconds, or "-" when there was nothing to divide by.
// Below 20 µs (BatchShorten's range) one decimal: whole microseconds hide a
// 10 % change there.
std::string PerOpUs(double seconds, int64_t ops) {
  if (ops <= 0) return "-";
  const double us = seconds * 1e6 / static_cast<double>(ops);
  return absl::StrFormat(us < 20 ? "%.1f" : "%.0f", us);
}

// A load's rate over the mean of the pgbench runs around it.
double RatioOf(const ReportRow& r) {
  return r.reference_tps > 0 ? r.links_per_s / r.reference_tps : 0;
}

std::string ThroughputTable(const std::vector<ReportRow>& rows) {
  std::string out =
      "| run | links/s | pgbench around it (tps) | ratio to pgbench | target | latency | errors |\n"
      "| --- | ---: | ---: | ---: | --- | --- | ---: |\n";
  for (const ReportRow& r : rows) {
    // pgbench is the reference; rows without a target are diagnostics.
    std::string target = r.service_measured ? "-" : "reference";
    if (r.target_ratio > 0) {
      target = absl::StrFormat("≥ %.1f×", r.target_ratio);
      if (r.reference_tps > 0) {
        bool met = RatioOf(r) >= r.target_ratio && r.errors.value_or(0) == 0;
        absl::StrAppend(&target, met ? " met" : " **missed**");
      }
    }
    std::string reference = "-", ratio = "-";
    if (r.reference_tps > 0) {
      reference = absl::StrFormat("%.0f", r.reference_tps);
      ratio = absl::StrFormat("%.2f×", RatioOf(r));
    }
    absl::StrAppendFormat(&out, "| %s | %.0f | %s | %s | %s | %s | %s |\n", r.name, r.links_per_s,
                          r.service_measured ? reference : "-",
                          r.service_measured ? ratio : "1.00×", target, r.latency,
                          r.errors ? absl::StrCat(*r.errors) : "-");
  }
  return out;
}

std::string CostTable(const std::vector<ReportRow>& rows) {
  std::string out =
      "| run | service CPU µs/link | postgres CPU µs/link | load generator CPU µs/link "
      "| machine CPU µs/link | machine busy | links per write tx | WAL bytes/link "
      "| WAL fsyncs per 1000 links | other processes (cores) |\n"
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const ReportRow& r : rows) {
    const ResourceDelta& d = r.resources;
    std::string per_tx =
        d.write_transactions > 0
            ? absl::StrFormat("%.1f", static_cast<double>(r.ops) / d.write_transactions)
            : "-";
    std::string wal =
        r.ops > 0 ? absl::StrFormat("%.0f", static_cast<double>(d.wal_bytes) / r.ops) : "-";
    std::string syncs =
        r.ops > 0 ? absl::StrFormat("%.1f", 1000.0 * static_cast<double>(d.wal_syncs) / r.ops)
                  : "-";
    // Whatever else ran on the machine (builds, other benchmarks): large
    // values mean a noisy run.
    std::string other = "-";
    if (r.service_measured && d.seconds > 0) {
      double ours = d.service_cpu_s + d.postgres_cpu_s + d.client_cpu_s;
      other = absl::StrFormat("%.2f", std::max(0.0, d.machine_busy_s - ours) / d.seconds);
    }
    // pgbench's backends exit before the closing sample, so the server
    // tree's CPU is only meaningful for the gRPC runs (persistent pool).
    absl::StrAppendFormat(&out, "| %s | %s | %s | %s | %s | %.0f%% | %s | %s | %s | %s |\n", r.name,
                          r.service_measured ? PerOpUs(d.service_cpu_s, r.ops) : "-",
                          r.service_measured ? PerOpUs(d.postgres_cpu_s, r.ops) : "-",
                          r.service_measured ? PerOpUs(d.client_cpu_s, r.ops) : "-",
                          PerOpUs(d.machine_busy_s, r.ops), 100.0 * d.machine_utilisation, per_tx,
                          wal, syncs, other);
  }
  return out;
}

std::string MiB(uint64_t bytes) {
  return absl::StrFormat("%.1f", static_cast<double>(bytes) / (1 << 20));
}

// The service's resident memory: idle, with idle edges, and under each load
// (the rows the cost table has; pgbench leaves the service idle).
std::string MemoryTable(const ReportHeader& h, const std::vector<ReportRow>& rows) {
  std::string out = absl::StrFormat(
      "| service state | VmRSS (MiB) | VmHWM (MiB) |\n"
      "| --- | ---: | ---: |\n"
      "| idle: started, migrated, no call yet | %s | %s |\n",
      MiB(h.service_idle.rss_bytes), MiB(h.service_idle.peak_rss_bytes));
  if (h.idle_edges) {
    const IdleEdgesResult& e = *h.idle_edges;
    absl::StrAppendFormat(&out,
                          "| %d idle edges (a connection and a WatchInvalidations stream each): "
                          "%.1f KiB each (a service of their own) | %s | - |\n",
                          e.edges, e.bytes_per_edge() / 1024, MiB(e.rss_open_bytes));
  }
  for (const ReportRow& r : rows) {
    if (!r.service_measured) continue;
    absl::StrAppendFormat(&out, "| %s: VmRSS at the window's end, VmHWM %s | %s | %s |\n", r.name,
                          h.peak_per_window ? "the window's peak" : "the peak since start",
                          MiB(r.resources.service_rss_end_bytes),
                          MiB(r.resources.service_peak_rss_bytes));
  }
  return out;
}

// One line per target: the best run of each kind (e.g. the best
// BatchShorten in-flight count) against its target.
std::string Verdicts(const std::vector<ReportRow>& rows) {
  std::string out;
  for (double target : {1.5, 8.0}) {
    const ReportRow* best = nullptr;
    for (const ReportRow& r : rows) {
      if (r.target_ratio == target && r.reference_tps > 0 &&
          (best == nullptr || RatioOf(r) > RatioOf(*best))) {
        best = &r;
      }
    }
    if (best == nullptr) continue;
    double ratio = RatioOf(*best);
    absl::StrAppendFormat(&out, "- %s: %.0f links/s = %.2f× pgbench (target ≥ %.1f×): %s\n",
                          best->name, best->links_per_s, ratio, target,
                          ratio >= target && best->errors.value_or(0) == 0 ? "met" : "MISSED");
  }
  return out;
}

// Row i of the result is row i of the round with the median ratio to
// pgbench (with no reference: the median links/s).
std::vector<ReportRow> MedianRows(const std::vector<std::vector<ReportRow>>& rounds) {
  std::vector<ReportRow> out = rounds.front();
  for (size_t i = 0; i < out.size(); ++i) {
    std::vector<const ReportRow*> column;
    for (const auto& round : rounds) column.push_back(&round[i]);
    std::sort(column.begin(), column.end(), [](const ReportRow* a, const ReportRow* b) {
      if (a->reference_tps > 0 && b->reference_tps > 0) return RatioOf(*a) < RatioOf(*b);
      return a->links_per_s < b->links_per_s;
    });
    out[i] = *column[column.size() / 2];
  }
  return out;
}

// Each load's ratio to the pgbench runs around it, per round.
std::string RoundRatios(const std::vector<std::vector<ReportRow>>& rounds) {
  if (rounds.size() < 2) return "";
  std::string out = "Ratio to the pgbench runs right before and after, per round:\n";
  for (size_t i = 0; i < rounds.front().size(); ++i) {
    if (rounds.front()[i].reference_tps <= 0) continue;
    std::vector<double> ratios;
    for (const auto& round : rounds) ratios.push_back(RatioOf(round[i]));
    std::vector<std::string> cells;
    for (double x : ratios) cells.push_back(absl::StrFormat("%.2f×", x));
    std::sort(ratios.begin(), ratios.end());
    absl::StrAppendFormat(&out, "- %s: %s (median %.2f×)\n", rounds.front()[i].name,
                          absl::StrJoin(cells, ", "), ratios[ratios.size() / 2]);
  }
  return out + "\n";
}

}  // namespace

std::string FormatReport(const ReportHeader& h, const std::vector<std::vector<ReportRow>>& rounds) {
  std::string out;
  if (rounds.empty()) return out;
  const std::vector<ReportRow> rows = MedianRows(rounds);
  absl::StrAppend(&out, "Machine: ", h.nproc, " CPUs (nproc), ", h.cpu_model,
                  "; service, PostgreSQL and load generator share them.\n\n");
  absl::StrAppend(&out, "Command: `", h.command, "`\n\n");
  if (!h.service_flags.empty()) {
    absl::StrAppend(&out, "Service flags: `", h.service_flags, "`\n\n");
  }
  if (!h.pg_settings.empty()) {
    absl::StrAppend(&out, "PostgreSQL settings (both pgbench and the service): `", h.pg_settings,
                    "`\n\n");
  }
  if (!h.pgbench_command.empty()) {
    absl::StrAppend(&out, "Reference: `", h.pgbench_command, "`\n\n");
  }
  if (rounds.size() > 1) {
    absl::StrAppend(&out, "Rounds: ", rounds.size(),
                    "; each row is the round with the median "
                    "ratio to pgbench (pgbench: the median run).",
                    h.fresh_tables ? " Link tables emptied before every round (pgbench "
                                     "recreates its table for every run)."
                                   : " Link tables kept between rounds (they grow).",
                    "\n\n");
  }
  absl::StrAppend(&out, ThroughputTable(rows), "\n", Verdicts(rows), "\n", RoundRatios(rounds),
                  CostTable(rows));
  absl::StrAppend(
      &out,
      "\nCPU columns: per link created in the measured window (the pgbench row: per row "
      "inserted, whole run; a diagnostic row: per call). \"links per write tx\" is links / "
      "transaction ids consumed: "
      "the average group-commit batch. WAL fsyncs come from pg_stat_wal (published by "
      "backends about once a second: approximate).\n\n");
  absl::StrAppend(
      &out, MemoryTable(h, rows),
      "\nMemory: the service process's VmRSS (resident now) and VmHWM (peak resident) from "
      "/proc/PID/status. ",
      h.peak_per_window
          ? "Under load, VmHWM is reset (/proc/PID/clear_refs) when the window opens, after "
            "the warm-up; what the warm-up and earlier loads left allocated stays in VmRSS "
            "(jemalloc keeps freed pages a while).\n"
          : "The kernel refused to reset VmHWM (/proc/PID/clear_refs): each load's VmHWM is "
            "the peak since the service started.\n");
  for (const ReportRow& r : rows) {
    if (r.statements.empty()) continue;
    absl::StrAppend(&out, "\nTop statements (pg_stat_statements), ", r.name, ":\n\n", r.statements);
  }
  return out;
}

}  // namespace shortener::bench
