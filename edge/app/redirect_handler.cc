#include "edge/app/redirect_handler.h"

#include <atomic>
#include <chrono>
#include <ctime>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "edge/http_status.h"
#include "edge/response_builder.h"
#include "lib/common/log.h"

namespace shortener::edge {
namespace {

constexpr absl::string_view kNoStore = "Cache-Control: no-store\r\n";

// Admits at most one log line per second for one kind of failure, and says
// how many were held back: while the service is down every miss fails, and
// a bad row that many clients ask for fails on every miss; neither may write
// one line per request.
class LogGate {
 public:
  // True if a line may be written now; then *held_back is how many calls
  // were refused since the last line.
  bool Admit(int64_t* held_back) {
    const int64_t now = MonotonicNowNs();
    int64_t last = last_logged_ns_.load(std::memory_order_relaxed);
    if ((last != 0 && now - last < 1'000'000'000) ||
        !last_logged_ns_.compare_exchange_strong(last, now, std::memory_order_relaxed)) {
      held_back_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    *held_back = held_back_.exchange(0, std::memory_order_relaxed);
    return true;
  }

 private:
  std::atomic<int64_t> last_logged_ns_{0};
  std::atomic<int64_t> held_back_{0};
};

void LogResolveFailure(const absl::Status& error) {
  static LogGate gate;
  int64_t others = 0;
  if (!gate.Admit(&others)) return;
  LogWarning("Resolve failed: %s (%d more failures not logged since the last line)",
             error.ToString(), others);
}

void LogUnsafeLocation(absl::string_view code, int redirect_status) {
  static LogGate gate;
  int64_t others = 0;
  if (!gate.Admit(&others)) return;
  // The code is safe to log (classification let through only
  // [A-Za-z0-9_-]); the Location is not, and is left out.
  LogError(
      "Resolve returned a link the edge refuses to redirect to: code %s (a Location that "
      "is not a visible-ASCII absolute URL with a scheme of --allowed_schemes, or redirect "
      "status %d); %d more such answers not logged since the last line",
      code, redirect_status, others);
}

}  // namespace

int64_t MonotonicNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

RedirectHandler::RedirectHandler(const codec::ShortCodec* codec, LinkCache* cache,
                                 LinkResolver* upstream, ResolveBatcher* batcher,
                                 EdgeMetrics* metrics, ClickRecording clicks,
                                 RedirectHandlerOptions options)
    : codec_(codec),
      cache_(cache),
      upstream_(upstream),
      batcher_(batcher),
      metrics_(metrics),
      clicks_(clicks),
      options_(std::move(options)) {}

void RedirectHandler::Handle(http::Exchange& exchange) {
  const http::Request& request = exchange.request();
  const RequestTarget target =
      ClassifyRequest(request.method, request.target, *codec_, options_.target);
  if (target.kind == TargetKind::kLookupCode || target.kind == TargetKind::kLookupAlias) {
    Lookup(exchange, target.code, target.kind == TargetKind::kLookupAlias,
           target.method == Method::kHead, request.keep_alive);
    return;
  }
  ResponseOptions response_options;
  response_options.keep_alive = request.keep_alive;
  response_options.head = target.method == Method::kHead;
  response_options.date = exchange.http_date();
  const int loop = exchange.loop_index();
  int status;
  switch (target.kind) {
    case TargetKind::kReadyz:
      status = AppendResponse(exchange.out(), PlanForReadiness(Ready()), response_options);
      break;
    case TargetKind::kPrefiltered:
      metrics_->CountPrefiltered(loop);
      status = AppendResponse(exchange.out(), PlanForTarget(target.kind), response_options);
      break;
    case TargetKind::kBadRequest:
      metrics_->CountBadRequest(loop, target.bad_reason);
      status = AppendResponse(exchange.out(), PlanForTarget(target.kind), response_options);
      break;
    default:
      status = AppendResponse(exchange.out(), PlanForTarget(target.kind), response_options);
      break;
  }
  metrics_->CountResponse(loop, status);
  if (options_.access_log) LogAccess(AccessPrefix(request), status, target.code);
}

void RedirectHandler::Lookup(http::Exchange& exchange, absl::string_view code, bool alias,
                             bool head, bool keep_alive) {
  std::string& out = exchange.out();
  const size_t mark = out.size();
  ResponseOptions response_options;
  response_options.keep_alive = keep_alive;
  response_options.head = head;
  response_options.date = exchange.http_date();
  int status = 0;
  const CacheLookup found =
      cache_->Lookup(code, exchange.now_ns(), [&](const ResolveResult& result) {
        status = AppendResponse(out, PlanForOutcome(result, options_.locations), response_options);
      });
  if (found == CacheLookup::kFresh) {
    metrics_->CountResponse(exchange.loop_index(), status);
    if (clicks_.queue != nullptr && IsRedirectStatus(status)) {
      std::optional<ClickEvent> click = PrepareClick(exchange.request(), code, head);
      RecordClick(click, status);
    }
    if (options_.access_log) LogAccess(AccessPrefix(exchange.request()), status, code);
    return;
  }
  // A stale entry is served only if the service cannot be reached: ask it.
  out.resize(mark);

  // The request's views die when Handle returns: keep copies.
  std::string access_prefix;
  if (options_.access_log) access_prefix = AccessPrefix(exchange.request());
  const int loop = exchange.loop_index();
  std::optional<ClickEvent> click = PrepareClick(exchange.request(), code, head);
  auto waiter = [this, deferred = exchange.Defer(), head, keep_alive, loop,
                 access_prefix = std::move(access_prefix), click = std::move(click),
                 code = std::string(code)](const ResolveResult& result) mutable {
    // Runs on the thread that completes the fetch (a gRPC thread; the main
    // thread when shutdown drains): format the date here, the loop's is out
    // of reach.
    char date[kHttpDateLength];
    ResponseOptions options;
    options.keep_alive = keep_alive;
    options.head = head;
    options.date = FormatHttpDate(absl::ToTimeT(options_.clock->Now()), date);
    thread_local std::string bytes;
    bytes.clear();
    const int status = AppendResponse(bytes, PlanForOutcome(result, options_.locations), options);
    metrics_->CountResponse(loop, status);
    deferred.Complete(bytes);
    RecordClick(click, status);
    if (options_.access_log) LogAccess(access_prefix, status, code);
  };
  // One deadline from the request's arrival (its first byte read), so time
  // spent behind earlier requests on its connection counts too.
  const int64_t deadline_ns =
      exchange.arrival_ns() + absl::ToInt64Nanoseconds(options_.miss_deadline);
  std::optional<FetchTicket> ticket =
      cache_->JoinFetch(code, exchange.now_ns(), std::move(waiter), deadline_ns);
  if (!ticket.has_value()) return;  // coalesced into a fetch in flight
  StartFetch(*std::move(ticket), alias, deadline_ns);
}

void RedirectHandler::StartFetch(FetchTicket ticket, bool alias, int64_t deadline_ns) {
  if (alias && alias_misses_.fetch_add(1, std::memory_order_relaxed) >= options_.max_alias_misses) {
    // Made-up aliases cost the service a look-up each: past the bound, the
    // edge answers (stale or 503) instead of adding to its work.
    alias_misses_.fetch_sub(1, std::memory_order_relaxed);
    metrics_->CountMissRefusal(MissRefusal::kAliasMisses);
    ResolveResult refused;
    refused.outcome = ResolveOutcome::kOverloaded;
    cache_->CompleteFetch(ticket, refused, MonotonicNowNs());
    return;
  }
  // The loop's clock is CLOCK_MONOTONIC_COARSE, steady_clock's base with up
  // to a tick of lag: the deadline is at worst a few ms early. One already
  // past (a request that waited behind others) is answered at once.
  const ResolveBatcher::Clock::time_point deadline =
      ResolveBatcher::Clock::time_point(std::chrono::nanoseconds(deadline_ns));
  // The ticket moves into the callback: the code must not view it.
  const std::string code(ticket.key());
  batcher_->Resolve(code, deadline, [this, alias, ticket = std::move(ticket)](ResolveReply reply) {
    if (alias) alias_misses_.fetch_sub(1, std::memory_order_relaxed);
    if (reply.outcome == ResolveOutcome::kOverloaded) {
      metrics_->CountMissRefusal(MissRefusal::kResolveQueueFull);
    } else if (reply.outcome == ResolveOutcome::kTimedOut) {
      metrics_->CountMissRefusal(MissRefusal::kDeadline);
    } else {
      metrics_->ObserveResolve(reply.latency, reply.outcome);
    }
    ResolveResult result;
    result.outcome = reply.outcome;
    result.redirect_status = reply.redirect_status;
    result.location = reply.location;
    if (reply.outcome == ResolveOutcome::kActive &&
        PlanForOutcome(result, options_.locations).status == 502) {
      // The service validates URLs, so this is a bug or a tampered row: never
      // cache it; answer as if the service were unreachable (a stale entry or
      // 503) rather than send anyone somewhere odd.
      metrics_->CountUnsafeLocation();
      LogUnsafeLocation(ticket.key(), reply.redirect_status);
      result.outcome = ResolveOutcome::kUnavailable;
      result.location = {};
    } else if (reply.outcome == ResolveOutcome::kUnavailable) {
      LogResolveFailure(reply.error);
    }
    const int64_t now = MonotonicNowNs();
    int64_t expire_at = 0;
    if (reply.expire_time.has_value() && result.outcome == ResolveOutcome::kActive) {
      const absl::Duration remaining = *reply.expire_time - options_.clock->Now();
      if (remaining <= absl::ZeroDuration()) {
        // Past its expiry by this machine's clock (skew, or the answer was
        // slow): never redirect an expired link.
        result.outcome = ResolveOutcome::kExpired;
        result.location = {};
      } else {
        // The link's wall-clock expiry on the monotonic clock.
        expire_at = now + absl::ToInt64Nanoseconds(remaining);
      }
    }
    cache_->CompleteFetch(ticket, result, now, expire_at);
  });
}

void RedirectHandler::DropAll() { cache_->Clear(); }

void RedirectHandler::Invalidate(absl::string_view code) { cache_->Invalidate(code); }

void RedirectHandler::StreamState(bool subscribed) { metrics_->SetStreamSubscribed(subscribed); }

void RedirectHandler::StreamStarting() { metrics_->CountStreamStart(); }

void RedirectHandler::MessageReceived(size_t codes, bool drop_all) {
  metrics_->CountInvalidation(codes, drop_all);
}

std::string RedirectHandler::MetricsText() const {
  EdgeMetrics::Gauges gauges;
  gauges.cache = cache_->Stats();
  if (const http::HttpServer* server = server_.load()) gauges.server = server->Stats();
  gauges.service_ready = upstream_->Ready();
  const ResolveBatcher::Stats batches = batcher_->GetStats();
  gauges.resolve_rpcs = batches.calls;
  gauges.resolve_codes = batches.codes;
  gauges.resolve_queued = batches.queued;
  gauges.alias_misses = alias_misses_.load(std::memory_order_relaxed);
  if (clicks_.queue != nullptr) gauges.click_queue = clicks_.queue->Stats();
  if (clicks_.sender != nullptr) gauges.click_sender = clicks_.sender->Stats();
  if (clicks_.spool != nullptr) gauges.click_spool = clicks_.spool->Stats();
  return metrics_->Render(gauges);
}

std::optional<ClickEvent> RedirectHandler::PrepareClick(const http::Request& request,
                                                        absl::string_view code, bool head) const {
  if (clicks_.queue == nullptr || !CountsAsClick(head, request.purpose, request.sec_purpose)) {
    return std::nullopt;
  }
  IpAddress peer;
  peer.is_v6 = request.peer.is_v6;
  peer.bytes = request.peer.bytes;
  char ip[kMaxIpTextLength];
  const absl::string_view client =
      FormatIpAddress(ClientIp(peer, request.x_forwarded_for, options_.trusted_proxies), ip);
  return MakeClickEvent(code, options_.clock->Now(), client, request.user_agent, request.referer,
                        0);
}

void RedirectHandler::RecordClick(std::optional<ClickEvent>& click, int status) const {
  if (!click.has_value() || !IsRedirectStatus(status)) return;
  click->http_status = status;
  // A full queue drops and counts (edge_clicks_dropped_total): never wait.
  clicks_.queue->Push(*std::move(click));
  click.reset();
}

std::string RedirectHandler::AccessPrefix(const http::Request& request) const {
  IpAddress peer;
  peer.is_v6 = request.peer.is_v6;
  peer.bytes = request.peer.bytes;
  const IpAddress client = ClientIp(peer, request.x_forwarded_for, options_.trusted_proxies);
  char ip[kMaxIpTextLength];
  return absl::StrCat(
      "client=", FormatIpAddress(client, ip),
      " method=", request.method == "GET" || request.method == "HEAD" ? request.method : "other");
}

void RedirectHandler::LogAccess(absl::string_view prefix, int status,
                                absl::string_view code) const {
  // Only what classification accepted is logged (codes are [A-Za-z0-9_-]);
  // the raw target may hold anything, including terminal escapes.
  LogInfo("access %s status=%d code=%s", prefix, status,
          code.empty() ? absl::string_view("-") : code);
}

}  // namespace shortener::edge
