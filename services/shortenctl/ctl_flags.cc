#include "services/shortenctl/ctl_flags.h"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/flags/flag.h"
#include "absl/time/time.h"

namespace {

// $SHORTENER_SERVICE, when set, replaces the built-in default address.
std::string DefaultService() {
  const char* env = std::getenv("SHORTENER_SERVICE");
  return env != nullptr && *env != '\0' ? env : shortener::ctl::Options().service;
}

}  // namespace

ABSL_FLAG(std::string, service, DefaultService(),
          "HOST:PORT of shorten-service ($SHORTENER_SERVICE overrides the default)");
ABSL_FLAG(std::string, service_tls_ca, "",
          "PEM CA certificate(s) the service's certificate must chain to: connect over TLS "
          "(default plaintext)");
ABSL_FLAG(std::string, service_tls_cert, "",
          "PEM client certificate, for a service that requires one (mutual TLS); needs "
          "--service_tls_key");
ABSL_FLAG(std::string, service_tls_key, "", "PEM private key of --service_tls_cert (unencrypted)");
ABSL_FLAG(std::string, service_tls_server_name, "",
          "name the service's certificate must carry, when it does not name the --service host");
ABSL_FLAG(bool, json, false, "print each response as one JSON object per line (proto field names)");
ABSL_FLAG(absl::Duration, timeout, shortener::ctl::Options().timeout,
          "deadline to connect, and of each call");
ABSL_FLAG(std::string, alias, "",
          "shorten: custom alias instead of a generated code ([A-Za-z0-9_-], 1-64 chars)");
ABSL_FLAG(std::string, expire, "",
          "shorten, batch: expiry, an RFC 3339 time (2027-01-01T00:00:00Z), a date, or a duration "
          "from now (24h, 7d); default never");
ABSL_FLAG(std::string, redirect, "",
          "shorten, batch: HTTP status of the redirect, 301|302|307|308 (default 302)");
ABSL_FLAG(bool, force_new, false,
          "shorten, batch: create a new link even if one exists for the URL");
ABSL_FLAG(std::string, request_id, "",
          "shorten: idempotency key; a retry with the same id returns the same link");
ABSL_FLAG(int64_t, max_clicks, 0,
          "shorten, batch: the link expires once this many human clicks are counted; 0 = "
          "unlimited");
ABSL_FLAG(std::string, label, "",
          "shorten, batch: a label KEY=VALUE of the new links; stats: the statistics of the "
          "links with this label instead of a CODE (repeatable; several also as k=v,k2=v2)");
ABSL_FLAG(std::string, api_key_file, "",
          "file holding the API key sent with every call; default $SHORTENER_API_KEY");
ABSL_FLAG(std::string, name, "", "keys create: what the key is for (required)");
ABSL_FLAG(std::string, tenant, "",
          "keys create: owner of the key's links; default the name. stats --label: count the "
          "label over this tenant's links instead of the key's own (admin keys only)");
ABSL_FLAG(bool, infrastructure, false,
          "keys create: an infrastructure key (a redirect edge's): no tenant; the only kind "
          "that may hold record_clicks and watch_invalidations");
ABSL_FLAG(std::string, scopes, "",
          "keys create: comma-separated scopes (shorten, resolve, revoke, stats, admin; with "
          "--infrastructure: resolve, record_clicks, watch_invalidations)");
ABSL_FLAG(std::string, domains, "",
          "keys create: comma-separated target domains (example.com, *.example.com); default all");
ABSL_FLAG(std::string, rate, "", "keys create: requests per second; default no limit");
ABSL_FLAG(std::string, burst, "", "keys create: token bucket size; default ceil(rate)");
ABSL_FLAG(std::string, from, "",
          "stats: start of the range, an RFC 3339 time, a date, or a duration back from now "
          "(30d); default 7 days (1 day by hour) before --to");
ABSL_FLAG(std::string, to, "", "stats: end of the range (excluded), as --from; default now");
ABSL_FLAG(std::string, granularity, "", "stats: hour|day (default day)");
ABSL_FLAG(bool, csv, false,
          "stats: print CSV (RFC 4180, CRLF) instead of the table: start_time,human_clicks,"
          "bot_clicks,unique_visitors, one row per bucket");
ABSL_FLAG(std::string, csv_top, "",
          "stats: write the top lists as CSV (list,rank,value,clicks) to this file, or - for "
          "stdout after the buckets and an empty line; implies --csv");

ABSL_FLAG(std::string, output, "",
          "qr: the file to write the image to, - for stdout (required; -o FILE also works); "
          "export: the CSV file (default stdout); import: a CSV of the links made");
ABSL_FLAG(std::string, format, "",
          "qr: png|svg (default: svg for an --output ending in .svg, else png)");
ABSL_FLAG(std::string, size, "", "qr: width and height in pixels, 64-4096 (default 256)");
ABSL_FLAG(std::string, margin, "",
          "qr: quiet zone around the code in modules, 0-16 (default 4, as the standard asks)");
ABSL_FLAG(std::string, level, "",
          "qr: error correction L|M|Q|H (7/15/25/30 % of the code may be damaged; default M)");

ABSL_FLAG(std::string, filter, "",
          "list: which links, e.g. 'state = ACTIVE AND create_time > \"2026-11-01T00:00:00Z\"' "
          "(labels.K = \"V\", state, create_time, long_url_host; joined with AND, and with "
          "--label)");
ABSL_FLAG(std::string, order_by, "",
          "list: \"create_time desc\" (default, newest first), create_time (oldest first) or "
          "\"click_count desc\"");
ABSL_FLAG(std::string, page_size, "", "list: links per call, 1-1000 (default 100)");
ABSL_FLAG(std::string, page_token, "",
          "list: go on from the page that printed this token (same --filter, --label and "
          "--order_by)");
ABSL_FLAG(bool, all, false, "list: every page, printed as each arrives");
ABSL_FLAG(std::string, url, "", "update: the link's new target");
ABSL_FLAG(bool, clear_labels, false, "update: remove every label of the link");
ABSL_FLAG(bool, history, false, "get: also every change made to the link (who, when, what)");

ABSL_FLAG(std::string, columns, "",
          "import: THEIRS:OURS,... names of the file's columns for ours (slug:code,"
          "destination:long_url); THEIRS:- ignores a column");
ABSL_FLAG(bool, ignore_columns, false,
          "import: ignore columns that are not ours instead of refusing");
ABSL_FLAG(std::string, codes, "",
          "import: keep (default: the code becomes the alias, or the row is rejected), "
          "keep_or_new (a new code when it cannot be kept) or new (ignore codes)");
ABSL_FLAG(std::string, rejects, "",
          "import: write the rows not imported to this CSV file, with import_line and "
          "import_error");
ABSL_FLAG(std::string, delimiter, "",
          "import, export: what separates the fields: , (default), ; (spreadsheets in many "
          "locales), tab or |");
ABSL_FLAG(std::string, state_file, "",
          "import, export: where to keep how far it got (default FILE.import-state, "
          "-o's FILE.export-state)");
ABSL_FLAG(bool, restart, false, "import, export: ignore the state file of an earlier run");
ABSL_FLAG(bool, dry_run, false, "import: check every row, create nothing");

namespace shortener::ctl {

Options OptionsFromFlags() {
  Options options;
  options.service = absl::GetFlag(FLAGS_service);
  options.tls.ca_file = absl::GetFlag(FLAGS_service_tls_ca);
  options.tls.cert_file = absl::GetFlag(FLAGS_service_tls_cert);
  options.tls.key_file = absl::GetFlag(FLAGS_service_tls_key);
  options.tls.server_name = absl::GetFlag(FLAGS_service_tls_server_name);
  options.json = absl::GetFlag(FLAGS_json);
  options.timeout = absl::GetFlag(FLAGS_timeout);
  options.shorten.alias = absl::GetFlag(FLAGS_alias);
  options.shorten.expire = absl::GetFlag(FLAGS_expire);
  options.shorten.redirect = absl::GetFlag(FLAGS_redirect);
  options.shorten.force_new = absl::GetFlag(FLAGS_force_new);
  options.shorten.request_id = absl::GetFlag(FLAGS_request_id);
  options.shorten.max_clicks = absl::GetFlag(FLAGS_max_clicks);
  options.labels = absl::GetFlag(FLAGS_label);
  const char* env_key = std::getenv("SHORTENER_API_KEY");  // --api_key_file wins (Run reads it)
  options.api_key = env_key != nullptr ? env_key : "";
  options.api_key_file = absl::GetFlag(FLAGS_api_key_file);
  options.keys.name = absl::GetFlag(FLAGS_name);
  options.keys.tenant = absl::GetFlag(FLAGS_tenant);
  options.keys.infrastructure = absl::GetFlag(FLAGS_infrastructure);
  options.keys.scopes = absl::GetFlag(FLAGS_scopes);
  options.keys.domains = absl::GetFlag(FLAGS_domains);
  options.keys.rate = absl::GetFlag(FLAGS_rate);
  options.keys.burst = absl::GetFlag(FLAGS_burst);
  options.stats.from = absl::GetFlag(FLAGS_from);
  options.stats.to = absl::GetFlag(FLAGS_to);
  options.stats.granularity = absl::GetFlag(FLAGS_granularity);
  options.stats.csv = absl::GetFlag(FLAGS_csv);
  options.stats.csv_top = absl::GetFlag(FLAGS_csv_top);
  options.qr.output = absl::GetFlag(FLAGS_output);
  options.qr.format = absl::GetFlag(FLAGS_format);
  options.qr.size = absl::GetFlag(FLAGS_size);
  options.qr.margin = absl::GetFlag(FLAGS_margin);
  options.qr.level = absl::GetFlag(FLAGS_level);
  options.list.filter = absl::GetFlag(FLAGS_filter);
  options.list.order_by = absl::GetFlag(FLAGS_order_by);
  options.list.page_size = absl::GetFlag(FLAGS_page_size);
  options.list.page_token = absl::GetFlag(FLAGS_page_token);
  options.list.all = absl::GetFlag(FLAGS_all);
  options.update.url = absl::GetFlag(FLAGS_url);
  options.update.clear_labels = absl::GetFlag(FLAGS_clear_labels);
  options.update.history = absl::GetFlag(FLAGS_history);
  options.transfer.columns = absl::GetFlag(FLAGS_columns);
  options.transfer.ignore_columns = absl::GetFlag(FLAGS_ignore_columns);
  options.transfer.codes = absl::GetFlag(FLAGS_codes);
  options.transfer.rejects = absl::GetFlag(FLAGS_rejects);
  options.transfer.delimiter = absl::GetFlag(FLAGS_delimiter);
  options.transfer.state_file = absl::GetFlag(FLAGS_state_file);
  options.transfer.restart = absl::GetFlag(FLAGS_restart);
  options.transfer.dry_run = absl::GetFlag(FLAGS_dry_run);
  options.transfer.progress = isatty(STDERR_FILENO) == 1;  // a progress line for people only
  return options;
}

}  // namespace shortener::ctl
