// Creates links through the real shorten-service (BatchShorten, up to 1000
// per call, several calls in flight on separate connections) and returns
// their codes in creation order. Every URL is distinct (`tag` plus an index)
// and force_new is set, so every item creates a link.
#ifndef SHORTENER_TESTS_BENCH_EDGE_LINK_LOADER_H_
#define SHORTENER_TESTS_BENCH_EDGE_LINK_LOADER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace shortener::bench::edge {

struct LinkLoadOptions {
  std::string target;   // host:port of the shorten-service
  std::string api_key;  // sent with every call (scope shorten)
  int64_t count = 0;
  int batch_size = 1000;
  int inflight = 4;  // concurrent BatchShorten calls, one connection each
  std::string tag;   // makes the URLs unique across calls of this run
};

// The URL of link `index` of `tag` (what Resolve must return for it).
std::string BenchUrl(const std::string& tag, int64_t index);

// Codes of the created links, in index order. Any failed call or item
// fails the whole load.
absl::StatusOr<std::vector<std::string>> CreateLinks(const LinkLoadOptions& options);

}  // namespace shortener::bench::edge

#endif  // SHORTENER_TESTS_BENCH_EDGE_LINK_LOADER_H_
