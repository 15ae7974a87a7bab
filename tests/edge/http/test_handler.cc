#include "tests/edge/http/test_handler.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace shortener::edge::http::testing {
namespace {

// The integer value of `name`=... in the query of `target`, or `fallback`.
int QueryInt(absl::string_view target, absl::string_view name, int fallback) {
  const size_t question = target.find('?');
  if (question == absl::string_view::npos) return fallback;
  absl::string_view query = target.substr(question + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const absl::string_view pair = query.substr(0, amp);
    if (pair.size() > name.size() && pair.substr(0, name.size()) == name &&
        pair[name.size()] == '=') {
      int value = 0;
      if (absl::SimpleAtoi(pair.substr(name.size() + 1), &value)) return value;
    }
    if (amp == absl::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return fallback;
}

std::string Answer(const Request& request, int loop, size_t body_size = 0) {
  const char* method = request.method == "GET"    ? "GET"
                       : request.method == "POST" ? "POST"
                                                  : "OTHER";
  std::string body = absl::StrCat(method, " ", QueryInt(request.target, "i", 0));
  if (body_size > body.size()) body.resize(body_size, '.');
  return absl::StrCat("HTTP/1.1 200 OK\r\nContent-Length: ", body.size(), "\r\nX-Loop: ", loop,
                      "\r\nConnection: ", request.keep_alive ? "keep-alive" : "close", "\r\n\r\n",
                      body);
}

}  // namespace

TestHandler::~TestHandler() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    threads.swap(completers_);
  }
  for (std::thread& thread : threads) thread.join();
}

void TestHandler::Handle(Exchange& exchange) {
  const Request& request = exchange.request();
  SeenRequest seen;
  seen.method = std::string(request.method);
  seen.target = std::string(request.target);
  seen.x_forwarded_for = std::string(request.x_forwarded_for);
  seen.user_agent = std::string(request.user_agent);
  seen.referer = std::string(request.referer);
  seen.purpose = std::string(request.purpose);
  seen.sec_purpose = std::string(request.sec_purpose);
  seen.http_date = std::string(exchange.http_date());
  seen.peer = request.peer;
  seen.keep_alive = request.keep_alive;
  seen.version = request.version;
  seen.loop = exchange.loop_index();
  const absl::string_view path = request.target.substr(0, request.target.find('?'));
  {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back(seen);
  }
  ++handled_;

  if (path == "/defer" || path == "/drop") {
    DeferredResponse deferred = exchange.Defer();
    if (exchange.Defer().pending()) second_defer_was_pending_ = true;
    ++deferred_;
    if (path == "/drop") return;  // destroyed here: the server answers 500
    const int delay_ms = QueryInt(request.target, "ms", 20);
    std::string answer = Answer(request, exchange.loop_index());
    std::lock_guard<std::mutex> lock(mu_);
    completers_.emplace_back(
        [delay_ms, answer = std::move(answer), deferred = std::move(deferred)]() mutable {
          absl::SleepFor(absl::Milliseconds(delay_ms));
          deferred.Complete(answer);
        });
    return;
  }
  if (path == "/silent") return;
  if (path == "/big") {
    exchange.out() += Answer(request, exchange.loop_index(), 4 << 20);
    return;
  }
  if (path == "/pad") {
    const int bytes = QueryInt(request.target, "bytes", 0);
    exchange.out() +=
        Answer(request, exchange.loop_index(), static_cast<size_t>(std::max(0, bytes)));
    return;
  }
  exchange.out() += Answer(request, exchange.loop_index());
}

std::vector<SeenRequest> TestHandler::Seen() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_;
}

std::string Get(const std::string& target, const std::string& extra) {
  return absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: sho.rt\r\n", extra, "\r\n");
}

}  // namespace shortener::edge::http::testing
