// Response assembly: exact bytes, HEAD, Connection, Date, buffer reuse.
#include "edge/response_builder.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/edge/alloc_counter.h"

namespace shortener::edge {
namespace {

ResponsePlan Redirect302(absl::string_view location) {
  ResolveResult result;
  result.outcome = ResolveOutcome::kActive;
  result.redirect_status = 302;
  result.location = location;
  return PlanForOutcome(result);
}

ResponsePlan OutcomePlan(ResolveOutcome outcome) {
  ResolveResult result;
  result.outcome = outcome;
  return PlanForOutcome(result);
}

std::string Build(const ResponsePlan& plan, const ResponseOptions& options) {
  ResponseWriter writer;
  return std::string(writer.Build(plan, options));
}

TEST_CASE("a 302 is exactly status, Location, cache headers, framing", "[edge]") {
  CHECK(Build(Redirect302("https://example.com/a?b=c"), {}) ==
        "HTTP/1.1 302 Found\r\n"
        "Location: https://example.com/a?b=c\r\n"
        "Cache-Control: private, max-age=0\r\n"
        "Content-Length: 0\r\n"
        "Connection: keep-alive\r\n"
        "\r\n");
}

TEST_CASE("HEAD gets the same headers and no body", "[edge]") {
  ResponseOptions head;
  head.head = true;
  CHECK(Build(Redirect302("https://example.com/"), head) ==
        Build(Redirect302("https://example.com/"), {}));
  CHECK(Build(OutcomePlan(ResolveOutcome::kNotFound), head) ==
        "HTTP/1.1 404 Not Found\r\n"
        "Cache-Control: no-store\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        "Content-Length: 10\r\n"
        "Connection: keep-alive\r\n"
        "\r\n");
}

TEST_CASE("a 404 has a small plain body", "[edge]") {
  CHECK(Build(OutcomePlan(ResolveOutcome::kNotFound), {}) ==
        "HTTP/1.1 404 Not Found\r\n"
        "Cache-Control: no-store\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        "Content-Length: 10\r\n"
        "Connection: keep-alive\r\n"
        "\r\n"
        "not found\n");
}

TEST_CASE("a 503 carries Retry-After, Date and Connection: close", "[edge]") {
  ResponseOptions options;
  options.keep_alive = false;
  options.date = "Sun, 22 Nov 2026 02:17:03 GMT";
  CHECK(Build(OutcomePlan(ResolveOutcome::kUnavailable), options) ==
        "HTTP/1.1 503 Service Unavailable\r\n"
        "Date: Sun, 22 Nov 2026 02:17:03 GMT\r\n"
        "Cache-Control: no-store\r\n"
        "Retry-After: 1\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        "Content-Length: 20\r\n"
        "Connection: close\r\n"
        "\r\n"
        "service unavailable\n");
}

TEST_CASE("a 204 has no Content-Length and no body", "[edge]") {
  CHECK(Build(PlanForTarget(TargetKind::kFavicon), {}) ==
        "HTTP/1.1 204 No Content\r\n"
        "Cache-Control: public, max-age=86400\r\n"
        "Connection: keep-alive\r\n"
        "\r\n");
}

TEST_CASE("ResponseSize is exact for every plan and option", "[edge]") {
  std::vector<ResponsePlan> plans = {Redirect302("https://example.com/x")};
  for (int k = 0; k <= static_cast<int>(TargetKind::kUriTooLong); ++k) {
    plans.push_back(PlanForTarget(static_cast<TargetKind>(k)));
  }
  for (int o = 0; o <= static_cast<int>(ResolveOutcome::kUnavailable); ++o) {
    plans.push_back(OutcomePlan(static_cast<ResolveOutcome>(o)));
  }
  for (const ResponsePlan& plan : plans) {
    for (bool keep_alive : {true, false}) {
      for (bool head : {true, false}) {
        ResponseOptions options;
        options.keep_alive = keep_alive;
        options.head = head;
        options.date = keep_alive ? "" : "Sun, 22 Nov 2026 02:17:03 GMT";
        const std::string bytes = Build(plan, options);
        CHECK(bytes.size() == ResponseSize(plan, options));
        CHECK(bytes.find("\r\n\r\n") + 4 + (head ? 0 : plan.body.size()) == bytes.size());
      }
    }
  }
}

TEST_CASE("a fixed buffer that is too small gets nothing", "[edge]") {
  const ResponsePlan plan = OutcomePlan(ResolveOutcome::kNotFound);
  const size_t size = ResponseSize(plan, {});
  char buffer[512];
  REQUIRE(size <= sizeof(buffer));
  CHECK(WriteResponse(plan, {}, buffer, size - 1) == 0);
  CHECK(WriteResponse(plan, {}, buffer, size) == size);
  CHECK(absl::string_view(buffer, size) == Build(plan, {}));
}

TEST_CASE("building 1000 responses into one writer stops allocating", "[edge]") {
  std::vector<std::string> locations;
  for (int i = 0; i < 1000; ++i) {
    locations.push_back("https://example.com/" + std::string(i % 300, 'p') +
                        "?i=" + std::to_string(i));
  }
  std::vector<ResponsePlan> plans;
  for (const std::string& location : locations) {
    plans.push_back(Redirect302(location));
  }
  plans.push_back(OutcomePlan(ResolveOutcome::kUnavailable));

  ResponseWriter writer;
  size_t capacity_after_warmup = 0;
  size_t growths = 0;
  for (int round = 0; round < 2; ++round) {
    const size_t allocations_before = testing::ThreadAllocations();
    size_t previous = writer.capacity();
    for (size_t i = 0; i < plans.size(); ++i) {
      ResponseOptions options;
      options.head = i % 3 == 0;
      options.keep_alive = i % 5 != 0;
      absl::string_view bytes = writer.Build(plans[i], options);
      REQUIRE(bytes.size() == ResponseSize(plans[i], options));
      if (writer.capacity() != previous) ++growths;
      previous = writer.capacity();
    }
    if (round == 0) {
      capacity_after_warmup = writer.capacity();
      // The buffer grew only while responses got longer, a handful of times.
      CHECK(growths < 20);
    } else {
      // Second pass over the same responses: no growth, no allocation.
      CHECK(writer.capacity() == capacity_after_warmup);
      CHECK(testing::ThreadAllocations() == allocations_before);
    }
  }
}

TEST_CASE("FormatHttpDate writes an IMF-fixdate", "[edge]") {
  char out[kHttpDateLength];
  CHECK(FormatHttpDate(784111777, out) == "Sun, 06 Nov 1994 08:49:37 GMT");
  CHECK(FormatHttpDate(0, out) == "Thu, 01 Jan 1970 00:00:00 GMT");
  CHECK(FormatHttpDate(1795315023, out) == "Sun, 22 Nov 2026 02:37:03 GMT");
}

}  // namespace
}  // namespace shortener::edge
