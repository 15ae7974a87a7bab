#include "lib/pg/raw_libpq.h"

#include <pqxx/except>
#include <pqxx/largeobject>

namespace shortener::pg::internal {
namespace {

// libpqxx 6.4 hands a transaction's libpq connection only to largeobject and
// classes derived from it (a protected static member), and has no binary
// COPY or binary results of its own.
class LibpqConnection : private pqxx::largeobject {
 public:
  static PGconn* Of(const pqxx::dbtransaction& tx) { return raw_connection(tx); }
};

}  // namespace

PGconn* LibpqConnectionOf(const pqxx::dbtransaction& tx) { return LibpqConnection::Of(tx); }

void DrainResults(PGconn* conn) {
  while (PGresult* rest = PQgetResult(conn)) PQclear(rest);
}

void ThrowLibpqError(PGconn* conn, PGresult* result, const std::string& sql) {
  std::string message = result != nullptr ? PQresultErrorMessage(result) : PQerrorMessage(conn);
  const char* field = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string sqlstate = field != nullptr ? field : "";
  PQclear(result);
  if (message.empty()) message = "libpq failed without a message";
  if (PQstatus(conn) == CONNECTION_BAD) throw pqxx::broken_connection(message);
  DrainResults(conn);
  if (sqlstate.empty()) throw pqxx::sql_error(message, sql);
  if (sqlstate == "23505") throw pqxx::unique_violation(message, sql, sqlstate.c_str());
  throw pqxx::sql_error(message, sql, sqlstate.c_str());
}

}  // namespace shortener::pg::internal
