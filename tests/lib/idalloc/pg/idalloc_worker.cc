// Test helper: one "replica" drawing IDs from Postgres-leased segments.
// Writes one ID per line to --out, flushed line by line, so a test that
// kills it with SIGKILL still sees every ID it wrote. Exit code 0 when all
// --count IDs were drawn, 1 on the first error (printed to stderr).
//
//   idalloc_worker --conninfo="host=/tmp/x port=5432 ..." --count=100000
//                  --out=/tmp/ids.1 [--sequence=links] [--step=100]
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/idalloc/pg/pg_segment_source.h"
#include "lib/idalloc/segment_id_allocator.h"

ABSL_FLAG(std::string, conninfo, "", "libpq connection string");
ABSL_FLAG(int64_t, count, 0, "IDs to draw");
ABSL_FLAG(std::string, out, "", "file to write the IDs to (truncated)");
ABSL_FLAG(std::string, sequence, "links", "id_segments row to lease from");
ABSL_FLAG(int64_t, step, 0, "fixed lease step; 0 keeps the dynamic defaults");

namespace shortener::idalloc {
namespace {

absl::Status Run() {
  const std::string out_path = absl::GetFlag(FLAGS_out);
  if (absl::GetFlag(FLAGS_conninfo).empty() || out_path.empty()) {
    return absl::InvalidArgumentError("--conninfo and --out are required");
  }
  std::FILE* out = std::fopen(out_path.c_str(), "w");
  if (out == nullptr) return absl::InternalError(absl::StrCat("cannot open ", out_path));

  PgSegmentSource source(absl::GetFlag(FLAGS_conninfo));
  IdAllocatorOptions options;
  options.sequence = absl::GetFlag(FLAGS_sequence);
  if (const int64_t step = absl::GetFlag(FLAGS_step); step > 0) {
    options.initial_step = options.min_step = options.max_step = step;
  }
  SegmentIdAllocator allocator(&source, options);
  absl::Status status;
  for (int64_t i = 0; i < absl::GetFlag(FLAGS_count) && status.ok(); ++i) {
    absl::StatusOr<int64_t> id = allocator.Next(absl::Now() + absl::Seconds(10));
    if (!id.ok()) {
      status = id.status();
    } else {
      std::fprintf(out, "%lld\n", static_cast<long long>(*id));
      std::fflush(out);
    }
  }
  std::fclose(out);
  return status;
}

}  // namespace
}  // namespace shortener::idalloc

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status status = shortener::idalloc::Run();
  if (!status.ok()) {
    std::fprintf(stderr, "idalloc_worker: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
