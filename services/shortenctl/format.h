// Output of shortenctl: compact human tables, or one JSON object per line
// (the response proto with its proto field names). Pure functions of the
// response protos, so they are tested without a server. Every function
// returns whole lines, each ending in '\n'. Thread-safe.
#ifndef SHORTENER_SERVICES_SHORTENCTL_FORMAT_H_
#define SHORTENER_SERVICES_SHORTENCTL_FORMAT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "google/protobuf/timestamp.pb.h"
#include "shortener/v1/shortener.pb.h"

namespace shortener::ctl {

// The message as one line of JSON: proto field names (long_url, not longUrl),
// fields with default values included (so `created` is false, not missing),
// timestamps in RFC 3339.
std::string ToJsonLine(const google::protobuf::Message& message);

// RFC 3339 in UTC to the second, "2027-01-01T00:00:00Z", for people (the
// fraction of a second is noise in a table; --json keeps it).
std::string FormatTimestamp(const google::protobuf::Timestamp& ts);

// "301", "302", "307", "308"; unspecified is the default 302.
std::string RedirectName(v1::RedirectType type);

// "ACTIVE", "REVOKED", "EXPIRED" ("UNSPECIFIED" for an unset state).
std::string StateName(v1::LinkState state);

// shorten: the short URL, then code, long_url, created yes/no, expires.
std::string FormatShortenResponse(const v1::ShortenResponse& response, bool json);

// resolve: the code asked for, then state, long_url (when active), redirect,
// expires.
std::string FormatResolveResponse(absl::string_view code, const v1::ResolveResponse& response,
                                  bool json);

// get, update and revoke: the short URL, then every field of the link,
// then (get --history) each change: "  changed TIME by ACTOR: FIELD OLD ->
// NEW", one line per field ("(none)" for an empty value).
std::string FormatLink(const v1::Link& link, bool json);

// What qr wrote: "wrote FILE: image/png, N bytes, encoding SHORT_URL", or
// with json the QrCode without its content plus "file" and "bytes".
std::string FormatQrWritten(const std::string& file, const v1::QrCode& qr, bool json);

// list: a page of links as rows CODE STATE CLICKS CREATED LONG_URL in
// fixed-width columns (so that the pages of --all line up), the header
// first when `header`; in JSON one Link object per line.
std::string FormatLinkPage(const v1::ListLinksResponse& page, bool header, bool json);

// stats: a title line with the code and range, a table of buckets (START
// HUMAN BOTS UNIQUE; hours as "2026-11-24 13:00", days as "2026-11-24"),
// totals, then each non-empty top list as "value clicks" pairs. In JSON the
// response proto.
std::string FormatClickStats(absl::string_view code, const v1::GetClickStatsRequest& request,
                             const v1::GetClickStatsResponse& response, bool json);

// batch: one line per URL, "SHORT_URL<TAB>LONG_URL" or
// "error: CODE_NAME: message<TAB>LONG_URL"; in JSON the result proto.
std::string FormatBatchResult(absl::string_view long_url, const v1::BatchShortenResult& result,
                              bool json);

// keys create, what goes to stdout: the key alone on one line, so that
// `shortenctl keys create ... > FILE` leaves a key file; in JSON the whole
// response (`key` and `api_key`).
std::string FormatCreatedApiKey(const v1::CreateApiKeyResponse& response, bool json);

// keys create, the note for people (stderr): id, name, tenant, scopes,
// domains, rate, and that the key is not shown again. Never the key.
std::string DescribeCreatedApiKey(const v1::ApiKey& key);

// keys list: a table with a header (ID NAME TENANT SCOPES DOMAINS RATE
// CREATED REVOKED), a row per key; in JSON one ApiKey object per line (and
// nothing for no keys).
std::string FormatApiKeyList(const v1::ListApiKeysResponse& response, bool json);

// keys revoke: `api key ID "NAME"`, then every field of the record.
std::string FormatApiKey(const v1::ApiKey& key, bool json);

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_FORMAT_H_
