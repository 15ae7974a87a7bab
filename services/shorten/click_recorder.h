// ClickRecorder: the domain logic of RecordClicks, free of gRPC, proto and
// Postgres types. It validates a batch of click events from an edge,
// resolves their codes to link ids (unknown codes are skipped and counted,
// not an error: a link may be gone, an edge may be older), classifies each
// User-Agent, derives the visit fields (lib/clicks) and hands the batch to
// the click store (PgClickStore::Record in production).
//
// Thread-safe if the record function is. Record blocks (alias look-ups, the
// store): call it on the blocking pool, never on a gRPC reactor thread.
#ifndef SHORTENER_SERVICES_SHORTEN_CLICK_RECORDER_H_
#define SHORTENER_SERVICES_SHORTEN_CLICK_RECORDER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "lib/clicks/clicks.h"
#include "lib/geoip/country_db.h"
#include "services/shorten/shortener.h"

namespace shortener::service {

// One click event as an edge reports it.
struct ClickInput {
  std::string code;
  std::optional<absl::Time> time;  // nullopt: missing (the event is skipped)
  std::string client_ip;
  std::string user_agent;
  std::string referer;
};

struct RecordClicksInput {
  std::string batch_id;  // 1..128 bytes
  std::vector<ClickInput> events;
};

struct RecordClicksOutput {
  // Events counted by this call; 0 for a batch recorded before.
  int64_t accepted = 0;
  // Events skipped: unknown or malformed code, or no time.
  int64_t skipped = 0;
  bool duplicate = false;
};

// What the store's Record does (PgClickStore::Record's signature).
using RecordBatchFn = std::function<absl::StatusOr<clicks::RecordOutcome>(
    const std::string& batch_id, absl::Span<const clicks::ClickRow> rows, bool record_visits)>;

struct ClickRecorderOptions {
  // Store a visit row per click (besides the hourly counts). Default true.
  bool record_visits = true;
  // Store full client IPs instead of anonymised ones. Default false.
  bool keep_full_ips = false;
  // Most events in one batch. Default 10000.
  size_t max_events = 10000;
  // Where visits get their country (from the full client IP, before
  // anonymisation); null: no country. Outlives the recorder.
  const geoip::CountryDbHolder* countries = nullptr;
};

class ClickRecorder {
 public:
  // `shortener` outlives the recorder.
  ClickRecorder(Shortener* shortener, RecordBatchFn record, ClickRecorderOptions options);

  // Records `input` once per batch id (a retried batch is accepted = 0,
  // duplicate). INVALID_ARGUMENT for a batch id outside 1..128 bytes or an
  // event count outside 1..max_events; the store's errors otherwise
  // (UNAVAILABLE: retry with the same batch id), and alias look-up errors
  // other than NOT_FOUND.
  absl::StatusOr<RecordClicksOutput> Record(const RecordClicksInput& input);

 private:
  Shortener* shortener_;
  RecordBatchFn record_;
  ClickRecorderOptions options_;
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_CLICK_RECORDER_H_
