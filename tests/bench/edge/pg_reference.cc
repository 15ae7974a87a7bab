#include "tests/bench/edge/pg_reference.h"

#include <libpq-fe.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/bench/common/bench_util.h"
#include "tests/support/subprocess.h"

namespace shortener::bench::edge {
namespace {

using ConnPtr = std::unique_ptr<PGconn, void (*)(PGconn*)>;

absl::StatusOr<ConnPtr> Connect(const std::string& conninfo) {
  ConnPtr conn(PQconnectdb(conninfo.c_str()), PQfinish);
  if (conn == nullptr || PQstatus(conn.get()) != CONNECTION_OK) {
    return absl::UnavailableError(
        absl::StrCat("connect: ", conn ? PQerrorMessage(conn.get()) : "out of memory"));
  }
  return conn;
}

}  // namespace

absl::Status ExecSql(const std::string& conninfo, const std::string& sql) {
  absl::StatusOr<ConnPtr> conn = Connect(conninfo);
  if (!conn.ok()) return conn.status();
  // PQexec runs several statements, each in its own transaction (VACUUM
  // cannot run inside one): send them one by one.
  for (absl::string_view stmt : absl::StrSplit(sql, ';', absl::SkipWhitespace())) {
    std::unique_ptr<PGresult, void (*)(PGresult*)> res(
        PQexec(conn->get(), std::string(stmt).c_str()), PQclear);
    const ExecStatusType st = PQresultStatus(res.get());
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      return absl::InternalError(
          absl::StrCat(std::string(stmt), ": ", PQerrorMessage(conn->get())));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> QueryRow(const std::string& conninfo,
                                                  const std::string& sql) {
  absl::StatusOr<ConnPtr> conn = Connect(conninfo);
  if (!conn.ok()) return conn.status();
  std::unique_ptr<PGresult, void (*)(PGresult*)> res(PQexec(conn->get(), sql.c_str()), PQclear);
  if (PQresultStatus(res.get()) != PGRES_TUPLES_OK || PQntuples(res.get()) < 1) {
    return absl::InternalError(absl::StrCat(sql, ": ", PQerrorMessage(conn->get())));
  }
  std::vector<std::string> row;
  for (int i = 0; i < PQnfields(res.get()); ++i) row.push_back(PQgetvalue(res.get(), 0, i));
  return row;
}

absl::StatusOr<IdRange> LinkIdRange(const std::string& conninfo) {
  absl::StatusOr<ConnPtr> conn = Connect(conninfo);
  if (!conn.ok()) return conn.status();
  std::unique_ptr<PGresult, void (*)(PGresult*)> res(
      PQexec(conn->get(), "SELECT min(id), max(id), count(*) FROM links"), PQclear);
  if (PQresultStatus(res.get()) != PGRES_TUPLES_OK || PQntuples(res.get()) != 1) {
    return absl::InternalError(absl::StrCat("id range: ", PQerrorMessage(conn->get())));
  }
  IdRange r;
  if (!absl::SimpleAtoi(PQgetvalue(res.get(), 0, 0), &r.min) ||
      !absl::SimpleAtoi(PQgetvalue(res.get(), 0, 1), &r.max) ||
      !absl::SimpleAtoi(PQgetvalue(res.get(), 0, 2), &r.count)) {
    return absl::InternalError("id range: links is empty");
  }
  return r;
}

std::string PgbenchSelectScript(const IdRange& ids) {
  // The statement of links_get_by_id (lib/store/pg/queries.h), which Resolve
  // of a generated code runs.
  return absl::StrCat("\\set id random(", ids.min, ", ", ids.max, ")\n",
                      "SELECT l.id, l.alias, l.long_url, l.owner, l.redirect_status, "
                      "(extract(epoch FROM l.create_time) * 1000000)::bigint, "
                      "(extract(epoch FROM l.expire_time) * 1000000)::bigint, "
                      "(extract(epoch FROM l.revoke_time) * 1000000)::bigint "
                      "FROM links l WHERE l.id = :id;\n");
}

absl::StatusOr<PgbenchSelectResult> RunPgbenchSelect(const PgbenchSelectOptions& o) {
  const std::string script_path = o.work_dir + "/select_link.sql";
  const std::string log_path = o.work_dir + "/pgbench.log";
  PgbenchSelectResult result;
  result.script = PgbenchSelectScript(o.ids);
  {
    std::ofstream script(script_path);
    script << result.script;
    if (!script) return absl::InternalError(absl::StrCat("cannot write ", script_path));
  }
  const std::vector<std::string> argv = {o.pgbench,
                                         "-h",
                                         o.socket_dir,
                                         "-p",
                                         std::to_string(o.port),
                                         "-U",
                                         o.user,
                                         "-c",
                                         std::to_string(o.clients),
                                         "-j",
                                         std::to_string(o.threads),
                                         "-T",
                                         std::to_string(o.seconds),
                                         "-n",
                                         "-M",
                                         o.protocol,
                                         "-f",
                                         script_path,
                                         o.dbname};
  std::remove(log_path.c_str());
  absl::StatusOr<testing::Subprocess> child = testing::Subprocess::Spawn(argv, log_path);
  if (!child.ok()) return child.status();
  const std::optional<int> rc = child->Wait(absl::Seconds(o.seconds + 120));
  const std::string output = ReadFile(log_path);
  if (rc != 0) {
    return absl::InternalError(
        absl::StrCat("pgbench failed (exit ", rc.value_or(-1), "); output:\n", Tail(output, 2000)));
  }
  bool found = false;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (absl::StrContains(line, "without initial connection time")) {
      found = NumberAfter(line, "tps = ", &result.tps);
    }
  }
  if (!found || !NumberAfter(output, "latency average = ", &result.latency_avg_ms)) {
    return absl::InternalError(
        absl::StrCat("pgbench printed no tps; output:\n", Tail(output, 2000)));
  }
  result.command = absl::StrJoin(argv, " ");
  return result;
}

}  // namespace shortener::bench::edge
