// Reading the redirect edge's /metrics from a benchmark driver: one scrape
// as a map of samples, and the figures a window needs from two scrapes
// (counter deltas, responses by status, a histogram quantile).
//
// A scrape that fails is empty (every sample reads 0): a probe must never
// stop a benchmark. Each call is independent; nothing is shared.
#ifndef SHORTENER_TESTS_BENCH_EDGE_METRICS_SCRAPE_H_
#define SHORTENER_TESTS_BENCH_EDGE_METRICS_SCRAPE_H_

#include <cstdint>
#include <map>
#include <string>

namespace shortener::bench::edge {

// Every sample of one /metrics scrape: "name{labels}" -> value.
using Scrape = std::map<std::string, double>;

// GET /metrics on 127.0.0.1:`port`, the edge's admin port
// (EdgeProcess::admin_port()): /metrics is not on the public one.
Scrape ScrapeMetrics(int port);

// The sample `name` ("name{labels}" exactly as exposed), 0 when absent.
double Value(const Scrape& s, const std::string& name);

// Value(after, name) - Value(before, name), truncated to an integer.
int64_t Delta(const Scrape& before, const Scrape& after, const std::string& name);

// Deltas of edge_http_responses_total by code; `own_200s` is the number of
// 200s the driver caused itself on the public port, removed from the count
// (its /metrics scrapes go to the admin port and are not counted).
// `other_statuses` lists the non-302 codes, "404: 3, 503: 1".
void ResponseDeltas(const Scrape& before, const Scrape& after, int64_t own_200s, int64_t* ok302,
                    int64_t* other, std::string* other_statuses);

// The upper bound (ms) of the histogram bucket holding quantile `q` of the
// observations between two scrapes; 0 without observations, -1 past the
// last finite bound.
double HistogramQuantileMs(const Scrape& before, const Scrape& after, const std::string& name,
                           double q);

}  // namespace shortener::bench::edge

#endif  // SHORTENER_TESTS_BENCH_EDGE_METRICS_SCRAPE_H_
