#include "services/shortenctl/args.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lib/common/redirect_status.h"
#include "lib/common/status_macros.h"
#include "lib/grpcutil/api_key_channel.h"
#include "lib/grpcutil/status.h"
#include "proto/redirect_type.h"

namespace shortener::ctl {
namespace {

// Flags are defined only in ctl_flags.cc (and in tests); abseil's own
// (--flagfile, --help, ...), when linked in, mean nothing to this tool.
bool IsOurFlag(const absl::CommandLineFlag& flag) {
  return !absl::StrContains(flag.Filename(), "absl/") && !flag.IsRetired();
}

absl::CommandLineFlag* FindOurFlag(absl::string_view name) {
  absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  return flag != nullptr && IsOurFlag(*flag) ? flag : nullptr;
}

// Sets one flag from "--name[=value]" at argv[*i], consuming the next argument
// as the value of a non-boolean flag given without "=".
absl::Status SetFlag(int argc, char** argv, int* i, std::set<std::string>* given) {
  absl::string_view arg = argv[*i];
  absl::ConsumePrefix(&arg, "-");
  absl::ConsumePrefix(&arg, "-");
  const size_t eq = arg.find('=');
  absl::string_view name = arg.substr(0, eq);
  if (name == "o") name = "output";  // qr -o FILE
  bool has_value = eq != absl::string_view::npos;
  std::string value = has_value ? std::string(arg.substr(eq + 1)) : "";

  absl::CommandLineFlag* flag = FindOurFlag(name);
  if (flag == nullptr && !has_value && absl::StartsWith(name, "no")) {
    absl::CommandLineFlag* negated = FindOurFlag(name.substr(2));
    if (negated != nullptr && negated->IsOfType<bool>()) {  // --noforce_new
      flag = negated;
      value = "false";
      has_value = true;
    }
  }
  if (flag == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
  }
  if (!has_value) {
    if (flag->IsOfType<bool>()) {
      value = "true";
    } else if (*i + 1 < argc) {
      value = argv[++*i];
    } else {
      return absl::InvalidArgumentError(absl::StrCat("flag --", name, " needs a value"));
    }
  }
  if (name == "label" && !flag->CurrentValue().empty()) {  // repeatable
    value = absl::StrCat(flag->CurrentValue(), ",", value);
  }
  std::string error;
  if (!flag->ParseFrom(value, &error)) {
    return absl::InvalidArgumentError(absl::StrCat("bad value \"", value, "\" for --", name));
  }
  given->insert(std::string(flag->Name()));
  return absl::OkStatus();
}

// "7d" → 7 days; absl::ParseDuration has no day unit.
bool ParseDays(absl::string_view text, absl::Duration* d) {
  int64_t days = 0;
  if (!absl::ConsumeSuffix(&text, "d") || !absl::SimpleAtoi(text, &days)) return false;
  *d = absl::Hours(24) * days;
  return true;
}

// "a, b,,c" → {"a", "b", "c"}: a trailing comma or a blank is no item.
std::vector<std::string> SplitList(absl::string_view text) {
  std::vector<std::string> items;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (!item.empty()) items.emplace_back(item);
  }
  return items;
}

}  // namespace

// An RFC 3339 time, a date, or a positive duration counted from `now`
// forward (`direction` 1) or back (-1). INVALID_ARGUMENT naming `flag`.
absl::StatusOr<absl::Time> ParseTimeOrDuration(absl::string_view flag, absl::string_view text,
                                               absl::Time now, int direction) {
  const std::string trimmed(absl::StripAsciiWhitespace(text));
  absl::Duration d;
  if (absl::ParseDuration(trimmed, &d) || ParseDays(trimmed, &d)) {
    if (d <= absl::ZeroDuration() || d == absl::InfiniteDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": duration must be positive and finite, got \"", text, "\""));
    }
    return now + direction * d;
  }
  absl::Time t;
  std::string error;
  if (absl::ParseTime(absl::RFC3339_full, trimmed, &t, &error) ||
      absl::ParseTime("%Y-%m-%d", trimmed, &t, &error)) {
    return t;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      flag, ": \"", text,
      "\" is neither an RFC 3339 time (2027-01-01T00:00:00Z), a date (2027-01-01) nor a "
      "duration (24h, 90m, 7d)"));
}

absl::StatusOr<absl::Time> ParseExpire(absl::string_view text, absl::Time now) {
  return ParseTimeOrDuration("--expire", text, now, 1);
}

absl::StatusOr<v1::GetClickStatsRequest> BuildClickStatsRequest(absl::string_view code,
                                                                const StatsFlags& flags,
                                                                absl::Time now) {
  v1::GetClickStatsRequest request;
  request.set_code(std::string(code));
  // Unset bounds are the service's defaults; durations count back from now.
  if (!flags.from.empty()) {
    SHORTENER_ASSIGN_OR_RETURN(absl::Time from, ParseTimeOrDuration("--from", flags.from, now, -1));
    *request.mutable_start_time() = grpcutil::ToProtoTimestamp(from);
  }
  if (!flags.to.empty()) {
    SHORTENER_ASSIGN_OR_RETURN(absl::Time to, ParseTimeOrDuration("--to", flags.to, now, -1));
    *request.mutable_end_time() = grpcutil::ToProtoTimestamp(to);
  }
  const std::string granularity =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(flags.granularity));
  if (granularity == "hour") {
    request.set_granularity(v1::GRANULARITY_HOUR);
  } else if (granularity == "day") {
    request.set_granularity(v1::GRANULARITY_DAY);
  } else if (!granularity.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--granularity: must be hour or day, got \"", flags.granularity, "\""));
  }
  return request;
}

absl::StatusOr<v1::RedirectType> ParseRedirect(absl::string_view text) {
  for (int status : kRedirectStatuses) {
    if (text == absl::StrCat(status)) return RedirectTypeOf(status);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--redirect: must be 301, 302, 307 or 308, got \"", text, "\""));
}

absl::StatusOr<v1::ShortenRequest> BuildShortenRequest(absl::string_view long_url,
                                                       const ShortenFlags& flags, absl::Time now) {
  v1::ShortenRequest request;
  request.set_long_url(std::string(long_url));
  request.set_custom_alias(flags.alias);
  if (!flags.expire.empty()) {
    SHORTENER_ASSIGN_OR_RETURN(absl::Time expire, ParseExpire(flags.expire, now));
    *request.mutable_expire_time() = grpcutil::ToProtoTimestamp(expire);
  }
  if (!flags.redirect.empty()) {
    SHORTENER_ASSIGN_OR_RETURN(v1::RedirectType redirect, ParseRedirect(flags.redirect));
    request.set_redirect_type(redirect);
  }
  request.set_force_new(flags.force_new);
  request.set_request_id(flags.request_id);
  if (flags.max_clicks < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_clicks: must be positive (or 0 for unlimited), got ", flags.max_clicks));
  }
  request.set_max_clicks(flags.max_clicks);
  return request;
}

absl::StatusOr<std::map<std::string, std::string>> ParseLabelFlags(absl::string_view text) {
  return ParseLabelList("--label", text);
}

absl::StatusOr<std::map<std::string, std::string>> ParseLabelList(absl::string_view name,
                                                                  absl::string_view text) {
  std::map<std::string, std::string> labels;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    item = absl::StripAsciiWhitespace(item);
    const size_t eq = item.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": expected KEY=VALUE, got \"", absl::CHexEscape(item), "\""));
    }
    const std::string key(item.substr(0, eq));
    if (!labels.emplace(key, std::string(item.substr(eq + 1))).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": key \"", absl::CHexEscape(key), "\" given twice"));
    }
  }
  return labels;
}

std::string LabelFilter(const std::map<std::string, std::string>& labels) {
  std::string filter;
  for (const auto& [key, value] : labels) {
    // A quoted string escapes only \ and " (lib/filter).
    absl::StrAppend(&filter, filter.empty() ? "" : " AND ", "labels.", key, " = \"",
                    absl::StrReplaceAll(value, {{"\\", "\\\\"}, {"\"", "\\\""}}), "\"");
  }
  return filter;
}

absl::StatusOr<v1::ListLinksRequest> BuildListLinksRequest(
    const ListFlags& flags, const std::map<std::string, std::string>& labels,
    const std::string& tenant) {
  v1::ListLinksRequest request;
  const std::string label_filter = LabelFilter(labels);
  const absl::string_view filter = absl::StripAsciiWhitespace(flags.filter);
  if (!filter.empty() && !label_filter.empty()) {
    request.set_filter(absl::StrCat(filter, " AND ", label_filter));
  } else {
    request.set_filter(filter.empty() ? label_filter : std::string(filter));
  }
  request.set_order_by(std::string(absl::StripAsciiWhitespace(flags.order_by)));
  if (!flags.page_size.empty()) {
    int size = 0;
    if (!absl::SimpleAtoi(flags.page_size, &size) || size < 1 || size > 1000) {
      return absl::InvalidArgumentError(
          absl::StrCat("--page_size must be a whole number from 1 to 1000, got \"",
                       absl::CHexEscape(flags.page_size), "\""));
    }
    request.set_page_size(size);
  }
  request.set_page_token(std::string(absl::StripAsciiWhitespace(flags.page_token)));
  request.set_tenant(std::string(absl::StripAsciiWhitespace(tenant)));
  return request;
}

absl::StatusOr<v1::UpdateLinkRequest> BuildUpdateLinkRequest(
    absl::string_view code, const UpdateFlags& update, const ShortenFlags& shorten,
    bool max_clicks_given, const std::map<std::string, std::string>& labels, absl::Time now) {
  v1::UpdateLinkRequest request;
  v1::Link* link = request.mutable_link();
  link->set_code(std::string(code));
  auto mask = [&](const char* path) { request.mutable_update_mask()->add_paths(path); };
  if (!update.url.empty()) {
    link->set_long_url(update.url);
    mask("long_url");
  }
  const absl::string_view expire = absl::StripAsciiWhitespace(shorten.expire);
  if (!expire.empty()) {
    if (expire != "never") {
      SHORTENER_ASSIGN_OR_RETURN(absl::Time at, ParseExpire(expire, now));
      *link->mutable_expire_time() = grpcutil::ToProtoTimestamp(at);
    }
    mask("expire_time");
  }
  if (!shorten.redirect.empty()) {
    SHORTENER_ASSIGN_OR_RETURN(v1::RedirectType type, ParseRedirect(shorten.redirect));
    link->set_redirect_type(type);
    mask("redirect_type");
  }
  if (max_clicks_given) {
    link->set_max_clicks(shorten.max_clicks);
    mask("max_clicks");
  }
  if (update.clear_labels && !labels.empty()) {
    return absl::InvalidArgumentError("--label and --clear_labels do not go together");
  }
  if (update.clear_labels || !labels.empty()) {
    link->mutable_labels()->insert(labels.begin(), labels.end());
    mask("labels");
  }
  if (request.update_mask().paths_size() == 0) {
    return absl::InvalidArgumentError(
        "update needs a change: --url, --expire, --redirect, --max_clicks, --label or "
        "--clear_labels");
  }
  return request;
}

absl::StatusOr<v1::CreateApiKeyRequest> BuildCreateApiKeyRequest(const KeyFlags& flags) {
  v1::CreateApiKeyRequest request;
  const absl::string_view name = absl::StripAsciiWhitespace(flags.name);
  if (name.empty()) return absl::InvalidArgumentError("keys create needs --name");
  request.set_name(std::string(name));
  request.set_tenant(std::string(absl::StripAsciiWhitespace(flags.tenant)));
  request.set_infrastructure(flags.infrastructure);
  for (std::string& scope : SplitList(flags.scopes)) request.add_scopes(std::move(scope));
  if (request.scopes().empty()) {
    return absl::InvalidArgumentError(
        "keys create needs --scopes (comma-separated: shorten, resolve, revoke, stats, admin; "
        "with --infrastructure: resolve, record_clicks, watch_invalidations)");
  }
  for (std::string& domain : SplitList(flags.domains)) {
    request.add_allowed_domains(std::move(domain));
  }
  if (!flags.rate.empty()) {
    double rate = 0;
    if (!absl::SimpleAtod(flags.rate, &rate) || !std::isfinite(rate) || rate < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--rate: must be requests per second, a number >= 0 (0: no limit), got \"",
                       flags.rate, "\""));
    }
    request.set_rate_per_second(rate);
  }
  if (!flags.burst.empty()) {
    int32_t burst = 0;
    if (!absl::SimpleAtoi(flags.burst, &burst) || burst < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--burst: must be an integer >= 0, got \"", flags.burst, "\""));
    }
    request.set_burst(burst);
  }
  return request;
}

absl::StatusOr<int64_t> ParseApiKeyId(absl::string_view text) {
  int64_t id = 0;
  if (!absl::SimpleAtoi(text, &id) || id <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "keys revoke: ID must be a positive integer (see keys list), got \"", text, "\""));
  }
  return id;
}

absl::StatusOr<v1::GetQrCodeRequest> BuildQrCodeRequest(const std::string& code,
                                                        const QrFlags& flags) {
  v1::GetQrCodeRequest request;
  request.set_code(code);
  const std::string format = absl::AsciiStrToLower(flags.format);
  if (format == "svg" || (format.empty() && absl::EndsWithIgnoreCase(flags.output, ".svg"))) {
    request.set_format(v1::GetQrCodeRequest::FORMAT_SVG);
  } else if (format.empty() || format == "png") {
    request.set_format(v1::GetQrCodeRequest::FORMAT_PNG);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--format: must be png or svg, got \"", flags.format, "\""));
  }
  if (!flags.size.empty()) {
    int32_t size = 0;
    if (!absl::SimpleAtoi(flags.size, &size) || size <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--size: must be a number of pixels (64 to 4096), got \"", flags.size, "\""));
    }
    request.set_size_px(size);
  }
  if (!flags.margin.empty()) {
    int32_t margin = 0;
    if (!absl::SimpleAtoi(flags.margin, &margin) || margin < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--margin: must be a number of modules (0 to 16), got \"", flags.margin, "\""));
    }
    request.set_margin_modules(margin);
  }
  const std::string level = absl::AsciiStrToUpper(flags.level);
  if (level == "L") {
    request.set_error_correction(v1::GetQrCodeRequest::ERROR_CORRECTION_LOW);
  } else if (level == "M") {
    request.set_error_correction(v1::GetQrCodeRequest::ERROR_CORRECTION_MEDIUM);
  } else if (level == "Q") {
    request.set_error_correction(v1::GetQrCodeRequest::ERROR_CORRECTION_QUARTILE);
  } else if (level == "H") {
    request.set_error_correction(v1::GetQrCodeRequest::ERROR_CORRECTION_HIGH);
  } else if (!level.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--level: must be L, M, Q or H, got \"", flags.level, "\""));
  }
  return request;
}

absl::StatusOr<std::string> ResolveApiKey(const std::string& file, absl::string_view env_value) {
  if (!file.empty()) return grpcutil::ReadApiKeyFile("api_key_file", file);
  const absl::string_view key = absl::StripAsciiWhitespace(env_value);
  for (char c : key) {
    // The same rule as for a key file: a header value cannot carry more. The
    // message must not echo the (possibly mostly valid) key.
    if (c < '!' || c > '~') {
      return absl::InvalidArgumentError(
          "SHORTENER_API_KEY holds characters an API key cannot have (printable ASCII without "
          "spaces only)");
    }
  }
  return std::string(key);
}

absl::StatusOr<CommandLine> ParseArgv(int argc, char** argv) {
  CommandLine result;
  bool flags_ended = false;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (flags_ended || arg.size() < 2 || arg[0] != '-') {
      result.positional.emplace_back(arg);  // "-" alone is stdin for batch
    } else if (arg == "--") {
      flags_ended = true;
    } else if (arg == "-h" || arg == "--help" || arg == "-help" || arg == "--helpfull") {
      result.help = true;
    } else {
      SHORTENER_RETURN_IF_ERROR(SetFlag(argc, argv, &i, &result.flags_given));
    }
  }
  return result;
}

std::string HelpText() {
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (IsOurFlag(*flag)) flags.push_back(flag);
  }
  std::sort(flags.begin(), flags.end(),
            [](const auto* a, const auto* b) { return a->Name() < b->Name(); });
  std::string text = absl::StrCat(UsageText(), "\nflags:\n");
  for (const absl::CommandLineFlag* flag : flags) {
    // "--json", "--timeout=5s": the default where there is one worth showing.
    const std::string def = flag->DefaultValue();
    const bool show_default = !def.empty() && def != "false";
    absl::StrAppendFormat(&text, "  --%s%s\n      %s\n", flag->Name(),
                          show_default ? absl::StrCat("=", def) : "", flag->Help());
  }
  return text;
}

}  // namespace shortener::ctl
