#include "services/shorten/click_recorder.h"

#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "lib/useragent/user_agent.h"

namespace shortener::service {
namespace {

constexpr size_t kMaxBatchId = 128;

}  // namespace

ClickRecorder::ClickRecorder(Shortener* shortener, RecordBatchFn record,
                             ClickRecorderOptions options)
    : shortener_(shortener), record_(std::move(record)), options_(options) {}

absl::StatusOr<RecordClicksOutput> ClickRecorder::Record(const RecordClicksInput& input) {
  if (input.batch_id.empty() || input.batch_id.size() > kMaxBatchId) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_id: must be 1 to 128 bytes, got ", input.batch_id.size()));
  }
  if (input.events.empty() || input.events.size() > options_.max_events) {
    return absl::InvalidArgumentError(
        absl::StrCat("events: must be 1 to ", options_.max_events, ", got ", input.events.size()));
  }
  // A batch holds few distinct codes (one campaign link clicked many times):
  // resolve each once. nullopt: unknown, skip its events.
  absl::flat_hash_map<std::string, std::optional<int64_t>> link_ids;
  RecordClicksOutput output;
  std::vector<clicks::ClickRow> rows;
  rows.reserve(input.events.size());
  // One database for the whole batch, even if a reload swaps it meanwhile.
  // Countries are only stored in visits: no look-ups without them.
  std::shared_ptr<const geoip::CountryDb> countries;
  if (options_.countries != nullptr && options_.record_visits) {
    countries = options_.countries->Current();
  }
  for (const ClickInput& event : input.events) {
    auto [it, inserted] = link_ids.try_emplace(event.code);
    if (inserted) {
      absl::StatusOr<int64_t> id = shortener_->LinkIdOf(event.code);
      if (id.ok()) {
        it->second = *id;
      } else if (!absl::IsNotFound(id.status()) && !absl::IsInvalidArgument(id.status())) {
        // The database failed an alias look-up: the edge retries the batch.
        return id.status();
      }
    }
    if (!it->second.has_value() || !event.time.has_value()) {
      ++output.skipped;
      continue;
    }
    clicks::ClickEvent click;
    click.link_id = *it->second;
    click.time = *event.time;
    click.client_ip = event.client_ip;
    click.user_agent = event.user_agent;
    click.referer = event.referer;
    rows.push_back(
        clicks::MakeClickRow(click, useragent::Classify(event.user_agent), options_.keep_full_ips));
    if (countries != nullptr) rows.back().country = countries->CountryOf(event.client_ip);
  }
  // Even a batch of nothing but skipped events records its id, so that a
  // retry is recognised as one.
  absl::StatusOr<clicks::RecordOutcome> outcome =
      record_(input.batch_id, rows, options_.record_visits);
  if (!outcome.ok()) return outcome.status();
  output.accepted = outcome->counted;
  output.duplicate = outcome->duplicate;
  return output;
}

}  // namespace shortener::service
