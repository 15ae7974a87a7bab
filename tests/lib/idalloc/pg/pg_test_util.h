// Helpers for the Postgres-backed idalloc tests: a private id_segments row
// per test, so tests sharing one cluster never see each other's leases.
#ifndef SHORTENER_TESTS_LIB_IDALLOC_PG_PG_TEST_UTIL_H_
#define SHORTENER_TESTS_LIB_IDALLOC_PG_PG_TEST_UTIL_H_

#include <cstdint>
#include <pqxx/pqxx>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/pg/pg_error.h"

namespace shortener::idalloc::testing {

// Adds the id_segments row `name` whose first lease starts at `next_id`.
inline absl::Status CreateSequence(const std::string& conninfo, const std::string& name,
                                   int64_t next_id = 1) {
  return pg::CatchPqxx("create sequence", [&] {
    pqxx::connection conn(conninfo);
    pqxx::work tx(conn);
    tx.exec_params0("INSERT INTO id_segments (name, next_id, step) VALUES ($1, $2, 1)", name,
                    next_id);
    tx.commit();
    return absl::OkStatus();
  });
}

// id_segments.next_id of `name`: every ID leased so far is below it.
inline absl::StatusOr<int64_t> NextIdInDatabase(const std::string& conninfo,
                                                const std::string& name) {
  int64_t next_id = 0;
  absl::Status status = pg::CatchPqxx("read sequence", [&] {
    pqxx::connection conn(conninfo);
    pqxx::work tx(conn);
    next_id =
        tx.exec_params1("SELECT next_id FROM id_segments WHERE name = $1", name)[0].as<int64_t>();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return next_id;
}

}  // namespace shortener::idalloc::testing

#endif  // SHORTENER_TESTS_LIB_IDALLOC_PG_PG_TEST_UTIL_H_
