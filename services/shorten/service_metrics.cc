#include "services/shorten/service_metrics.h"

#include <prometheus/text_serializer.h>

#include <deque>
#include <iterator>
#include <limits>
#include <sstream>
#include <utility>

namespace shortener::service {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

// Builds the families of one scrape, in order.
class Families {
 public:
  // A family of one series (or, with AddTo, several).
  MetricFamily& New(std::string name, MetricType type, std::string help) {
    families_.push_back(MetricFamily{std::move(name), std::move(help), type, {}});
    return families_.back();
  }
  void Counter(std::string name, std::string help, double value) {
    AddTo(New(std::move(name), MetricType::Counter, std::move(help)), value);
  }
  void Gauge(std::string name, std::string help, double value) {
    AddTo(New(std::move(name), MetricType::Gauge, std::move(help)), value);
  }
  void Histogram(std::string name, std::string help, const HistogramCounts& counts) {
    AddTo(New(std::move(name), MetricType::Histogram, std::move(help)), counts);
  }

  // One series of `family`, by its type.
  static void AddTo(MetricFamily& family, double value, Labels labels = {}) {
    ClientMetric metric;
    metric.label = std::move(labels);
    if (family.type == MetricType::Counter) {
      metric.counter.value = value;
    } else {
      metric.gauge.value = value;
    }
    family.metric.push_back(std::move(metric));
  }
  static void AddTo(MetricFamily& family, const HistogramCounts& counts, Labels labels = {}) {
    ClientMetric metric;
    metric.label = std::move(labels);
    metric.histogram.sample_count = counts.count();
    metric.histogram.sample_sum = counts.sum();
    uint64_t cumulative = 0;
    for (size_t b = 0; b < counts.bounds().size(); ++b) {
      cumulative += counts.counts()[b];
      metric.histogram.bucket.push_back({cumulative, counts.bounds()[b]});
    }
    metric.histogram.bucket.push_back({counts.count(), std::numeric_limits<double>::infinity()});
    family.metric.push_back(std::move(metric));
  }

  std::vector<MetricFamily> Take() {
    return std::vector<MetricFamily>(std::make_move_iterator(families_.begin()),
                                     std::make_move_iterator(families_.end()));
  }

 private:
  // A deque: the references New returned stay valid while more are added.
  std::deque<MetricFamily> families_;
};

void AddCalls(const ServiceStats& s, Families& f) {
  MetricFamily& received = f.New("shorten_rpcs_received_total", MetricType::Counter,
                                 "ShortenService calls received, by method, before any check "
                                 "(those in progress included).");
  for (size_t r = 0; r < kRpcCount; ++r) {
    Families::AddTo(received, static_cast<double>(s.received[r]),
                    {{"method", RpcName(static_cast<Rpc>(r))}});
  }
  f.Gauge("shorten_ready", "1 while /readyz answers 200 (database reachable, not draining).",
          s.ready ? 1 : 0);
}

void AddQueues(const ServiceStats& s, Families& f) {
  MetricFamily& items = f.New("shorten_queue_items", MetricType::Gauge,
                              "Items waiting in a bounded queue now, by queue.");
  MetricFamily& max_items = f.New("shorten_queue_max_items", MetricType::Gauge,
                                  "A bounded queue's limit (its flag), by queue.");
  MetricFamily& refused = f.New("shorten_queue_refused_total", MetricType::Counter,
                                "Items refused RESOURCE_EXHAUSTED because their queue was full.");
  for (const QueueStats& q : s.queues) {
    Families::AddTo(items, static_cast<double>(q.items), {{"queue", q.name}});
    Families::AddTo(max_items, static_cast<double>(q.max_items), {{"queue", q.name}});
    Families::AddTo(refused, static_cast<double>(q.refused), {{"queue", q.name}});
  }
}

void AddCommits(const store::GroupCommitter::Stats& c, Families& f) {
  f.Counter("shorten_group_commit_batches_total", "Transactions the group committer ran.",
            static_cast<double>(c.batches));
  f.Counter("shorten_group_commit_links_total", "Links those transactions carried.",
            static_cast<double>(c.links));
  f.Histogram("shorten_group_commit_batch_size", "Links per group-commit transaction.",
              c.batch_sizes);
  f.Histogram("shorten_group_commit_queue_wait_seconds",
              "Per transaction, how long its oldest link waited for a committer.",
              c.queue_wait_seconds);
  f.Histogram("shorten_group_commit_duration_seconds",
              "Per transaction, how long creating its links took (the callers wait for it).",
              c.commit_seconds);
}

void AddReads(const store::ReadBatcher::Stats& r, Families& f) {
  f.Counter("shorten_read_batches_total", "Batches of link look-ups the read batcher ran.",
            static_cast<double>(r.batches));
  f.Counter("shorten_read_lookups_total", "Look-ups (codes and aliases) those batches answered.",
            static_cast<double>(r.lookups));
  f.Counter("shorten_read_queries_total", "Database queries those batches made.",
            static_cast<double>(r.queries));
  f.Histogram("shorten_read_batch_size", "Look-ups per read batch.", r.batch_sizes);
  f.Histogram("shorten_read_queue_wait_seconds",
              "Per read batch, how long its oldest look-up waited for a reader.",
              r.queue_wait_seconds);
}

void AddPools(const ServiceStats& s, Families& f) {
  MetricFamily& open = f.New("shorten_db_pool_open_connections", MetricType::Gauge,
                             "Database connections open (idle, in use or being opened), by pool.");
  MetricFamily& in_use = f.New("shorten_db_pool_in_use_connections", MetricType::Gauge,
                               "Database connections in use or being opened, by pool.");
  MetricFamily& waiting = f.New("shorten_db_pool_waiting", MetricType::Gauge,
                                "Callers waiting for a connection now, by pool.");
  MetricFamily& max = f.New("shorten_db_pool_max_connections", MetricType::Gauge,
                            "Connections a pool opens at most, by pool.");
  MetricFamily& exhausted =
      f.New("shorten_db_pool_exhausted_total", MetricType::Counter,
            "Callers that gave up waiting for a connection (UNAVAILABLE), by pool.");
  for (const PoolStats& p : s.pools) {
    const Labels labels = {{"pool", p.name}};
    Families::AddTo(open, p.stats.open, labels);
    Families::AddTo(in_use, p.stats.in_use, labels);
    Families::AddTo(waiting, p.stats.waiting, labels);
    Families::AddTo(max, p.stats.max_size, labels);
    Families::AddTo(exhausted, static_cast<double>(p.stats.exhausted), labels);
  }
}

void AddIds(const idalloc::SegmentIdAllocator::Stats& ids, Families& f) {
  f.Counter("shorten_id_leases_total", "ID segments leased from the database.",
            static_cast<double>(ids.leases));
  f.Counter("shorten_id_lease_waits_total",
            "Link creations that had to wait for a segment (none was prefetched).",
            static_cast<double>(ids.waits));
  f.Counter("shorten_ids_issued_total", "IDs handed out.", static_cast<double>(ids.ids_issued));
  f.Gauge("shorten_id_remaining", "IDs left without a lease: current and prefetched segments.",
          static_cast<double>(ids.remaining));
  f.Gauge("shorten_id_segment_step", "IDs per segment of the latest lease (it adapts).",
          static_cast<double>(ids.current_step));
  f.Gauge("shorten_id_prefetch_depth", "Segments kept leased ahead.",
          static_cast<double>(ids.prefetch_depth));
}

void AddInvalidations(const InvalidationHub::Stats& h, Families& f) {
  f.Gauge("shorten_invalidation_subscribers", "WatchInvalidations streams subscribed now.",
          static_cast<double>(h.subscribers));
  f.Gauge("shorten_invalidation_pending_codes", "Revoked codes waiting for the next flush.",
          static_cast<double>(h.pending));
  f.Gauge("shorten_invalidation_backlog_codes",
          "Codes flushed but not yet sent, summed over subscribers.",
          static_cast<double>(h.backlog));
  f.Gauge("shorten_invalidation_max_backlog_codes",
          "The largest one subscriber's backlog (drop_all at --invalidation_max_pending).",
          static_cast<double>(h.max_backlog));
  f.Counter("shorten_invalidation_codes_total", "Revoked codes published to subscribers.",
            static_cast<double>(h.codes));
  f.Counter("shorten_invalidation_batches_total", "Flushes to subscribers.",
            static_cast<double>(h.batches));
  f.Counter("shorten_invalidation_overflows_total",
            "drop_all sent to a subscriber instead of its backlog (it fell behind).",
            static_cast<double>(h.overflows));
  f.Counter("shorten_invalidation_drop_alls_total",
            "drop_all to every subscriber (the database listener reconnected).",
            static_cast<double>(h.drop_alls));
}

void AddClicks(const ClickRecorder::Stats& c, Families& f) {
  MetricFamily& batches = f.New("shorten_click_batches_total", MetricType::Counter,
                                "RecordClicks batches, by outcome: recorded, duplicate (a retry "
                                "of a recorded batch), failed (an error answered).");
  Families::AddTo(batches, static_cast<double>(c.batches), {{"outcome", "recorded"}});
  Families::AddTo(batches, static_cast<double>(c.duplicates), {{"outcome", "duplicate"}});
  Families::AddTo(batches, static_cast<double>(c.failed), {{"outcome", "failed"}});
  MetricFamily& events = f.New("shorten_click_events_total", MetricType::Counter,
                               "Click events, by outcome: accepted (counted), skipped (no such "
                               "link), refused (malformed).");
  Families::AddTo(events, static_cast<double>(c.accepted), {{"outcome", "accepted"}});
  Families::AddTo(events, static_cast<double>(c.skipped), {{"outcome", "skipped"}});
  Families::AddTo(events, static_cast<double>(c.refused), {{"outcome", "refused"}});
  f.Histogram("shorten_click_batch_events", "Events per RecordClicks batch answered OK.",
              c.batch_events);
}

void AddKeys(const auth::KeyCache::Stats& k, Families& f) {
  f.Counter("shorten_key_cache_hits_total", "API key checks answered from the cache.",
            static_cast<double>(k.hits));
  f.Counter("shorten_key_cache_misses_total", "API key checks that read the database.",
            static_cast<double>(k.loads));
  f.Counter("shorten_key_cache_invalidations_total",
            "Cached keys dropped because a key was revoked or changed.",
            static_cast<double>(k.invalidations));
  f.Gauge("shorten_key_cache_entries", "Keys in the cache.", static_cast<double>(k.size));
}

// The HTTP/JSON API's listener: its calls count in shorten_rpcs_total like
// any other; these are the connections and what the HTTP layer refused
// before a call.
void AddHttpApi(const edge::http::HttpServerStats& h, Families& f) {
  f.Gauge("shorten_http_open_connections", "HTTP/JSON API connections open now.",
          static_cast<double>(h.open_connections));
  f.Gauge("shorten_http_max_connections",
          "HTTP/JSON API connections allowed at once "
          "(--http_max_connections).",
          static_cast<double>(h.max_connections));
  f.Counter("shorten_http_connections_accepted_total", "HTTP/JSON API connections accepted.",
            static_cast<double>(h.connections_accepted));
  f.Counter("shorten_http_connections_refused_total",
            "HTTP/JSON API connections closed unanswered: over --http_max_connections (or "
            "while shutting down).",
            static_cast<double>(h.connections_refused + h.connections_refused_per_client));
  f.Counter("shorten_http_requests_total",
            "HTTP/JSON API requests handed to the API (each answered at once or sent as a call).",
            static_cast<double>(h.requests));
  MetricFamily& refused = f.New("shorten_http_refused_requests_total", MetricType::Counter,
                                "HTTP/JSON API requests the HTTP layer refused itself (400, 413, "
                                "414, 431, 505), by reason.");
  for (size_t i = 0; i < edge::http::kRequestRefusalCount; ++i) {
    const auto reason = static_cast<edge::http::RequestRefusal>(i);
    Families::AddTo(refused, static_cast<double>(h.refused_requests[i]),
                    {{"reason", std::string(edge::http::RequestRefusalName(reason))}});
  }
  f.Counter("shorten_http_timeouts_total",
            "HTTP/JSON API connections closed for time: idle, a request not complete in time, "
            "a client not reading.",
            static_cast<double>(h.idle_timeouts + h.request_timeouts + h.write_timeouts));
}

}  // namespace

std::vector<MetricFamily> ServiceStatsFamilies(const ServiceStats& stats) {
  Families f;
  AddCalls(stats, f);
  AddQueues(stats, f);
  AddCommits(stats.commits, f);
  AddReads(stats.reads, f);
  AddPools(stats, f);
  AddIds(stats.ids, f);
  AddInvalidations(stats.invalidations, f);
  AddClicks(stats.clicks, f);
  AddKeys(stats.keys, f);
  if (stats.http_api.has_value()) AddHttpApi(*stats.http_api, f);
  return f.Take();
}

ServiceMetrics::ServiceMetrics(std::function<ServiceStats()> gather)
    : gather_(std::move(gather)), rpcs_(registry_) {}

std::string ServiceMetrics::Render() const {
  std::vector<MetricFamily> families = registry_.Collect();
  std::vector<MetricFamily> gathered = ServiceStatsFamilies(gather_());
  families.insert(families.end(), std::make_move_iterator(gathered.begin()),
                  std::make_move_iterator(gathered.end()));
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace shortener::service
