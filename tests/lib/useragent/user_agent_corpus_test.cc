// Real User-Agent strings, as the browsers, apps, crawlers and tools send
// them, each with its full expected classification. Versions are whatever
// was current when the row was written; the format is what matters.
#include <catch2/catch.hpp>

#include "lib/useragent/user_agent.h"

namespace shortener::useragent {
namespace {

constexpr DeviceType kDesktop = DeviceType::kDesktop;
constexpr DeviceType kMobile = DeviceType::kMobile;
constexpr DeviceType kTablet = DeviceType::kTablet;

struct Case {
  const char* user_agent;
  const char* browser;
  int browser_major;
  const char* os;
  const char* os_version;
  DeviceType device;
};

// Browsers and in-app browsers: never bots.
const Case kHumans[] = {
    // Chrome desktop. Since Chrome 110 the UA is "reduced": minor versions
    // are zeros, macOS is frozen at 10_15_7 and Android at "10; K".
    {"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/124.0.0.0 Safari/537.36",
     "Chrome", 124, "Windows", "10", kDesktop},
    {"Mozilla/5.0 (Windows NT 6.1; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/109.0.0.0 Safari/537.36",
     "Chrome", 109, "Windows", "7", kDesktop},
    {"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/124.0.0.0 Safari/537.36",
     "Chrome", 124, "macOS", "10.15.7", kDesktop},
    {"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/124.0.0.0 Safari/537.36",
     "Chrome", 124, "Linux", "", kDesktop},
    {"Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/124.0.0.0 Safari/537.36",
     "Chrome", 124, "ChromeOS", "", kDesktop},
    // Chrome Android: phone, tablet, and a pre-reduction UA with a model
    // whose brand contains "bot" (CUBOT).
    {"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/124.0.6367.82 Mobile Safari/537.36",
     "Chrome", 124, "Android", "10", kMobile},
    {"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/124.0.6367.82 Safari/537.36",
     "Chrome", 124, "Android", "10", kTablet},
    {"Mozilla/5.0 (Linux; Android 10; CUBOT X30) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/109.0.5414.117 Mobile Safari/537.36",
     "Chrome", 109, "Android", "10", kMobile},
    {"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
     "(KHTML, like Gecko) CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1",
     "Chrome", 124, "iOS", "17.4", kMobile},
    // Safari. A modern iPad asks for the desktop site and is macOS to us.
    {"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
     "Version/17.4.1 Safari/605.1.15",
     "Safari", 17, "macOS", "10.15.7", kDesktop},
    {"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 "
     "(KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1",
     "Safari", 17, "iOS", "17.4.1", kMobile},
    {"Mozilla/5.0 (iPad; CPU OS 12_5_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
     "Version/12.1.2 Mobile/15E148 Safari/604.1",
     "Safari", 12, "iPadOS", "12.5.7", kTablet},
    {"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
     "Version/17.4 Safari/605.1.15",
     "Safari", 17, "macOS", "10.15.7", kDesktop},
    {"Mozilla/5.0 (iPod touch; CPU iPhone OS 15_8 like Mac OS X) AppleWebKit/605.1.15 "
     "(KHTML, like Gecko) Version/15.6.6 Mobile/15E148 Safari/604.1",
     "Safari", 15, "iOS", "15.8", kMobile},
    // Firefox: macOS with dots, Android phone and tablet, iOS.
    {"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0", "Firefox",
     125, "Windows", "10", kDesktop},
    {"Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:125.0) Gecko/20100101 Firefox/125.0",
     "Firefox", 125, "macOS", "10.15", kDesktop},
    {"Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0", "Firefox",
     125, "Linux", "", kDesktop},
    {"Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0", "Firefox", 125,
     "Android", "14", kMobile},
    {"Mozilla/5.0 (Android 14; Tablet; rv:125.0) Gecko/125.0 Firefox/125.0", "Firefox", 125,
     "Android", "14", kTablet},
    {"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 "
     "(KHTML, like Gecko) FxiOS/125.0 Mobile/15E148 Safari/605.1.15",
     "Firefox", 125, "iOS", "17.4.1", kMobile},
    // Edge: Chromium desktop, Android, iOS, and legacy EdgeHTML.
    {"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0",
     "Edge", 124, "Windows", "10", kDesktop},
    {"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/124.0.0.0 Mobile Safari/537.36 EdgA/124.0.0.0",
     "Edge", 124, "Android", "10", kMobile},
    {"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
     "(KHTML, like Gecko) Version/17.0 EdgiOS/124.2478.50 Mobile/15E148 Safari/605.1.15",
     "Edge", 124, "iOS", "17.4", kMobile},
    {"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/70.0.3538.102 Safari/537.36 Edge/18.19045",
     "Edge", 18, "Windows", "10", kDesktop},
    // Other Chromium-based browsers.
    {"Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) "
     "SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36",
     "Samsung Internet", 24, "Android", "14", kMobile},
    {"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/123.0.0.0 Safari/537.36 OPR/109.0.0.0",
     "Opera", 109, "Windows", "10", kDesktop},
    {"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/123.0.0.0 Mobile Safari/537.36 OPR/81.1.4292.78704",
     "Opera", 81, "Android", "10", kMobile},
    {"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/122.0.0.0 YaBrowser/24.4.0.0 Safari/537.36",
     "Yandex Browser", 24, "Windows", "10", kDesktop},
    {"Mozilla/5.0 (Linux; U; Android 11; en-US; RMX2185 Build/QP1A.190711.020) "
     "AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/78.0.3904.108 "
     "UCBrowser/13.4.0.1306 Mobile Safari/537.36",
     "UC Browser", 13, "Android", "11", kMobile},
    {"Mozilla/5.0 (Linux; Android 9; KFTRWI) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Silk/124.2.3 like Chrome/124.0.6367.118 Safari/537.36",
     "Amazon Silk", 124, "Android", "9", kTablet},
    // In-app browsers: WeChat, Facebook, Instagram, LINE, the Google app.
    {"Mozilla/5.0 (iPhone; CPU iPhone OS 17_3_1 like Mac OS X) AppleWebKit/605.1.15 "
     "(KHTML, like Gecko) Mobile/15E148 MicroMessenger/8.0.47(0x18002f2c) NetType/WIFI "
     "Language/zh_CN",
     "WeChat", 8, "iOS", "17.3.1", kMobile},
    {"Mozilla/5.0 (Linux; Android 13; V2227A Build/TP1A.220624.014; wv) AppleWebKit/537.36 "
     "(KHTML, like Gecko) Version/4.0 Chrome/116.0.0.0 Mobile Safari/537.36 XWEB/1160117 "
     "MMWEBSDK/20240301 MMWEBID/6533 MicroMessenger/8.0.48.2580(0x28003036) WeChat/arm64 "
     "Weixin NetType/WIFI Language/zh_CN ABI/arm64",
     "WeChat", 8, "Android", "13", kMobile},
    {"Mozilla/5.0 (iPhone; CPU iPhone OS 17_3_1 like Mac OS X) AppleWebKit/605.1.15 "
     "(KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/452.0.0.40.110;FBBV/567095829;"
     "FBDV/iPhone15,2;FBMD/iPhone;FBSN/iOS;FBSV/17.3.1;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]",
     "Facebook", 452, "iOS", "17.3.1", kMobile},
    {"Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 "
     "(KHTML, like Gecko) Version/4.0 Chrome/123.0.6312.99 Mobile Safari/537.36 "
     "[FB_IAB/FB4A;FBAV/458.0.0.54.108;]",
     "Facebook", 458, "Android", "14", kMobile},
    {"Mozilla/5.0 (iPhone; CPU iPhone OS 17_3_1 like Mac OS X) AppleWebKit/605.1.15 "
     "(KHTML, like Gecko) Mobile/15E148 Instagram 320.0.2.32.90 (iPhone14,5; iOS 17_3_1; "
     "en_US; en; scale=3.00; 1170x2532; 567795829)",
     "Instagram", 320, "iOS", "17.3.1", kMobile},
    {"Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/UQ1A.240205.004; wv) AppleWebKit/537.36 "
     "(KHTML, like Gecko) Version/4.0 Chrome/122.0.6261.64 Mobile Safari/537.36 Instagram "
     "320.0.0.42.101 Android (34/14; 420dpi; 1080x2205; Google/google; Pixel 8; shiba; shiba; "
     "en_US; 576803120)",
     "Instagram", 320, "Android", "14", kMobile},
    {"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
     "(KHTML, like Gecko) Mobile/15E148 Safari Line/14.5.0",
     "LINE", 14, "iOS", "17.4", kMobile},
    {"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
     "(KHTML, like Gecko) GSA/311.0.622582404 Mobile/15E148 Safari/604.1",
     "Google App", 311, "iOS", "17.4", kMobile},
    // Android WebView (apps showing web pages), current and pre-Lollipop,
    // and the pre-Chrome Android browser.
    {"Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/UQ1A.240205.004; wv) AppleWebKit/537.36 "
     "(KHTML, like Gecko) Version/4.0 Chrome/122.0.6261.64 Mobile Safari/537.36",
     "Android WebView", 122, "Android", "14", kMobile},
    {"Mozilla/5.0 (Linux; Android 4.4.2; Nexus 5 Build/KOT49H) AppleWebKit/537.36 "
     "(KHTML, like Gecko) Version/4.0 Chrome/30.0.0.0 Mobile Safari/537.36",
     "Android WebView", 30, "Android", "4.4.2", kMobile},
    {"Mozilla/5.0 (Linux; U; Android 4.0.3; ko-kr; LG-L160L Build/IML74K) AppleWebkit/534.30 "
     "(KHTML, like Gecko) Version/4.0 Mobile Safari/534.30",
     "Android Browser", 4, "Android", "4.0.3", kMobile},
    // Internet Explorer 11 and Edge on Windows 10 Mobile.
    {"Mozilla/5.0 (Windows NT 6.1; WOW64; Trident/7.0; rv:11.0) like Gecko", "Internet Explorer",
     11, "Windows", "7", kDesktop},
    {"Mozilla/5.0 (Windows Phone 10.0; Android 6.0.1; Microsoft; Lumia 950) AppleWebKit/537.36 "
     "(KHTML, like Gecko) Chrome/52.0.2743.116 Mobile Safari/537.36 Edge/15.15063",
     "Edge", 15, "Windows Phone", "10.0", kMobile},
};

struct BotCase {
  const char* user_agent;
  const char* name;
  int major;
};

// Crawlers, link-preview fetchers, HTTP tools, headless browsers: always
// bot, device bot, OS "Other" whatever they claim.
const BotCase kBots[] = {
    {"", "Other", 0},
    {"curl/8.4.0", "curl", 8},
    {"Wget/1.21.3", "Wget", 1},
    {"python-requests/2.31.0", "python-requests", 2},
    {"Go-http-client/1.1", "Go-http-client", 1},
    {"okhttp/4.12.0", "okhttp", 4},
    {"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Googlebot", 2},
    {"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; "
     "+http://www.google.com/bot.html) Chrome/124.0.6367.118 Safari/537.36",
     "Googlebot", 2},
    {"Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 "
     "(KHTML, like Gecko) Chrome/124.0.6367.118 Mobile Safari/537.36 (compatible; "
     "Googlebot/2.1; +http://www.google.com/bot.html)",
     "Googlebot", 2},
    {"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; "
     "+http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36",
     "Bingbot", 2},
    {"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
     "facebookexternalhit", 1},
    // iMessage's link preview pretends to be Safari plus two crawlers.
    {"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) "
     "Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0",
     "facebookexternalhit", 1},
    {"Twitterbot/1.0", "Twitterbot", 1},
    {"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "Slackbot", 1},
    {"Slack-ImgProxy (+https://api.slack.com/robots)", "Slack-ImgProxy", 0},
    {"WhatsApp/2.23.20.0 A", "WhatsApp", 2},
    {"WhatsApp/2.2407.3 W", "WhatsApp", 2},
    {"TelegramBot (like TwitterBot)", "TelegramBot", 0},
    {"LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
     "LinkedInBot", 1},
    {"Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)", "Discordbot", 2},
    {"Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5 "
     "skype-url-preview@microsoft.com",
     "SkypeUriPreview", 0},
    {"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) "
     "Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
     "Applebot", 0},
    {"Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", "YandexBot", 3},
    {"Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)",
     "Baiduspider", 2},
    {"DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)", "DuckDuckBot", 1},
    {"Mozilla/5.0 (compatible; DuckDuckBot-Https/1.1; https://duckduckgo.com/duckduckbot)",
     "DuckDuckBot", 1},
    {"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; "
     "+https://openai.com/gptbot)",
     "GPTBot", 1},
    {"Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", "AhrefsBot", 7},
    {"Mozilla/5.0 (compatible; Pinterestbot/1.0; +http://www.pinterest.com/bot.html)",
     "Pinterestbot", 1},
    {"http.rb/5.1.1 (Mastodon/4.2.8; +https://mastodon.social/)", "Mastodon", 4},
    {"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "HeadlessChrome/124.0.6367.60 Safari/537.36",
     "HeadlessChrome", 124},
    // Unknown crawlers fall to the generic words, named "Other".
    {"Mozilla/5.0 (compatible; SomeNewCrawler/1.0; +https://example.com/crawler)", "Other", 0},
};

TEST_CASE("real browser user agents get their browser os and device and are not bots",
          "[lib/useragent]") {
  for (const Case& c : kHumans) {
    CAPTURE(c.user_agent);
    ClientInfo got = Classify(c.user_agent);
    CHECK(got.browser == c.browser);
    CHECK(got.browser_major == c.browser_major);
    CHECK(got.os == c.os);
    CHECK(got.os_version == c.os_version);
    CHECK(DeviceTypeName(got.device) == DeviceTypeName(c.device));
    CHECK_FALSE(got.bot);
  }
}

TEST_CASE("real crawler preview fetcher and tool user agents are bots with their names",
          "[lib/useragent]") {
  for (const BotCase& c : kBots) {
    CAPTURE(c.user_agent);
    ClientInfo expected;
    expected.browser = c.name;
    expected.browser_major = c.major;
    expected.device = DeviceType::kBot;
    expected.bot = true;
    ClientInfo got = Classify(c.user_agent);
    CHECK(got.browser == expected.browser);
    CHECK(got.browser_major == expected.browser_major);
    CHECK(got.os == "Other");
    CHECK(got.os_version.empty());
    CHECK(got == expected);
  }
}

TEST_CASE("the corpus holds at least 40 real user agents", "[lib/useragent]") {
  CHECK(std::size(kHumans) + std::size(kBots) >= 40);
}

}  // namespace
}  // namespace shortener::useragent
