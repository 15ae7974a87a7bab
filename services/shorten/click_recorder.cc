#include "services/shorten/click_recorder.h"

#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "lib/clicks/click_text.h"
#include "lib/common/redirect_status.h"
#include "lib/useragent/user_agent.h"

namespace shortener::service {
namespace {

// What a code turned out to be, once per distinct code of a batch.
struct Resolution {
  std::optional<int64_t> link_id;  // nullopt: no such link, or malformed
  std::string refusal;             // non-empty: malformed, and why
};

// Distinct codes of a batch and what each turned out to be.
using CodeResolutions = absl::flat_hash_map<std::string, Resolution>;

// What the codes of `events` turned out to be, but for events with a
// problem (problems[i] non-empty); the look-up's error when one failed for
// another reason than NOT_FOUND or a malformed code.
absl::StatusOr<CodeResolutions> ResolveCodes(Shortener& shortener,
                                             const std::vector<ClickInput>& events,
                                             const std::vector<std::string>& problems) {
  // A batch holds few distinct codes (one campaign link clicked many times):
  // resolve each once, all together, so the aliases among them share the
  // read batcher's queries.
  CodeResolutions codes;
  std::vector<std::string> distinct;
  for (size_t i = 0; i < events.size(); ++i) {
    if (problems[i].empty() && codes.try_emplace(events[i].code).second) {
      distinct.push_back(events[i].code);
    }
  }
  std::vector<absl::StatusOr<int64_t>> ids = shortener.LinkIdsOf(distinct);
  for (size_t i = 0; i < distinct.size(); ++i) {
    Resolution& resolution = codes[distinct[i]];
    if (ids[i].ok()) {
      resolution.link_id = *ids[i];
    } else if (absl::IsInvalidArgument(ids[i].status())) {
      // Neither a short code nor an alias: a syntax rule, so the same
      // answer on every retry.
      resolution.refusal = std::string(ids[i].status().message());
    } else if (!absl::IsNotFound(ids[i].status())) {
      // The database failed an alias look-up (or the read batcher is full):
      // the edge retries the batch.
      return ids[i].status();
    }
  }
  return codes;
}

}  // namespace

std::string ClickEventProblem(const ClickInput& event) {
  const std::pair<absl::string_view, absl::string_view> texts[] = {
      {"code", event.code},
      {"client_ip", event.client_ip},
      {"user_agent", event.user_agent},
      {"referer", event.referer},
  };
  for (const auto& [field, value] : texts) {
    std::string problem = clicks::ClickTextProblem(field, value);
    if (!problem.empty()) return problem;
  }
  if (!event.time.ok()) return std::string(event.time.status().message());
  if (*event.time < kEarliestClickTime || *event.time >= kLatestClickTime) {
    return absl::StrCat(
        "time: ", absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ", *event.time, absl::UTCTimeZone()),
        " is outside 2020-01-01T00:00:00Z..2100-01-01T00:00:00Z");
  }
  const int s = event.http_status;
  if (!IsRedirectStatus(s)) {
    return absl::StrCat("http_status: ", s, " is not a redirect (301, 302, 307 or 308)");
  }
  return "";
}

ClickRecorder::ClickRecorder(Shortener* shortener, clicks::ClickStore* store,
                             ClickRecorderOptions options)
    : shortener_(shortener), store_(store), options_(options) {}

absl::StatusOr<RecordClicksOutput> ClickRecorder::Record(const RecordClicksInput& input) {
  absl::StatusOr<RecordClicksOutput> result = RecordBatch(input);
  Count(input, result);
  return result;
}

void ClickRecorder::Count(const RecordClicksInput& input,
                          const absl::StatusOr<RecordClicksOutput>& result) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!result.ok()) {
    ++stats_.failed;
    return;
  }
  ++(result->duplicate ? stats_.duplicates : stats_.batches);
  stats_.accepted += result->accepted;
  stats_.skipped += result->skipped;
  stats_.refused += static_cast<int64_t>(result->refused.size());
  stats_.batch_events.Observe(static_cast<double>(input.events.size()));
}

ClickRecorder::Stats ClickRecorder::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

absl::StatusOr<RecordClicksOutput> ClickRecorder::RecordBatch(const RecordClicksInput& input) {
  if (input.batch_id.empty() || input.batch_id.size() > clicks::kMaxBatchIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat("batch_id: must be 1 to ",
                                                   clicks::kMaxBatchIdBytes, " bytes, got ",
                                                   input.batch_id.size()));
  }
  if (std::string problem = clicks::ClickTextProblem("batch_id", input.batch_id);
      !problem.empty()) {
    return absl::InvalidArgumentError(problem);
  }
  if (input.events.empty() || input.events.size() > options_.max_events) {
    return absl::InvalidArgumentError(
        absl::StrCat("events: must be 1 to ", options_.max_events, ", got ", input.events.size()));
  }
  std::vector<std::string> problems(input.events.size());
  for (size_t i = 0; i < input.events.size(); ++i) {
    problems[i] = ClickEventProblem(input.events[i]);
  }
  absl::StatusOr<CodeResolutions> resolved = ResolveCodes(*shortener_, input.events, problems);
  if (!resolved.ok()) return resolved.status();
  const CodeResolutions& codes = *resolved;
  RecordClicksOutput output;
  std::vector<clicks::ClickRow> rows;
  rows.reserve(input.events.size());
  // One set of databases for the whole batch, even if a reload swaps one
  // meanwhile. Places go into the rollups, with or without visits.
  geoip::GeoSnapshot geo;
  if (options_.geo != nullptr) geo = options_.geo->Current();
  useragent::BatchClassifier agents(input.events.size());
  for (size_t i = 0; i < input.events.size(); ++i) {
    const ClickInput& event = input.events[i];
    if (!problems[i].empty()) {
      output.refused.push_back({static_cast<int>(i), std::move(problems[i])});
      continue;
    }
    auto it = codes.find(event.code);
    if (!it->second.refusal.empty()) {
      output.refused.push_back({static_cast<int>(i), it->second.refusal});
      continue;
    }
    if (!it->second.link_id.has_value()) {
      ++output.skipped;
      continue;
    }
    clicks::ClickEvent click;
    click.link_id = *it->second.link_id;
    click.time = *event.time;
    click.client_ip = event.client_ip;
    click.user_agent = event.user_agent;
    click.referer = event.referer;
    rows.push_back(
        clicks::MakeClickRow(click, agents.Classify(event.user_agent), options_.keep_full_ips));
    if (!geo.empty()) {
      geoip::Place place = geo.PlaceOf(event.client_ip);
      clicks::ClickRow& row = rows.back();
      row.country = std::move(place.country);
      row.region = std::move(place.region);
      row.city = std::move(place.city);
      row.network = std::move(place.network);
    }
  }
  // Even a batch of nothing but skipped or refused events records its id,
  // so that a retry is recognised as one.
  absl::StatusOr<clicks::RecordOutcome> outcome =
      store_->Record(input.batch_id, rows, options_.record_visits);
  if (!outcome.ok()) return outcome.status();
  output.accepted = outcome->counted;
  output.duplicate = outcome->duplicate;
  return output;
}

}  // namespace shortener::service
