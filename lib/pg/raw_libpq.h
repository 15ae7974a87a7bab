// What CopyBinary and BinaryResult need of libpq beyond what libpqxx 6.4
// offers: a transaction's libpq connection, and failures thrown as the
// pqxx exceptions the rest of the code (StatusFromCurrentException)
// already translates. Internal to lib/pg.
#ifndef SHORTENER_LIB_PG_RAW_LIBPQ_H_
#define SHORTENER_LIB_PG_RAW_LIBPQ_H_

#include <libpq-fe.h>

#include <pqxx/dbtransaction>
#include <string>

namespace shortener::pg::internal {

// The libpq connection `tx` runs on. Commands sent on it directly must
// leave it idle (every result read) before libpqxx uses it again.
PGconn* LibpqConnectionOf(const pqxx::dbtransaction& tx);

// Reads what is left of the current command, so that the connection is idle
// (in its transaction) for the next one.
void DrainResults(PGconn* conn);

// Throws what libpqxx would for the failed `result` (or, when null, for the
// connection's last error), after clearing it and draining the command's
// other results: pqxx::broken_connection when the connection is lost,
// pqxx::unique_violation for SQLSTATE 23505, else pqxx::sql_error with the
// SQLSTATE.
[[noreturn]] void ThrowLibpqError(PGconn* conn, PGresult* result, const std::string& sql);

}  // namespace shortener::pg::internal

#endif  // SHORTENER_LIB_PG_RAW_LIBPQ_H_
