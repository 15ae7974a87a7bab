// links_bench: ListLinks on a tenant with 10^7 links (issue 21, item 1),
// timed over gRPC against the real shorten-service on a private
// PostgreSQL, on the first page and a million links deep, in each order
// and with each kind of filter; beside it, the reference a page would cost
// without keysets (the same page read with OFFSET, in SQL) and a GetLink
// call (one small RPC and one key look-up).
//
// The links are written by SQL as BatchShorten writes them (the rows, the
// label members its trigger keeps, the click ranks the rollup merge keeps):
// 10^7 through BatchShorten would take over a minute per million on this
// machine, and the read path, not the write path, is measured here. The
// report says how long the load took and how large the tables are.
//
// Run: tests/bench/links/run.sh (builds Release; about 10 minutes at 10^7
// links; --links=1000000 for a quick look).
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "lib/store/pg/queries.h"
#include "services/shorten/page_token.h"
#include "shortener/v1/shortener.grpc.pb.h"
#include "tests/bench/common/bench_util.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/service_process.h"

ABSL_FLAG(int64_t, links, 10'000'000, "links of the listed tenant");
ABSL_FLAG(int, pages, 200, "pages timed per case");
ABSL_FLAG(int, page_size, 100, "links per page");

namespace shortener::bench::links {
namespace {

constexpr char kTenant[] = "bench-list";
// Ids far above what the service's own allocator hands out here.
constexpr int64_t kFirstId = 1'000'000'000'000;

struct Config {
  std::string command;
  int64_t links = 0;
  int pages = 0;
  int page_size = 0;
};

absl::StatusOr<Config> ConfigFromFlags(const std::string& command) {
  Config c;
  c.command = command;
  c.links = absl::GetFlag(FLAGS_links);
  c.pages = absl::GetFlag(FLAGS_pages);
  c.page_size = absl::GetFlag(FLAGS_page_size);
  if (c.links < 100'000) return absl::InvalidArgumentError("--links must be at least 100000");
  if (c.pages < 10) return absl::InvalidArgumentError("--pages must be at least 10");
  if (c.page_size < 1 || c.page_size > 1000) {
    return absl::InvalidArgumentError("--page_size must be 1 to 1000");
  }
  return c;
}

int64_t SqlNumber(pqxx::connection& conn, const std::string& sql) {
  pqxx::nontransaction tx(conn);
  return tx.exec1(sql)[0].as<int64_t>();
}

// Loads the tenant: link g (1..n) created g ms after a base time; every
// 10th carries label campaign=spring (a campaign of n/10), every 1000th is
// revoked, every 3rd points at shop.example.com, and every 10th (offset 1)
// has been clicked. Another tenant's n/10 links are interleaved, so that
// the tenant's index is not the whole table.
absl::Status Load(pqxx::connection& conn, int64_t n, std::string& report) {
  const absl::Time t0 = absl::Now();
  int64_t label = 0;
  {
    pqxx::work tx(conn);
    label = tx.exec1(absl::StrCat("INSERT INTO labels (tenant, key, value) VALUES ('", kTenant,
                                  "', 'campaign', 'spring') RETURNING id"))[0]
                .as<int64_t>();
    tx.commit();
  }
  constexpr int64_t kChunk = 1'000'000;
  for (int64_t from = 1; from <= n; from += kChunk) {
    const int64_t to = std::min(n, from + kChunk - 1);
    pqxx::work tx(conn);
    tx.exec(absl::StrCat(
        "INSERT INTO links (id, long_url, long_url_sha256, owner, create_time, label_ids,"
        "                   revoke_time)"
        " SELECT ",
        kFirstId,
        " + g, 'https://' || CASE WHEN g % 3 = 0 THEN 'shop.example.com'"
        "   ELSE 'example.com' END || '/spring/offer?recipient=' || g,"
        " sha256(g::text::bytea), '",
        kTenant,
        "', timestamptz '2026-01-01 00:00:00+00' + g * interval '1 ms',"
        " CASE WHEN g % 10 = 0 THEN ARRAY[",
        label,
        "::bigint] END,"
        " CASE WHEN g % 1000 = 0 THEN now() END"
        " FROM generate_series(",
        from, "::bigint, ", to, ") g"));
    tx.exec(
        absl::StrCat("INSERT INTO links (id, long_url, long_url_sha256, owner, create_time)"
                     " SELECT ",
                     kFirstId,
                     " + 100000000000 + g, 'https://example.org/' || g, sha256(g::text::bytea),"
                     " 'bench-other', timestamptz '2026-01-01 00:00:00+00' + g * interval '10 ms'"
                     " FROM generate_series(",
                     from / 10 + 1, "::bigint, ", to / 10, ") g"));
    tx.exec(absl::StrCat("INSERT INTO link_click_totals (link_id, owner, human) SELECT ", kFirstId,
                         " + g, '", kTenant, "', (g * 7919) % 10000 + 1 FROM generate_series(",
                         from, "::bigint, ", to, ") g WHERE g % 10 = 1"));
    tx.commit();
    std::fprintf(stderr, "  loaded %lld of %lld links, %.0f s\n", static_cast<long long>(to),
                 static_cast<long long>(n), absl::ToDoubleSeconds(absl::Now() - t0));
  }
  {
    pqxx::nontransaction tx(conn);
    tx.exec("VACUUM ANALYZE links, link_label_members, link_click_totals, labels");
  }
  const double load_s = absl::ToDoubleSeconds(absl::Now() - t0);
  auto size = [&](const char* relation) {
    return static_cast<double>(
               SqlNumber(conn, absl::StrCat("SELECT pg_relation_size('", relation, "')"))) /
           (1 << 20);
  };
  absl::StrAppendFormat(
      &report,
      "Loaded %lld links of the tenant (and %lld of another) in %.0f s by SQL. Sizes: links "
      "%.0f MiB, links_owner_create_time %.0f MiB, link_label_members %.0f MiB (%lld rows), "
      "link_click_totals %.0f MiB + link_click_totals_rank %.0f MiB (%lld rows).\n\n",
      static_cast<long long>(n), static_cast<long long>(n / 10), load_s, size("links"),
      size("links_owner_create_time"), size("link_label_members"),
      static_cast<long long>(SqlNumber(conn, "SELECT count(*) FROM link_label_members")),
      size("link_click_totals"), size("link_click_totals_rank"),
      static_cast<long long>(SqlNumber(conn, "SELECT count(*) FROM link_click_totals")));
  return absl::OkStatus();
}

struct Timing {
  std::vector<double> ms;
  int64_t links = 0;
  int calls = 0;
};

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

std::string Row(const std::string& name, const Timing& t) {
  return absl::StrFormat("| %s | %.2f | %.2f | %.1f |\n", name, Percentile(t.ms, 0.5),
                         Percentile(t.ms, 0.99),
                         static_cast<double>(t.links) / std::max(1, t.calls));
}

// `pages` calls of ListLinks: each follows the previous one's token (from
// `request`'s own), starting over when a listing ends.
absl::StatusOr<Timing> TimePages(v1::ShortenService::Stub& stub, v1::ListLinksRequest request,
                                 int pages) {
  Timing t;
  const std::string start = request.page_token();
  for (int i = 0; i < pages; ++i) {
    v1::ListLinksResponse page;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    const absl::Time t0 = absl::Now();
    grpc::Status st = stub.ListLinks(&ctx, request, &page);
    t.ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t0));
    if (!st.ok()) return absl::InternalError(absl::StrCat("ListLinks: ", st.error_message()));
    t.links += page.links_size();
    ++t.calls;
    request.set_page_token(page.next_page_token().empty() ? start : page.next_page_token());
  }
  return t;
}

// The token of a page that starts after the `depth`-th link of a walk.
std::string DeepToken(const store::ListCursor& cursor, const std::string& filter,
                      store::LinkOrder order) {
  return service::EncodePageToken(cursor, service::ListingFingerprint(kTenant, filter, order));
}

absl::Status Run(const Config& c) {
  std::fprintf(stderr, "== links_bench: %lld links\n", static_cast<long long>(c.links));
  auto cluster = testing::PgCluster::Start();
  if (!cluster.ok()) return cluster.status();
  testing::ServiceProcessOptions options;
  options.conninfo = (*cluster)->ConnInfo();
  auto service = testing::ServiceProcess::Start(options);
  if (!service.ok()) return service.status();
  pqxx::connection conn((*cluster)->ConnInfo());
  std::string report =
      absl::StrFormat("### ListLinks\n\nCommand: `%s` (%s, %d CPUs)\n\n", c.command, CpuModel(),
                      static_cast<int>(std::thread::hardware_concurrency()));
  if (absl::Status st = Load(conn, c.links, report); !st.ok()) return st;

  std::unique_ptr<v1::ShortenService::Stub> stub = (*service)->NewStub();
  const int64_t depth = std::min<int64_t>(1'000'000, c.links / 2);
  // The link `depth` places from the newest: link n - depth (ids kFirstId + g).
  store::ListCursor newest_deep;
  newest_deep.id = kFirstId + c.links - depth;
  newest_deep.create_time = absl::FromUnixMillis(1767225600000 + (c.links - depth));
  store::ListCursor oldest_deep;
  oldest_deep.id = kFirstId + depth;
  oldest_deep.create_time = absl::FromUnixMillis(1767225600000 + depth);
  // In the label's walk, `depth` / 10 labelled links from the newest.
  store::ListCursor label_deep = newest_deep;
  store::ListCursor clicks_deep;
  {
    pqxx::nontransaction tx(conn);
    pqxx::row r = tx.exec1(
        absl::StrCat("SELECT human, link_id FROM link_click_totals WHERE owner = '", kTenant,
                     "' ORDER BY human DESC, link_id DESC OFFSET ", depth / 10, " LIMIT 1"));
    clicks_deep.clicks = r[0].as<int64_t>();
    clicks_deep.id = r[1].as<int64_t>();
  }

  struct Case {
    std::string name, filter, order_by;
    store::LinkOrder order;
    std::optional<store::ListCursor> deep;
  };
  const std::string label = "labels.campaign = \"spring\"";
  const std::vector<Case> cases = {
      {"newest first, first page", "", "", store::LinkOrder::kNewestFirst, std::nullopt},
      {"newest first, 10^6 deep", "", "", store::LinkOrder::kNewestFirst, newest_deep},
      {"oldest first, 10^6 deep", "", "create_time", store::LinkOrder::kOldestFirst, oldest_deep},
      {"label (10^6 links), first page", label, "", store::LinkOrder::kNewestFirst, std::nullopt},
      {"label, 10^5 of its links deep", label, "", store::LinkOrder::kNewestFirst, label_deep},
      {"state = ACTIVE (99.9 %), 10^6 deep", "state = ACTIVE", "", store::LinkOrder::kNewestFirst,
       newest_deep},
      {"label AND state = ACTIVE, first page", label + " AND state = ACTIVE", "",
       store::LinkOrder::kNewestFirst, std::nullopt},
      {"long_url_host (1 in 3), 10^6 deep", "long_url_host = \"shop.example.com\"", "",
       store::LinkOrder::kNewestFirst, newest_deep},
      {"state = REVOKED (1 in 1000): short pages", "state = REVOKED", "",
       store::LinkOrder::kNewestFirst, std::nullopt},
      {"click_count desc, first page", "", "click_count desc", store::LinkOrder::kMostClicked,
       std::nullopt},
      {"click_count desc, 10^5 deep", "", "click_count desc", store::LinkOrder::kMostClicked,
       clicks_deep},
  };
  absl::StrAppendFormat(
      &report,
      "Pages of %d over gRPC from a client on the same machine (the time "
      "includes the local round trip), %d pages per case, each following the "
      "previous one's token; warm cache.\n\n"
      "| case | p50 ms | p99 ms | links per page |\n| --- | ---: | ---: | ---: |\n",
      c.page_size, c.pages);
  for (const Case& k : cases) {
    v1::ListLinksRequest request;
    request.set_tenant(kTenant);
    request.set_page_size(c.page_size);
    request.set_filter(k.filter);
    request.set_order_by(k.order_by);
    if (k.deep.has_value()) request.set_page_token(DeepToken(*k.deep, k.filter, k.order));
    // One untimed pass warms the cache for this walk.
    if (auto warm = TimePages(*stub, request, c.pages); !warm.ok()) return warm.status();
    absl::StatusOr<Timing> t = TimePages(*stub, request, c.pages);
    if (!t.ok()) return t.status();
    std::fprintf(stderr, "  %s: p50 %.2f ms\n", k.name.c_str(), Percentile(t->ms, 0.5));
    absl::StrAppend(&report, Row(k.name, *t));
  }

  // References: a GetLink (one small RPC and a key look-up), and the deep
  // page read with OFFSET instead of a keyset, in SQL alone.
  Timing get_link;
  {
    v1::ListLinksRequest first;
    first.set_tenant(kTenant);
    first.set_page_size(1);
    v1::ListLinksResponse page;
    grpc::ClientContext ctx;
    if (!stub->ListLinks(&ctx, first, &page).ok() || page.links_size() != 1) {
      return absl::InternalError("ListLinks of one link failed");
    }
    v1::GetLinkRequest get;
    get.set_code(page.links(0).code());
    for (int i = 0; i < 2 * c.pages; ++i) {
      v1::Link link;
      grpc::ClientContext call;
      const absl::Time t0 = absl::Now();
      if (!stub->GetLink(&call, get, &link).ok()) return absl::InternalError("GetLink failed");
      if (i >= c.pages) get_link.ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t0));
    }
    get_link.links = c.pages;
    get_link.calls = c.pages;
  }
  absl::StrAppend(&report, Row("reference: GetLink of one link", get_link));
  Timing offset;
  {
    pqxx::nontransaction tx(conn);
    const std::string sql =
        absl::StrCat("SELECT id, long_url FROM links WHERE owner = '", kTenant,
                     "' ORDER BY create_time DESC, id DESC OFFSET ", depth, " LIMIT ", c.page_size);
    for (int i = 0; i < 10 + c.pages / 10; ++i) {
      const absl::Time t0 = absl::Now();
      pqxx::result r = tx.exec(sql);
      if (i >= 10) offset.ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t0));
      offset.links += i >= 10 ? static_cast<int64_t>(r.size()) : 0;
      offset.calls += i >= 10 ? 1 : 0;
    }
  }
  absl::StrAppend(&report, Row("reference: the 10^6-deep page by OFFSET, SQL alone", offset));
  // The plans behind the figures, for whoever reads them (stderr).
  {
    pqxx::nontransaction tx(conn);
    for (const store::pg_queries::Query* q :
         {&store::pg_queries::kListNewest, &store::pg_queries::kListClicked}) {
      const bool clicked = q == &store::pg_queries::kListClicked;
      pqxx::result plan = tx.exec_params(
          absl::StrCat("EXPLAIN (ANALYZE, BUFFERS) ", q->sql), kTenant, "{}",
          std::optional<std::string>(), false, "2030-01-01", "-infinity", "infinity",
          std::optional<std::string>(), clicked ? "9223372036854775807" : "infinity",
          int64_t{9223372036854775807}, c.page_size + 1, std::max(1000, 10 * c.page_size));
      std::fprintf(stderr, "== plan of %s\n", q->name);
      for (const pqxx::row& row : plan) std::fprintf(stderr, "%s\n", row[0].c_str());
    }
  }
  std::printf("%s\n", report.c_str());
  return absl::OkStatus();
}

}  // namespace
}  // namespace shortener::bench::links

int main(int argc, char** argv) {
  return shortener::bench::BenchmarkMain<shortener::bench::links::Config>(
      argc, argv, "links_bench",
      "links_bench: ListLinks on a tenant with --links links (Release build)",
      &shortener::bench::links::ConfigFromFlags, &shortener::bench::links::Run);
}
