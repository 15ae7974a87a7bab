#include "tests/bench/shorten/pg_diagnostics.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace shortener::bench {
namespace {

using ConnPtr = std::unique_ptr<PGconn, void (*)(PGconn*)>;

absl::StatusOr<ConnPtr> Connect(const std::string& conninfo) {
  ConnPtr conn(PQconnectdb(conninfo.c_str()), &PQfinish);
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    return absl::UnavailableError(
        absl::StrCat("diagnostics cannot connect: ", PQerrorMessage(conn.get())));
  }
  return conn;
}

absl::Status Exec(PGconn* conn, const std::string& sql) {
  PGresult* r = PQexec(conn, sql.c_str());
  ExecStatusType st = PQresultStatus(r);
  std::string error = PQresultErrorMessage(r);
  PQclear(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    return absl::InternalError(absl::StrCat("`", sql, "` failed: ", error));
  }
  return absl::OkStatus();
}

// A statement's text shortened for a table cell: the first `n` characters,
// on one line, without characters that break markdown tables.
std::string Snippet(const char* sql, size_t n) {
  std::string s = absl::StrReplaceAll(sql, {{"\n", " "}, {"|", "/"}, {"  ", " "}});
  return s.size() <= n ? s : s.substr(0, n) + "…";
}

}  // namespace

absl::Status ConfigureCluster(testing::PgCluster& cluster, const std::vector<std::string>& settings,
                              bool statement_stats) {
  if (settings.empty() && !statement_stats) return absl::OkStatus();
  {
    absl::StatusOr<ConnPtr> conn = Connect(cluster.ConnInfo());
    if (!conn.ok()) return conn.status();
    for (const std::string& s : settings) {
      size_t eq = s.find('=');
      if (eq == std::string::npos || eq == 0) {
        return absl::InvalidArgumentError(absl::StrCat("--pg_settings: not name=value: ", s));
      }
      // Names and values come from our own command line, not from a client.
      absl::Status st = Exec(conn->get(), absl::StrCat("ALTER SYSTEM SET ", s.substr(0, eq), " = '",
                                                       s.substr(eq + 1), "'"));
      if (!st.ok()) return st;
    }
    if (statement_stats) {
      absl::Status st =
          Exec(conn->get(), "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
      if (!st.ok()) return st;
    }
  }
  // shared_preload_libraries needs a restart; a reload would do for the
  // rest, but one path is simpler and takes a second.
  if (absl::Status st = cluster.Stop(); !st.ok()) return st;
  if (absl::Status st = cluster.Resume(); !st.ok()) return st;
  if (!statement_stats) return absl::OkStatus();
  absl::StatusOr<ConnPtr> conn = Connect(cluster.ConnInfo());
  if (!conn.ok()) return conn.status();
  // The extension's own settings exist only once its library is loaded.
  for (const char* sql :
       {"CREATE EXTENSION IF NOT EXISTS pg_stat_statements",
        "ALTER SYSTEM SET pg_stat_statements.track_planning = on", "SELECT pg_reload_conf()"}) {
    if (absl::Status st = Exec(conn->get(), sql); !st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status EmptyLinkTables(const std::string& conninfo) {
  absl::StatusOr<ConnPtr> conn = Connect(conninfo);
  if (!conn.ok()) return conn.status();
  return Exec(conn->get(), "TRUNCATE links, link_aliases, shorten_requests");
}

absl::Status PreallocateWal(const std::string& conninfo, int segments) {
  if (segments <= 0) return absl::OkStatus();
  absl::StatusOr<ConnPtr> conn = Connect(conninfo);
  if (!conn.ok()) return conn.status();
  // A switch needs a record in the current segment: the non-transactional
  // message is one, written at once. Each switch makes the server create the
  // next segment file; the checkpoints then keep them for reuse.
  absl::Status st = Exec(conn->get(), absl::StrCat("DO $$ BEGIN FOR i IN 1..", segments,
                                                   " LOOP PERFORM pg_logical_emit_message(false, "
                                                   "'shorten_bench', 'wal warm-up'); PERFORM "
                                                   "pg_switch_wal(); END LOOP; END $$"));
  if (!st.ok()) return st;
  for (int i = 0; i < 2; ++i) {
    if (st = Exec(conn->get(), "CHECKPOINT"); !st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<StatementStats>> StatementStats::Create(
    const std::string& conninfo) {
  absl::StatusOr<ConnPtr> conn = Connect(conninfo);
  if (!conn.ok()) return conn.status();
  return std::unique_ptr<StatementStats>(new StatementStats(*std::move(conn)));
}

void StatementStats::Reset() { (void)Exec(conn_.get(), "SELECT pg_stat_statements_reset()"); }

std::string StatementStats::Table(int top, int64_t links) {
  std::string sql = absl::StrCat(
      "SELECT calls, total_plan_time, total_exec_time, rows, query FROM pg_stat_statements"
      " WHERE query NOT LIKE '%pg_stat_statements%'"
      " ORDER BY total_plan_time + total_exec_time DESC LIMIT ",
      top);
  PGresult* r = PQexec(conn_.get(), sql.c_str());
  std::string out =
      "| statement | calls | plan ms/call | exec ms/call | rows/call | plan+exec µs/link |\n"
      "| --- | ---: | ---: | ---: | ---: | ---: |\n";
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    absl::StrAppend(&out, "| (pg_stat_statements: ", PQresultErrorMessage(r), ") |||||\n");
  }
  for (int i = 0; PQresultStatus(r) == PGRES_TUPLES_OK && i < PQntuples(r); ++i) {
    double calls = 0, plan = 0, exec = 0, rows = 0;
    (void)absl::SimpleAtod(PQgetvalue(r, i, 0), &calls);
    (void)absl::SimpleAtod(PQgetvalue(r, i, 1), &plan);
    (void)absl::SimpleAtod(PQgetvalue(r, i, 2), &exec);
    (void)absl::SimpleAtod(PQgetvalue(r, i, 3), &rows);
    double c = calls > 0 ? calls : 1;
    absl::StrAppendFormat(
        &out, "| `%s` | %.0f | %.3f | %.3f | %.1f | %s |\n", Snippet(PQgetvalue(r, i, 4), 70),
        calls, plan / c, exec / c, rows / c,
        links > 0 ? absl::StrFormat("%.1f", (plan + exec) * 1000 / links) : std::string("-"));
  }
  PQclear(r);
  return out;
}

}  // namespace shortener::bench
