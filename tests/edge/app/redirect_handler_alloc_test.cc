// The redirect handler's hit path allocates nothing: a cached redirect,
// from the bytes read to the response in the connection's output buffer
// (classification, cache look-up, response assembly, metrics), with clicks
// off. Guards docs/edge.md's hot-path rule at the handler; the socket side
// is tests/edge/http/http_server_alloc_test.cc.
#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "edge/app/redirect_handler.h"
#include "tests/edge/alloc_counter.h"
#include "tests/edge/app/handler_rig.h"

namespace shortener::edge::testing {
namespace {

TEST_CASE("handler: a cached redirect allocates nothing", "[edge/app][concurrent]") {
  HandlerRig rig;
  const std::string code = rig.Code(501);
  rig.upstream.SetLink(code, "https://example.com/hot");
  REQUIRE(StatusLine(rig.Get("/" + code)) == "HTTP/1.1 302 Found");  // the miss that caches it
  ProtocolHarness& connection = rig.Connection();
  const std::string request = Request("/" + code, "User-Agent: bench\r\n");
  // One request in, one response out, nothing kept: as the loop runs it.
  const auto serve = [&] {
    connection.Receive(request);
    while (connection.protocol().Process()) {
    }
    const bool redirected = absl::StartsWith(connection.protocol().output(), "HTTP/1.1 302 Found");
    connection.protocol().OutputWritten();
    return redirected;
  };
  for (int i = 0; i < 10; ++i) REQUIRE(serve());  // buffers reach their size
  const size_t before = ThreadAllocations();
  bool all_redirected = true;
  for (int i = 0; i < 1000; ++i) all_redirected = serve() && all_redirected;
  CHECK(ThreadAllocations() - before == 0);
  CHECK(all_redirected);
  CHECK(rig.upstream.Calls().size() == 1);
}

}  // namespace
}  // namespace shortener::edge::testing
