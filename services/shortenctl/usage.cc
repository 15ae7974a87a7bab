// The usage lines and text of shortenctl (declared in args.h): what each
// command takes, for usage errors and for `shortenctl` without a command.
// HelpText, which adds every flag, stays in args.cc beside the flag scan.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "services/shortenctl/args.h"

namespace shortener::ctl {

std::string UsageLine(absl::string_view command) {
  if (command == "shorten") {
    return "usage: shortenctl shorten URL [--alias=A] [--expire=2027-01-01T00:00:00Z|24h] "
           "[--redirect=301|302|307|308] [--force_new] [--request_id=ID] [--max_clicks=N] "
           "[--label=K=V ...]";
  }
  if (command == "batch") {
    return "usage: shortenctl batch FILE|- [--expire=TIME|DURATION] [--redirect=CODE] "
           "[--force_new] [--max_clicks=N] [--label=K=V ...]";
  }
  if (command == "stats") {
    return "usage: shortenctl stats CODE|--label=K=V [--tenant=T] [--from=TIME|DURATION] "
           "[--to=TIME|DURATION] "
           "[--granularity=hour|day] [--csv [--csv_top=FILE|-]]";
  }
  if (command == "update") {
    return "usage: shortenctl update CODE [--url=URL] [--expire=TIME|DURATION|never] "
           "[--redirect=301|302|307|308] [--max_clicks=N] [--label=K=V ... | --clear_labels]";
  }
  if (command == "get") return "usage: shortenctl get CODE [--history]";
  if (command == "list") {
    return "usage: shortenctl list [--label=K=V ...] [--filter=EXPR] "
           "[--order_by=\"create_time desc\"|create_time|\"click_count desc\"] [--page_size=N] "
           "[--page_token=T | --all] [--tenant=T]";
  }
  if (command == "import") {
    return "usage: shortenctl import FILE [--columns=THEIRS:OURS,...] [--ignore_columns] "
           "[--codes=keep|keep_or_new|new] [--rejects=FILE] [-o FILE] [--label=K=V ...] "
           "[--force_new] [--delimiter=,|;|tab|\"|\"] [--dry_run] [--state_file=PATH] "
           "[--restart]";
  }
  if (command == "export") {
    return "usage: shortenctl export [--label=K=V ...] [--filter=EXPR] [--order_by=ORDER] "
           "[--tenant=T] [--delimiter=,|;|tab|\"|\"] [-o FILE [--state_file=PATH] [--restart] | "
           "--page_token=T]";
  }
  if (command == "qr") {
    return "usage: shortenctl qr CODE -o FILE|- [--format=png|svg] [--size=PX] [--margin=MODULES] "
           "[--level=L|M|Q|H]";
  }
  if (command == "resolve" || command == "get") {
    return absl::StrCat("usage: shortenctl ", command, " CODE");
  }
  if (command == "revoke" || command == "delete") {
    return absl::StrCat("usage: shortenctl ", command, " CODE | ", command,
                        " --label=K=V ... [--filter=EXPR] [--page_size=N] [--page_token=T] "
                        "[--tenant=T]");
  }
  if (command == "keys create") {
    return "usage: shortenctl keys create --name=N --scopes=S1,S2 [--tenant=T | "
           "--infrastructure] [--domains=D1,D2] [--rate=R] [--burst=B]";
  }
  if (command == "keys list") return "usage: shortenctl keys list";
  if (command == "keys revoke") return "usage: shortenctl keys revoke ID";
  if (command == "keys") {
    return "usage: shortenctl keys create --name=N --scopes=S1,S2 [...] | keys list | "
           "keys revoke ID";
  }
  return "usage: shortenctl [--service=HOST:PORT] [--api_key_file=PATH] [--json] [--timeout=5s] "
         "shorten|batch|resolve|get|update|list|qr|revoke|delete|stats|keys|import|export ARGS "
         "(shortenctl --help for more)";
}

std::string UsageText() {
  return "shortenctl: command-line client of shorten-service\n"
         "\n"
         "usage: shortenctl [flags] COMMAND ARGS\n"
         "\n"
         "commands:\n"
         "  shorten URL    create a short link (or return yours for the same URL)\n"
         "                 [--alias=A] [--expire=2027-01-01T00:00:00Z|24h|7d]\n"
         "                 [--redirect=301|302|307|308] [--force_new] [--request_id=ID]\n"
         "                 [--max_clicks=N]  (expires after N human clicks)\n"
         "                 [--label=K=V ...] (repeatable: campaign=spring-sale)\n"
         "  batch FILE     shorten one URL per line of FILE (- for stdin), 1000 per call;\n"
         "                 --label and shorten's other flags but --alias and --request_id\n"
         "                 apply to every line\n"
         "                 prints one line per URL: short URL or error, then the URL\n"
         "  resolve CODE   what CODE redirects to, and its state\n"
         "  get CODE       the whole link record; --history: every change made to it\n"
         "  update CODE    change a link: --url=URL (a new target: edges follow within a\n"
         "                 second), --expire=TIME|DURATION|never, --redirect=CODE,\n"
         "                 --max_clicks=N (0: unlimited), --label=K=V ... (the new labels)\n"
         "                 or --clear_labels; each change is kept in the link's history\n"
         "  list           your links, newest first, with their human clicks: a page of\n"
         "                 100 (--page_size=N, up to 1000), then how to get the next\n"
         "                 (--page_token=T), or every page with --all; --label=K=V and\n"
         "                 --filter='state = ACTIVE AND create_time > \"2026-11-01T00:00:00Z\"\n"
         "                 AND long_url_host = \"example.com\"' choose links,\n"
         "                 --order_by='click_count desc' (or create_time) orders them;\n"
         "                 --tenant=T: tenant T's links (admin keys only)\n"
         "  import FILE    links from a CSV file with a header row: long_url, and code\n"
         "                 (kept as the alias), labels (k=v,k2=v2), expire_time (RFC 3339),\n"
         "                 redirect_type, max_clicks; --columns=slug:code,url:long_url\n"
         "                 names yours; 1000 rows per call, safe to run again; an\n"
         "                 interrupted run goes on where it stopped (FILE.import-state);\n"
         "                 --rejects=FILE: the rows not imported, with why; -o FILE: the\n"
         "                 new links; --codes=keep_or_new: a new code where the old one\n"
         "                 cannot be kept; --dry_run checks without creating;\n"
         "                 --delimiter=';' (or tab) for files not separated by commas\n"
         "  export         your links as CSV in import's columns (-o FILE, or stdout),\n"
         "                 chosen as list chooses them (--label, --filter, --order_by,\n"
         "                 --tenant); an interrupted -o FILE export goes on where it stopped\n"
         "  qr CODE -o FILE  the link's short URL as a QR code image: PNG, or SVG for\n"
         "                 a FILE ending in .svg (--format=png|svg); --size=PX (64-4096,\n"
         "                 default 256), --margin=MODULES (0-16, default 4),\n"
         "                 --level=L|M|Q|H (error correction, default M); -o - for stdout\n"
         "  revoke CODE    revoke a link; it then resolves as REVOKED\n"
         "  revoke --label=K=V  revoke every link of yours with that label (and/or\n"
         "                 --filter=EXPR, as list's), in calls of --page_size (default\n"
         "                 1000, up to 10000) until done; prints each code revoked\n"
         "  delete CODE    delete a link for good: it answers 404 everywhere within a\n"
         "                 second, and its clicks and visits are erased (its labels'\n"
         "                 statistics keep them); an alias stays taken for 90 days\n"
         "  delete --label=K=V  the same for every link with that label (and/or --filter)\n"
         "  stats CODE     clicks per day (or --granularity=hour), humans and bots apart,\n"
         "                 unique visitors, top browsers/OS/devices/countries/referrers;\n"
         "                 [--from=TIME|DURATION] [--to=...] (default the last 7 days;\n"
         "                 a duration counts back from now: --from=30d)\n"
         "  stats --label=K=V  the same for every link of yours with that label\n"
         "                 (--tenant=T: of tenant T's links; admin keys only)\n"
         "                 --csv: CSV, a row per bucket; --csv_top=FILE|-: the top lists\n"
         "                 as CSV (list,rank,value,clicks) in FILE, - after the buckets\n"
         "  keys create    create an API key (needs an admin key); prints the key, once\n"
         "                 --name=N --scopes=S1,S2 [--tenant=T] [--domains=D1,D2]\n"
         "                 [--rate=R] [--burst=B]  (scopes: shorten resolve revoke delete\n"
         "                 stats admin); --infrastructure: an edge's key, no tenant, scopes\n"
         "                 resolve record_clicks watch_invalidations\n"
         "  keys list      every API key, revoked ones included (never the keys themselves)\n"
         "  keys revoke ID revoke an API key; the service refuses it within about a second\n"
         "\n"
         "global flags: --service=HOST:PORT (default 127.0.0.1:50051, or $SHORTENER_SERVICE)\n"
         "              --api_key_file=PATH (the API key sent with every call; without it,\n"
         "              $SHORTENER_API_KEY)\n"
         "              --json (one JSON object per line)  --timeout=5s (per call)\n"
         "              --service_tls_ca=CA.pem (TLS), with --service_tls_cert=C.pem\n"
         "              --service_tls_key=K.pem (mutual TLS)\n"
         "exit status: 0 ok, 1 error from the service or the connection (or writing\n"
         "             --csv_top or qr's -o), or rows import rejected, 2 usage error,\n"
         "             130 import or export stopped by Ctrl-C (run it again to go on)\n";
}

}  // namespace shortener::ctl
