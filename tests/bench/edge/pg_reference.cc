#include "tests/bench/edge/pg_reference.h"

#include <libpq-fe.h>

#include <memory>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

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

absl::StatusOr<PgbenchReport> RunPgbenchSelect(PgbenchRun run, const IdRange& ids) {
  run.script = PgbenchSelectScript(ids);
  run.script_name = "select_link.sql";
  return RunPgbenchScript(run);
}

}  // namespace shortener::bench::edge
