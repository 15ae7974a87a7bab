// PgSegmentSource: leases ID segments from the Postgres table id_segments,
// one atomic `UPDATE ... RETURNING` (one round trip, autocommit) per lease, so
// any number of processes sharing the database get disjoint segments.
//
// Thread safety: safe from several threads; one connection guarded by a mutex
// serialises the leases (in practice only an allocator's background leaser
// calls it). The connection is opened lazily by the first Lease and reopened
// by the next Lease after it is lost.
#ifndef SHORTENER_LIB_IDALLOC_PG_PG_SEGMENT_SOURCE_H_
#define SHORTENER_LIB_IDALLOC_PG_PG_SEGMENT_SOURCE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/idalloc/segment_source.h"

namespace shortener::idalloc {

class PgSegmentSource : public SegmentSource {
 public:
  // `conninfo` is a libpq connection string (key=value or URI); TCP
  // keepalives are added unless it sets them (pg::TcpKeepaliveDefaults).
  // Does not connect yet.
  explicit PgSegmentSource(std::string conninfo);
  ~PgSegmentSource() override;

  PgSegmentSource(const PgSegmentSource&) = delete;
  PgSegmentSource& operator=(const PgSegmentSource&) = delete;

  // See SegmentSource::Lease. The time left before `deadline` bounds both the
  // connect (connect_timeout, at least libpq's 2 s minimum) and the statement
  // (statement_timeout); a lease that does not finish in time, a refused or
  // lost connection, or a server shutting down is UNAVAILABLE. NOT_FOUND when
  // id_segments has no row `name`; INTERNAL for other database errors.
  absl::StatusOr<Segment> Lease(const std::string& name, int64_t step,
                                absl::Time deadline) override;

 private:
  struct Connection;  // the libpqxx connection and what is set up on it

  // Opens the connection if there is none, within `deadline`.
  absl::Status EnsureConnectedLocked(absl::Time deadline);
  absl::StatusOr<Segment> LeaseLocked(const std::string& name, int64_t step, absl::Time deadline);

  const std::string conninfo_;
  std::mutex mu_;  // guards conn_; *Locked methods need it held
  std::unique_ptr<Connection> conn_;
};

}  // namespace shortener::idalloc

#endif  // SHORTENER_LIB_IDALLOC_PG_PG_SEGMENT_SOURCE_H_
