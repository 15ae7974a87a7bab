#include "edge/app/edge_metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace shortener::edge {
namespace {

constexpr const char* kOutcomeNames[] = {"active",    "revoked", "expired",
                                         "not_found", "invalid", "unavailable"};
constexpr const char* kBadReasonNames[] = {"none",          "not_origin_form", "empty",
                                           "dot_segment",   "percent",         "slash",
                                           "bad_character", "too_long"};

void Header(std::string& out, absl::string_view name, absl::string_view type,
            absl::string_view help) {
  absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

uint64_t Load(const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); }

// The HTTP server's own figures (edge/http/http_server.h, "Limits").
void RenderHttpServer(const http::HttpServerStats& s, std::string& out) {
  Header(out, "edge_http_connections_accepted_total", "counter", "Connections accepted.");
  absl::StrAppend(&out, "edge_http_connections_accepted_total ", s.connections_accepted, "\n");
  Header(out, "edge_http_connections_refused_total", "counter",
         "Connections closed at once, unanswered, by the limit they were over: "
         "--max_connections (also while shutting down) or --max_connections_per_client.");
  absl::StrAppend(&out, "edge_http_connections_refused_total{reason=\"max_connections\"} ",
                  s.connections_refused, "\n",
                  "edge_http_connections_refused_total{reason=\"per_client\"} ",
                  s.connections_refused_per_client, "\n");
  Header(out, "edge_http_protocol_errors_total", "counter",
         "Requests the HTTP layer refused before the handler (400, 413, 414, 431, 505), by "
         "reason.");
  for (size_t i = 0; i < http::kRequestRefusalCount; ++i) {
    absl::StrAppend(&out, "edge_http_protocol_errors_total{reason=\"",
                    http::RequestRefusalName(static_cast<http::RequestRefusal>(i)), "\"} ",
                    s.refused_requests[i], "\n");
  }
  Header(out, "edge_http_open_connections", "gauge", "Open client connections.");
  absl::StrAppend(&out, "edge_http_open_connections ", s.open_connections, "\n");
  Header(out, "edge_http_max_connections", "gauge",
         "Client connections allowed at once (--max_connections, or derived from the open-file "
         "limit).");
  absl::StrAppend(&out, "edge_http_max_connections ", s.max_connections, "\n");
  Header(out, "edge_http_max_connections_per_client", "gauge",
         "Connections one client address may hold (--max_connections_per_client; 0: no limit).");
  absl::StrAppend(&out, "edge_http_max_connections_per_client ", s.max_connections_per_client,
                  "\n");
  Header(out, "edge_http_output_pauses_total", "counter",
         "Times a connection stopped reading because its unwritten responses reached the bound "
         "(a pipelining client that does not read).");
  absl::StrAppend(&out, "edge_http_output_pauses_total ", s.output_pauses, "\n");
  Header(out, "edge_http_peak_connection_output_bytes", "gauge",
         "The most bytes of responses one connection held unwritten at once since start.");
  absl::StrAppend(&out, "edge_http_peak_connection_output_bytes ", s.peak_connection_output_bytes,
                  "\n");
  Header(out, "edge_http_connection_buffer_bytes", "gauge",
         "Bytes of buffers the open connections hold (read buffers, output, kept header values).");
  absl::StrAppend(&out, "edge_http_connection_buffer_bytes ", s.connection_buffer_bytes, "\n");
}

}  // namespace

EdgeMetrics::EdgeMetrics(int loops)
    : loop_count_(loops < 1 ? 1 : loops), loops_(new Loop[loop_count_]) {}

int EdgeMetrics::StatusSlot(int status) {
  for (size_t i = 0; i < kStatuses.size(); ++i) {
    if (kStatuses[i] == status) return static_cast<int>(i);
  }
  return static_cast<int>(kStatuses.size());
}

void EdgeMetrics::ObserveResolve(absl::Duration latency, ResolveOutcome outcome) {
  // Only answers (or failures) of calls: refusals are CountMissRefusal's.
  if (static_cast<size_t>(outcome) >= resolve_outcomes_.size()) return;
  const double seconds = absl::ToDoubleSeconds(latency);
  size_t bucket = 0;
  while (bucket < kLatencyBuckets.size() && seconds > kLatencyBuckets[bucket]) ++bucket;
  latency_buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  latency_count_.fetch_add(1, std::memory_order_relaxed);
  latency_sum_ns_.fetch_add(static_cast<uint64_t>(absl::ToInt64Nanoseconds(latency)),
                            std::memory_order_relaxed);
  resolve_outcomes_[static_cast<int>(outcome)].fetch_add(1, std::memory_order_relaxed);
}

void EdgeMetrics::CountInvalidation(size_t codes, bool drop_all) {
  invalidation_messages_.fetch_add(1, std::memory_order_relaxed);
  invalidated_codes_.fetch_add(codes, std::memory_order_relaxed);
  if (drop_all) drop_alls_.fetch_add(1, std::memory_order_relaxed);
}

std::string EdgeMetrics::Render(const Gauges& gauges) const {
  std::string out;
  out.reserve(8192);
  RenderRequests(gauges, out);
  RenderCache(gauges.cache, out);
  RenderResolves(gauges, out);
  RenderInvalidations(gauges, out);
  RenderHttpServer(gauges.server, out);
  RenderClicks(gauges, out);
  return out;
}

// Responses by status, prefilter rejections, malformed targets.
void EdgeMetrics::RenderRequests(const Gauges& gauges, std::string& out) const {
  Header(out, "edge_http_responses_total", "counter", "Responses sent, by status code.");
  // The handler's responses plus those the HTTP layer wrote itself.
  std::array<uint64_t, kStatuses.size() + 1> by_status{};
  for (size_t i = 0; i < http::kServerResponseStatuses.size(); ++i) {
    by_status[StatusSlot(http::kServerResponseStatuses[i])] += gauges.server.server_responses[i];
  }
  for (size_t slot = 0; slot <= kStatuses.size(); ++slot) {
    uint64_t sum = by_status[slot];
    for (int l = 0; l < loop_count_; ++l) sum += Load(loops_[l].responses[slot]);
    const std::string code =
        slot < kStatuses.size() ? absl::StrCat(kStatuses[slot]) : std::string("other");
    absl::StrAppend(&out, "edge_http_responses_total{code=\"", code, "\"} ", sum, "\n");
  }

  Header(out, "edge_prefilter_rejections_total", "counter",
         "Generated-shape codes whose check character failed: 404 without cache or RPC.");
  uint64_t prefiltered = 0;
  for (int l = 0; l < loop_count_; ++l) prefiltered += Load(loops_[l].prefiltered);
  absl::StrAppend(&out, "edge_prefilter_rejections_total ", prefiltered, "\n");

  Header(out, "edge_bad_requests_total", "counter", "Malformed request targets (400), by reason.");
  for (int reason = 1; reason < kBadReasons; ++reason) {
    uint64_t sum = 0;
    for (int l = 0; l < loop_count_; ++l) sum += Load(loops_[l].bad_requests[reason]);
    absl::StrAppend(&out, "edge_bad_requests_total{reason=\"", kBadReasonNames[reason], "\"} ", sum,
                    "\n");
  }
}

void EdgeMetrics::RenderCache(const LinkCacheStats& c, std::string& out) {
  Header(out, "edge_cache_hits_total", "counter", "Look-ups answered from a fresh cache entry.");
  absl::StrAppend(&out, "edge_cache_hits_total ", c.hits, "\n");
  Header(out, "edge_cache_stale_hits_total", "counter",
         "Look-ups answered from an entry past its TTL because the service was unreachable.");
  absl::StrAppend(&out, "edge_cache_stale_hits_total ", c.stale_fallbacks, "\n");
  Header(out, "edge_cache_misses_total", "counter",
         "Look-ups that asked the service: no entry, or one past its TTL.");
  absl::StrAppend(&out, "edge_cache_misses_total ", c.misses + (c.stale_hits - c.stale_fallbacks),
                  "\n");
  Header(out, "edge_cache_coalesced_total", "counter",
         "Misses that joined a Resolve already in flight for the same code.");
  absl::StrAppend(&out, "edge_cache_coalesced_total ", c.coalesced, "\n");
  Header(out, "edge_cache_evictions_total", "counter", "Entries evicted by the size bounds.");
  absl::StrAppend(&out, "edge_cache_evictions_total ", c.evictions, "\n");
  Header(out, "edge_cache_invalidations_total", "counter",
         "Entries dropped by the invalidation stream.");
  absl::StrAppend(&out, "edge_cache_invalidations_total ", c.invalidations, "\n");
  Header(out, "edge_cache_entries", "gauge", "Entries in the cache.");
  absl::StrAppend(&out, "edge_cache_entries ", c.entries, "\n");
  Header(out, "edge_cache_bytes", "gauge", "Estimated bytes held by the cache.");
  absl::StrAppend(&out, "edge_cache_bytes ", c.bytes, "\n");
  Header(out, "edge_cache_negative_entries", "gauge",
         "Of the entries, unknown or invalid codes (their own budget: --negative_cache_share).");
  absl::StrAppend(&out, "edge_cache_negative_entries ", c.negative_entries, "\n");
  Header(out, "edge_cache_negative_bytes", "gauge", "Estimated bytes of those entries.");
  absl::StrAppend(&out, "edge_cache_negative_bytes ", c.negative_bytes, "\n");
}

// Calls to the service for misses, and the bounds that refused misses.
void EdgeMetrics::RenderResolves(const Gauges& gauges, std::string& out) const {
  Header(out, "edge_resolve_duration_seconds", "histogram",
         "Time from sending a code to the shorten-service to its answer, per code.");
  uint64_t cumulative = 0;
  for (size_t b = 0; b < kLatencyBuckets.size(); ++b) {
    cumulative += Load(latency_buckets_[b]);
    absl::StrAppend(&out, "edge_resolve_duration_seconds_bucket{le=\"",
                    absl::StrFormat("%g", kLatencyBuckets[b]), "\"} ", cumulative, "\n");
  }
  cumulative += Load(latency_buckets_[kLatencyBuckets.size()]);
  absl::StrAppend(&out, "edge_resolve_duration_seconds_bucket{le=\"+Inf\"} ", cumulative, "\n");
  absl::StrAppend(&out, "edge_resolve_duration_seconds_sum ",
                  absl::StrFormat("%.9f", static_cast<double>(Load(latency_sum_ns_)) * 1e-9), "\n");
  absl::StrAppend(&out, "edge_resolve_duration_seconds_count ", Load(latency_count_), "\n");

  Header(out, "edge_resolve_total", "counter", "Codes resolved by the service, by outcome.");
  for (size_t o = 0; o < resolve_outcomes_.size(); ++o) {
    absl::StrAppend(&out, "edge_resolve_total{outcome=\"", kOutcomeNames[o], "\"} ",
                    Load(resolve_outcomes_[o]), "\n");
  }
  Header(out, "edge_resolve_rpcs_total", "counter",
         "Resolve and BatchResolve calls sent (misses of different codes share calls).");
  absl::StrAppend(&out, "edge_resolve_rpcs_total ", gauges.resolve_rpcs, "\n");
  Header(out, "edge_resolve_codes_total", "counter", "Codes carried by those calls.");
  absl::StrAppend(&out, "edge_resolve_codes_total ", gauges.resolve_codes, "\n");
  Header(out, "edge_resolve_queued_codes", "gauge",
         "Codes waiting for a Resolve/BatchResolve call (bounded by --resolve_queue).");
  absl::StrAppend(&out, "edge_resolve_queued_codes ", gauges.resolve_queued, "\n");
  Header(out, "edge_alias_misses_in_flight", "gauge",
         "Alias look-ups waiting for the service (bounded by --max_alias_misses).");
  absl::StrAppend(&out, "edge_alias_misses_in_flight ", gauges.alias_misses, "\n");
  Header(out, "edge_miss_refusals_total", "counter",
         "Cache misses answered without the service's answer (a stale entry or 503), by the "
         "bound that refused them.");
  absl::StrAppend(&out, "edge_miss_refusals_total{reason=\"deadline\"} ",
                  Load(miss_refusals_[static_cast<int>(MissRefusal::kDeadline)]), "\n",
                  "edge_miss_refusals_total{reason=\"resolve_queue_full\"} ",
                  Load(miss_refusals_[static_cast<int>(MissRefusal::kResolveQueueFull)]), "\n",
                  "edge_miss_refusals_total{reason=\"alias_misses\"} ",
                  Load(miss_refusals_[static_cast<int>(MissRefusal::kAliasMisses)]), "\n");
  Header(out, "edge_upstream_unsafe_locations_total", "counter",
         "Stored URLs refused as Location values (answered 502, never cached).");
  absl::StrAppend(&out, "edge_upstream_unsafe_locations_total ", Load(unsafe_locations_), "\n");
}

// The invalidation stream, and whether the service is reachable.
void EdgeMetrics::RenderInvalidations(const Gauges& gauges, std::string& out) const {
  Header(out, "edge_invalidation_messages_total", "counter",
         "Messages received on the invalidation stream.");
  absl::StrAppend(&out, "edge_invalidation_messages_total ", Load(invalidation_messages_), "\n");
  Header(out, "edge_invalidated_codes_total", "counter", "Codes named by invalidation messages.");
  absl::StrAppend(&out, "edge_invalidated_codes_total ", Load(invalidated_codes_), "\n");
  Header(out, "edge_cache_drop_all_total", "counter",
         "Whole-cache drops ordered by the service (each subscription starts with one).");
  absl::StrAppend(&out, "edge_cache_drop_all_total ", Load(drop_alls_), "\n");
  Header(out, "edge_invalidation_stream_starts_total", "counter",
         "Invalidation stream subscriptions attempted.");
  absl::StrAppend(&out, "edge_invalidation_stream_starts_total ", Load(stream_starts_), "\n");
  Header(out, "edge_invalidation_stream_up", "gauge",
         "1 while the invalidation stream is subscribed.");
  absl::StrAppend(&out, "edge_invalidation_stream_up ",
                  stream_up_.load(std::memory_order_relaxed) ? 1 : 0, "\n");
  Header(out, "edge_service_ready", "gauge", "1 while the shorten-service is reachable.");
  absl::StrAppend(&out, "edge_service_ready ", gauges.service_ready ? 1 : 0, "\n");
}

void EdgeMetrics::RenderClicks(const Gauges& gauges, std::string& out) {
  const ClickQueueStats& q = gauges.click_queue;
  const ClickSenderStats& c = gauges.click_sender;
  const auto counter = [&out](absl::string_view name, absl::string_view help, uint64_t value) {
    Header(out, name, "counter", help);
    absl::StrAppend(&out, name, " ", value, "\n");
  };
  const auto gauge = [&out](absl::string_view name, absl::string_view help, uint64_t value) {
    Header(out, name, "gauge", help);
    absl::StrAppend(&out, name, " ", value, "\n");
  };
  counter("edge_clicks_queued_total", "Click events queued (redirects that are clicks).", q.pushed);
  gauge("edge_clicks_queue_events", "Click events waiting in memory to be sent.", q.events);
  counter("edge_clicks_acknowledged_total", "Click events the service accepted.", c.events_acked);
  counter("edge_click_batches_acknowledged_total",
          "RecordClicks batches the service accepted (replays included).", c.batches_acked);
  counter("edge_clicks_spooled_total", "Click events written to the spool.", c.events_spooled);
  counter("edge_click_batches_spooled_total", "Batches written to the spool.", c.batches_spooled);
  counter("edge_click_batches_replayed_total", "Spooled batches later accepted by the service.",
          c.batches_replayed);
  gauge("edge_click_spool_batches", "Batches waiting in the spool.", gauges.click_spool.batches);
  gauge("edge_click_spool_bytes", "Bytes the spool takes.", gauges.click_spool.bytes);
  Header(out, "edge_clicks_dropped_total", "counter",
         "Click events lost, by reason: the in-memory queue was full, the spool was at "
         "--click_spool_max_bytes, the spool could not be written, the service refused them "
         "as malformed, or their spool record was unreadable (as many as could be counted).");
  absl::StrAppend(&out, "edge_clicks_dropped_total{reason=\"queue_full\"} ", q.dropped_full, "\n",
                  "edge_clicks_dropped_total{reason=\"spool_full\"} ", c.dropped_spool_full, "\n",
                  "edge_clicks_dropped_total{reason=\"spool_error\"} ", c.dropped_spool_error, "\n",
                  "edge_clicks_dropped_total{reason=\"refused\"} ", c.dropped_refused, "\n",
                  "edge_clicks_dropped_total{reason=\"spool_unreadable\"} ",
                  gauges.click_spool.unreadable_events, "\n");
  counter("edge_click_batches_split_total",
          "Batches the service refused as a whole (INVALID_ARGUMENT), split in two to keep "
          "what it accepts.",
          c.batches_split);
  counter("edge_click_spool_unreadable_records_total",
          "Spool records dropped because they did not verify or decode.",
          gauges.click_spool.unreadable_records);
  counter("edge_click_rpcs_total", "RecordClicks calls made.", c.rpcs);
  counter("edge_click_rpc_failures_total", "RecordClicks calls that failed.", c.rpc_failures);
  Header(out, "edge_click_rpc_duration_seconds", "summary", "Duration of RecordClicks calls.");
  absl::StrAppend(&out, "edge_click_rpc_duration_seconds_sum ",
                  absl::StrFormat("%.9f", static_cast<double>(c.rpc_seconds_ns) * 1e-9), "\n",
                  "edge_click_rpc_duration_seconds_count ", c.rpcs, "\n");
}

}  // namespace shortener::edge
