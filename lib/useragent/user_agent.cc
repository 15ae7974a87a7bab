#include "lib/useragent/user_agent.h"

#include <cstddef>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace shortener::useragent {
namespace {

// Real User-Agents are well under 512 bytes; anything past this is padding
// or an attack, and bounding the input bounds every search below.
constexpr size_t kMaxExamined = 1024;

// ---------------------------------------------------------------------------
// Rule tables. Each is ordered: the first matching row wins. All tokens are
// matched case-sensitively (browsers and named bots spell themselves one way)
// except the generic bot words at the end of kBotRules.
// ---------------------------------------------------------------------------

struct BotRule {
  absl::string_view token;
  absl::string_view name;  // "Other" for the generic words: see below
  bool ignore_case;
};

// Named bots come before the HTTP libraries, because several crawlers name
// the library they run on too ("LinkedInBot/1.0 (...; Apache-HttpClient ...)").
// TelegramBot comes before Twitterbot: it says "(like TwitterBot)".
// facebookexternalhit also covers iMessage's previews, which send it.
constexpr BotRule kBotRules[] = {
    {"HeadlessChrome", "HeadlessChrome", false},
    {"Googlebot", "Googlebot", false},
    {"AdsBot-Google", "Googlebot", false},
    {"Mediapartners-Google", "Googlebot", false},
    {"Google-InspectionTool", "Googlebot", false},
    {"GoogleOther", "Googlebot", false},
    {"bingbot", "Bingbot", false},
    {"BingPreview", "Bingbot", false},
    {"facebookexternalhit", "facebookexternalhit", false},
    {"Facebot", "facebookexternalhit", false},
    {"meta-externalagent", "facebookexternalhit", false},
    {"TelegramBot", "TelegramBot", false},
    {"Twitterbot", "Twitterbot", false},
    {"Slack-ImgProxy", "Slack-ImgProxy", false},
    {"Slackbot", "Slackbot", false},
    {"WhatsApp/", "WhatsApp", false},
    {"LinkedInBot", "LinkedInBot", false},
    {"Discordbot", "Discordbot", false},
    {"SkypeUriPreview", "SkypeUriPreview", false},
    {"Applebot", "Applebot", false},
    {"YandexBot", "YandexBot", false},
    {"Baiduspider", "Baiduspider", false},
    {"DuckDuckBot", "DuckDuckBot", false},
    {"redditbot", "redditbot", false},
    {"Pinterestbot", "Pinterestbot", false},
    {"vkShare", "vkShare", false},
    {"Mastodon/", "Mastodon", false},
    {"AhrefsBot", "AhrefsBot", false},
    {"SemrushBot", "SemrushBot", false},
    {"MJ12bot", "MJ12bot", false},
    {"DotBot", "DotBot", false},
    {"PetalBot", "PetalBot", false},
    {"Bytespider", "Bytespider", false},
    {"Amazonbot", "Amazonbot", false},
    {"GPTBot", "GPTBot", false},
    {"ChatGPT-User", "ChatGPT-User", false},
    {"ClaudeBot", "ClaudeBot", false},
    {"PerplexityBot", "PerplexityBot", false},
    {"Yahoo! Slurp", "Yahoo Slurp", false},
    // HTTP libraries and command-line tools: nobody clicks with these.
    {"curl/", "curl", false},
    {"Wget/", "Wget", false},
    {"python-requests/", "python-requests", false},
    {"Python-urllib/", "Python-urllib", false},
    {"python-httpx/", "python-httpx", false},
    {"aiohttp/", "aiohttp", false},
    {"Scrapy/", "Scrapy", false},
    {"Go-http-client/", "Go-http-client", false},
    {"okhttp/", "okhttp", false},
    {"Apache-HttpClient/", "Apache-HttpClient", false},
    {"Java/", "Java", false},
    {"libwww-perl/", "libwww-perl", false},
    {"axios/", "axios", false},
    {"node-fetch", "node-fetch", false},
    {"undici", "undici", false},
    {"PostmanRuntime/", "PostmanRuntime", false},
    {"HTTPie/", "HTTPie", false},
    // Generic words last, case-insensitive: unknown crawlers spell them every
    // way. Their name is "Other" rather than the agent's own word so the set
    // of browser names stays fixed: statistics group by it, and a client
    // must not be able to mint new groups.
    {"bot", "Other", true},
    {"crawler", "Other", true},
    {"spider", "Other", true},
};

// Words that contain a generic bot word but are not bots: CUBOT is a phone
// brand ("Android 10; CUBOT X30").
constexpr absl::string_view kNotBotWords[] = {"cubot"};

struct BrowserRule {
  absl::string_view all_of[3];  // every non-empty one must occur
  absl::string_view name;
  absl::string_view version_after;  // the major version's digits follow this
};

// In-app and derived browsers first: their UAs also carry the engine's
// tokens (WeChat, Facebook and Instagram on Android are a WebView with
// "; wv)"; Edge, Opera, Samsung, Yandex say "Chrome/"; nearly every
// browser says "Safari/"). Chrome before Safari, because Chrome says both.
constexpr BrowserRule kBrowserRules[] = {
    {{"MicroMessenger/"}, "WeChat", "MicroMessenger/"},
    {{"Instagram "}, "Instagram", "Instagram "},
    {{"FBAV/"}, "Facebook", "FBAV/"},
    {{"FBAN/"}, "Facebook", "FBAV/"},
    {{"FB_IAB/"}, "Facebook", "FBAV/"},
    {{" Line/"}, "LINE", " Line/"},
    {{"GSA/"}, "Google App", "GSA/"},
    {{"Edg/"}, "Edge", "Edg/"},
    {{"EdgA/"}, "Edge", "EdgA/"},
    {{"EdgiOS/"}, "Edge", "EdgiOS/"},
    {{"Edge/"}, "Edge", "Edge/"},  // EdgeHTML, before Chromium
    {{"OPR/"}, "Opera", "OPR/"},
    {{"OPiOS/"}, "Opera", "OPiOS/"},
    {{"OPT/"}, "Opera", "OPT/"},
    {{"Opera Mini/"}, "Opera Mini", "Opera Mini/"},
    {{"Opera/", "Version/"}, "Opera", "Version/"},  // Presto froze Opera/9.80
    {{"Opera/"}, "Opera", "Opera/"},
    {{"SamsungBrowser/"}, "Samsung Internet", "SamsungBrowser/"},
    {{"YaBrowser/"}, "Yandex Browser", "YaBrowser/"},
    {{"UCBrowser/"}, "UC Browser", "UCBrowser/"},
    {{"Vivaldi/"}, "Vivaldi", "Vivaldi/"},
    {{"MiuiBrowser/"}, "MIUI Browser", "MiuiBrowser/"},
    {{"HuaweiBrowser/"}, "Huawei Browser", "HuaweiBrowser/"},
    {{"Silk/"}, "Amazon Silk", "Silk/"},
    {{"Firefox/"}, "Firefox", "Firefox/"},
    {{"FxiOS/"}, "Firefox", "FxiOS/"},
    {{"CriOS/"}, "Chrome", "CriOS/"},
    // Apps embedding Chrome's WebView: "; wv)" since Android 5, before that
    // "Version/4.0 Chrome/..." with no "; wv)".
    {{"; wv)", "Chrome/"}, "Android WebView", "Chrome/"},
    {{"Android", "Version/", "Chrome/"}, "Android WebView", "Chrome/"},
    {{"Chromium/"}, "Chromium", "Chromium/"},
    {{"Chrome/"}, "Chrome", "Chrome/"},
    {{"MSIE "}, "Internet Explorer", "MSIE "},
    {{"Trident/", "rv:"}, "Internet Explorer", "rv:"},
    // The pre-Chrome Android browser: WebKit with "Version/" and no Chrome.
    {{"Android", "Version/", "Safari/"}, "Android Browser", "Version/"},
    {{"Safari/", "Version/"}, "Safari", "Version/"},
};

enum class VersionStyle { kNone, kDotted, kWindowsNt };

struct OsRule {
  absl::string_view token;
  absl::string_view name;
  absl::string_view version_after;
  VersionStyle style;
};

// iOS and iPadOS before macOS (they say "like Mac OS X"); Windows Phone
// before Android (Edge on Windows 10 Mobile says "Android 6.0.1"); Android
// and ChromeOS before Linux (both say "Linux").
constexpr OsRule kOsRules[] = {
    {"Windows Phone", "Windows Phone", "Windows Phone ", VersionStyle::kDotted},
    {"Windows NT", "Windows", "Windows NT ", VersionStyle::kWindowsNt},
    {"iPad", "iPadOS", "CPU OS ", VersionStyle::kDotted},
    {"iPhone", "iOS", "iPhone OS ", VersionStyle::kDotted},
    {"iPod", "iOS", "iPhone OS ", VersionStyle::kDotted},
    // The CrOS number is the platform build ("15633.69.0"), not a release
    // anyone recognises: left empty.
    {"CrOS", "ChromeOS", "", VersionStyle::kNone},
    {"Android", "Android", "Android ", VersionStyle::kDotted},
    {"Mac OS X", "macOS", "Mac OS X ", VersionStyle::kDotted},
    {"Macintosh", "macOS", "", VersionStyle::kNone},
    {"Linux", "Linux", "", VersionStyle::kNone},
};

// Windows reports its kernel version; people know the marketing name.
// Windows 11 still sends "NT 10.0", so it is reported as "10".
struct WindowsVersion {
  absl::string_view nt;
  absl::string_view name;
};
constexpr WindowsVersion kWindowsVersions[] = {
    {"10.0", "10"},   {"6.3", "8.1"}, {"6.2", "8"},  {"6.1", "7"},
    {"6.0", "Vista"}, {"5.2", "XP"},  {"5.1", "XP"}, {"5.0", "2000"},
};

struct DeviceRule {
  absl::string_view all_of[2];
  DeviceType type;
};

// iPad before "Mobi" (iPad Safari says "Mobile/15E148"); Windows NT is a
// desktop even when it says "Tablet PC"; Android phones say "Mobile",
// Android tablets do not.
constexpr DeviceRule kDeviceRules[] = {
    {{"iPad"}, DeviceType::kTablet},
    {{"Windows Phone"}, DeviceType::kMobile},
    {{"Windows NT"}, DeviceType::kDesktop},
    {{"Tablet"}, DeviceType::kTablet},
    {{"Kindle"}, DeviceType::kTablet},
    {{"Silk/"}, DeviceType::kTablet},
    {{"iPhone"}, DeviceType::kMobile},
    {{"iPod"}, DeviceType::kMobile},
    {{"Android", "Mobile"}, DeviceType::kMobile},
    {{"Android"}, DeviceType::kTablet},
    {{"Mobi"}, DeviceType::kMobile},
};

// ---------------------------------------------------------------------------
// Matching helpers. Plain substring searches over at most kMaxExamined
// bytes; nothing here allocates.
// ---------------------------------------------------------------------------

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

template <size_t N>
bool ContainsAll(absl::string_view ua, const absl::string_view (&tokens)[N]) {
  for (absl::string_view token : tokens) {
    if (!token.empty() && !absl::StrContains(ua, token)) return false;
  }
  return true;
}

// Whether the match of `word` at `pos` lies inside one of kNotBotWords.
bool InsideNotBotWord(absl::string_view ua, size_t pos, absl::string_view word) {
  for (absl::string_view not_bot : kNotBotWords) {
    for (size_t offset = 0; offset + word.size() <= not_bot.size(); ++offset) {
      if (!absl::EqualsIgnoreCase(not_bot.substr(offset, word.size()), word)) continue;
      if (offset > pos) continue;
      if (absl::EqualsIgnoreCase(ua.substr(pos - offset, not_bot.size()), not_bot)) return true;
    }
  }
  return false;
}

// Position just past the first case-insensitive match of `word` that is not
// part of a known non-bot word, or npos.
size_t FindBotWordIgnoreCase(absl::string_view ua, absl::string_view word) {
  for (size_t pos = 0; pos + word.size() <= ua.size(); ++pos) {
    if (absl::EqualsIgnoreCase(ua.substr(pos, word.size()), word) &&
        !InsideNotBotWord(ua, pos, word)) {
      return pos + word.size();
    }
  }
  return absl::string_view::npos;
}

// Leading decimal digits at `pos` as a number; 0 when there are none or more
// than nine (no real version is that long, and it keeps the int in range).
int ReadNumber(absl::string_view ua, size_t pos) {
  int value = 0;
  int digits = 0;
  while (pos < ua.size() && IsDigit(ua[pos])) {
    if (++digits > 9) return 0;
    value = value * 10 + (ua[pos] - '0');
    ++pos;
  }
  return value;
}

int MajorAfter(absl::string_view ua, absl::string_view marker) {
  size_t pos = ua.find(marker);
  if (pos == absl::string_view::npos) return 0;
  return ReadNumber(ua, pos + marker.size());
}

// A bot's version follows its token after the rest of its word and one '/'
// or ' ': "Googlebot/2.1", "DuckDuckBot-Https/1.1", "Slackbot-LinkExpanding 1.0".
int BotMajor(absl::string_view ua, size_t pos) {
  while (pos < ua.size() && (absl::ascii_isalpha(ua[pos]) || ua[pos] == '-' || ua[pos] == '_')) {
    ++pos;
  }
  if (pos < ua.size() && (ua[pos] == '/' || ua[pos] == ' ')) ++pos;
  return ReadNumber(ua, pos);
}

// Appends "17.4" for "17_4..." or "10.15.7" for "10.15.7...": at most three
// components of at most six digits, so a hostile agent cannot make a long
// or high-cardinality version.
void AppendDottedVersion(absl::string_view ua, size_t pos, std::string& out) {
  constexpr int kMaxComponents = 3;
  constexpr size_t kMaxDigits = 6;
  for (int component = 0; component < kMaxComponents; ++component) {
    size_t end = pos;
    while (end < ua.size() && IsDigit(ua[end]) && end - pos < kMaxDigits) ++end;
    if (end == pos) break;
    if (component > 0) out.push_back('.');
    out.append(ua.data() + pos, end - pos);
    if (end + 1 >= ua.size() || (ua[end] != '.' && ua[end] != '_') || !IsDigit(ua[end + 1])) {
      break;
    }
    pos = end + 1;
  }
}

// ---------------------------------------------------------------------------
// The three classifiers.
// ---------------------------------------------------------------------------

// Fills browser and browser_major when `ua` is a bot; returns whether it is.
bool ClassifyBot(absl::string_view ua, ClientInfo& info) {
  for (const BotRule& rule : kBotRules) {
    size_t end;
    if (rule.ignore_case) {
      end = FindBotWordIgnoreCase(ua, rule.token);
    } else {
      end = ua.find(rule.token);
      if (end != absl::string_view::npos) end += rule.token.size();
    }
    if (end == absl::string_view::npos) continue;
    info.browser = std::string(rule.name);
    // A generic bot's version would be of an unknown product: meaningless.
    info.browser_major = rule.ignore_case ? 0 : BotMajor(ua, end);
    return true;
  }
  return false;
}

void ClassifyBrowser(absl::string_view ua, ClientInfo& info) {
  for (const BrowserRule& rule : kBrowserRules) {
    if (!ContainsAll(ua, rule.all_of)) continue;
    info.browser = std::string(rule.name);
    info.browser_major = MajorAfter(ua, rule.version_after);
    return;
  }
}

// Replaces the NT kernel version just appended to `out` by its marketing
// name when known; an NT version we have no name for stays as sent.
void AppendWindowsVersion(absl::string_view ua, size_t pos, std::string& out) {
  AppendDottedVersion(ua, pos, out);
  for (const WindowsVersion& known : kWindowsVersions) {
    if (out == known.nt) {
      out.assign(known.name.data(), known.name.size());
      return;
    }
  }
}

void ClassifyOs(absl::string_view ua, ClientInfo& info) {
  for (const OsRule& rule : kOsRules) {
    if (!absl::StrContains(ua, rule.token)) continue;
    info.os = std::string(rule.name);
    if (rule.style == VersionStyle::kNone) return;
    size_t pos = ua.find(rule.version_after);
    if (pos == absl::string_view::npos) return;
    pos += rule.version_after.size();
    if (rule.style == VersionStyle::kWindowsNt) {
      AppendWindowsVersion(ua, pos, info.os_version);
    } else {
      AppendDottedVersion(ua, pos, info.os_version);
    }
    return;
  }
}

DeviceType ClassifyDevice(absl::string_view ua) {
  for (const DeviceRule& rule : kDeviceRules) {
    if (ContainsAll(ua, rule.all_of)) return rule.type;
  }
  return DeviceType::kDesktop;
}

}  // namespace

absl::string_view DeviceTypeName(DeviceType type) {
  switch (type) {
    case DeviceType::kDesktop:
      return "desktop";
    case DeviceType::kMobile:
      return "mobile";
    case DeviceType::kTablet:
      return "tablet";
    case DeviceType::kBot:
      return "bot";
  }
  return "desktop";  // unreachable for valid enum values; keeps -Wreturn-type quiet
}

ClientInfo Classify(absl::string_view user_agent) {
  absl::string_view ua = absl::StripAsciiWhitespace(user_agent.substr(0, kMaxExamined));
  ClientInfo info;
  // Every browser sends a User-Agent: an empty one is a script.
  if (ua.empty() || ClassifyBot(ua, info)) {
    // A bot's OS claim is a costume (Googlebot smartphone "is" Android 6),
    // so bots are left on "Other".
    info.bot = true;
    info.device = DeviceType::kBot;
    return info;
  }
  ClassifyBrowser(ua, info);
  ClassifyOs(ua, info);
  info.device = ClassifyDevice(ua);
  return info;
}

const ClientInfo& BatchClassifier::Classify(absl::string_view user_agent) {
  if (auto it = known_.find(user_agent); it != known_.end()) return it->second;
  if (known_.size() >= max_agents_) {
    unkept_ = useragent::Classify(user_agent);
    return unkept_;
  }
  return known_.emplace(user_agent, useragent::Classify(user_agent)).first->second;
}

}  // namespace shortener::useragent
