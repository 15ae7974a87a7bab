// shortenctl import and export in process, against a scripted in-memory
// ShortenService (BatchShorten and ListLinks only): batching, request_ids,
// codes and rejects, retries, interruption and resuming, and export's
// output re-imported.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "services/shortenctl/commands.h"
#include "services/shortenctl/interrupt.h"
#include "services/shortenctl/progress.h"
#include "shortener/v1/shortener.grpc.pb.h"

namespace shortener::ctl {
namespace {

// One failure a call answers instead of its result.
struct Failure {
  grpc::StatusCode code;
  std::string message;
  std::string retry_after_ms;  // trailing metadata when not empty
};

// Links by code. BatchShorten: an alias of 7 letters and digits has "the
// generated shape" and is refused, a taken alias is ALREADY_EXISTS, a
// request_id seen before answers its link (created = false); generated
// codes are g1, g2, ... Calls answer the scripted `failures` first; a call
// of more than `burst` items is refused as the rate limiter does, one of
// more than `slow_above` takes 600 ms and creates nothing.
// ListLinks: every link in creation order, page_size a page, the token the
// index to go on from; `list_failures` first.
class ScriptedService final : public v1::ShortenService::Service {
 public:
  grpc::Status BatchShorten(grpc::ServerContext* ctx, const v1::BatchShortenRequest* request,
                            v1::BatchShortenResponse* response) override {
    if (slow_above > 0 && request->requests_size() > slow_above) {
      // Past the caller's deadline, outside the lock so that its retries
      // are answered meanwhile; then it gives up, creating nothing.
      {
        std::lock_guard<std::mutex> lock(mu);
        calls.push_back(request->requests_size());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(600));
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "too slow");
    }
    std::lock_guard<std::mutex> lock(mu);
    calls.push_back(request->requests_size());
    if (static_cast<int>(calls.size()) == ctrl_c_on_call) raise(SIGINT);
    if (grpc::Status failed = Fail(ctx, failures); !failed.ok()) return failed;
    if (request->requests_size() > burst) {
      return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          "rate limit: 1000 requests at once exceed the burst of 300 of api key "
                          "\"t\"; send smaller batches");
    }
    for (const v1::ShortenRequest& item : request->requests()) {
      items.push_back(item);
      Create(item, response->add_results());
    }
    return grpc::Status::OK;
  }

  grpc::Status ListLinks(grpc::ServerContext* ctx, const v1::ListLinksRequest* request,
                         v1::ListLinksResponse* response) override {
    std::lock_guard<std::mutex> lock(mu);
    list_requests.push_back(*request);
    if (static_cast<int>(list_requests.size()) == ctrl_c_on_call) raise(SIGINT);
    if (grpc::Status failed = Fail(ctx, list_failures); !failed.ok()) return failed;
    size_t from = 0;
    if (!request->page_token().empty() && !absl::SimpleAtoi(request->page_token(), &from)) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "page_token: not a token");
    }
    const size_t size = request->page_size() > 0 ? request->page_size() : 100;
    for (size_t i = from; i < links.size() && i < from + size; ++i)
      *response->add_links() = links[i];
    if (from + size < links.size()) response->set_next_page_token(absl::StrCat(from + size));
    return grpc::Status::OK;
  }

  std::mutex mu;
  std::deque<Failure> failures;
  std::deque<Failure> list_failures;
  int burst = 1000;
  int slow_above = 0;      // calls of more items answer after 600 ms; 0: none
  int ctrl_c_on_call = 0;  // the process gets SIGINT during this call (from 1); 0: never
  std::vector<int> calls;  // items per BatchShorten call, failed ones too
  std::vector<v1::ShortenRequest> items;  // every item answered
  std::vector<v1::ListLinksRequest> list_requests;
  std::vector<v1::Link> links;  // created, in order

 private:
  static grpc::Status Fail(grpc::ServerContext* ctx, std::deque<Failure>& queue) {
    if (queue.empty()) return grpc::Status::OK;
    Failure f = queue.front();
    queue.pop_front();
    if (!f.retry_after_ms.empty()) ctx->AddTrailingMetadata("retry-after-ms", f.retry_after_ms);
    return grpc::Status(f.code, f.message);
  }

  void Create(const v1::ShortenRequest& item, v1::BatchShortenResult* result) {
    auto refuse = [result](absl::StatusCode code, std::string message) {
      result->mutable_error()->set_code(static_cast<int>(code));
      result->mutable_error()->set_message(std::move(message));
    };
    if (auto it = by_request_id_.find(item.request_id()); it != by_request_id_.end()) {
      Answer(links[it->second], false, result);
      return;
    }
    const std::string& alias = item.custom_alias();
    if (alias.size() == 7 && absl::c_all_of(alias, [](char c) { return absl::ascii_isalnum(c); })) {
      refuse(absl::StatusCode::kInvalidArgument,
             "custom_alias: \"" + alias + "\" has the shape of a generated code");
      return;
    }
    for (const v1::Link& l : links) {
      if (!alias.empty() && l.code() == alias) {
        refuse(absl::StatusCode::kAlreadyExists, "custom_alias \"" + alias + "\" is already taken");
        return;
      }
    }
    if (!absl::StartsWith(item.long_url(), "https://")) {
      refuse(absl::StatusCode::kInvalidArgument, "long_url: scheme must be https");
      return;
    }
    v1::Link& link = links.emplace_back();
    link.set_code(alias.empty() ? absl::StrCat("g", links.size()) : alias);
    link.set_short_url("https://sho.rt/" + link.code());
    link.set_long_url(item.long_url());
    link.set_state(v1::LINK_STATE_ACTIVE);
    link.set_redirect_type(item.redirect_type());
    *link.mutable_labels() = item.labels();
    if (item.has_expire_time()) *link.mutable_expire_time() = item.expire_time();
    link.set_max_clicks(item.max_clicks());
    link.mutable_create_time()->set_seconds(1767225600);
    if (!item.request_id().empty()) by_request_id_[item.request_id()] = links.size() - 1;
    Answer(link, true, result);
  }

  static void Answer(const v1::Link& link, bool created, v1::BatchShortenResult* result) {
    v1::ShortenResponse* r = result->mutable_response();
    r->set_code(link.code());
    r->set_short_url(link.short_url());
    r->set_created(created);
    *r->mutable_link() = link;
  }

  std::map<std::string, size_t> by_request_id_;
};

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, "\r\n", absl::SkipEmpty());
}

class TransferFixture {
 public:
  TransferFixture() {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    server_ = builder.BuildAndStart();
    REQUIRE(server_ != nullptr);
    options.service = absl::StrCat("127.0.0.1:", port);
    options.transfer.retry_backoff = absl::Milliseconds(5);
    char dir[] = "/tmp/ctl_transfer_test.XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    dir_ = dir;
  }
  ~TransferFixture() {
    server_->Shutdown(absl::ToChronoTime(absl::Now()));
    std::filesystem::remove_all(dir_);
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  std::string Write(const std::string& name, const std::string& content) {
    std::ofstream(Path(name), std::ios::binary) << content;
    return Path(name);
  }

  int Run(const std::vector<std::string>& args) {
    std::istringstream in;
    std::ostringstream out;
    std::ostringstream err;
    const int code = ctl::Run(options, args, {in, out, err});
    out_text = out.str();
    err_text = err.str();
    return code;
  }

  ScriptedService service;
  Options options;
  std::string out_text;
  std::string err_text;

 private:
  std::unique_ptr<grpc::Server> server_;
  std::string dir_;
};

// A file of `rows` links with a header: long_url, then code "c<i>".
std::string LinksCsv(int rows) {
  std::string text = "long_url,code\r\n";
  for (int i = 1; i <= rows; ++i) absl::StrAppend(&text, "https://e.com/", i, ",c-", i, "\r\n");
  return text;
}

TEST_CASE("import sends 1000 rows per call, each with a request_id of what it asks for",
          "[services/shortenctl][import]") {
  TransferFixture f;
  const std::string file = f.Write("links.csv", LinksCsv(2500));
  f.options.qr.output = f.Path("new.csv");
  REQUIRE(f.Run({"import", file}) == kExitOk);
  INFO(f.err_text);
  CHECK(f.service.calls == std::vector<int>{1000, 1000, 500});
  REQUIRE(f.service.items.size() == 2500);
  std::set<std::string> ids;
  for (const v1::ShortenRequest& item : f.service.items) {
    CHECK(absl::StartsWith(item.request_id(), "import-"));
    CHECK(item.request_id().size() == 7 + 32);
    ids.insert(item.request_id());
  }
  CHECK(ids.size() == 2500);
  CHECK(f.service.items[0].custom_alias() == "c-1");
  CHECK(f.err_text ==
        "shortenctl: import: 2500 rows: 2500 imported (2500 created, 0 there before), 0 "
        "rejected\n");
  const std::vector<std::string> out = Lines(Read(f.Path("new.csv")));
  REQUIRE(out.size() == 2501);
  CHECK(out[0] == "line,old_code,code,short_url,long_url,created");
  CHECK(out[1] == "2,c-1,c-1,https://sho.rt/c-1,https://e.com/1,yes");
  CHECK_FALSE(std::filesystem::exists(file + ".import-state"));

  // The same file again creates nothing: every request_id is known.
  REQUIRE(f.Run({"import", file}) == kExitOk);
  CHECK(f.service.links.size() == 2500);
  CHECK(absl::StrContains(f.err_text, "2500 imported (0 created, 2500 there before)"));
  REQUIRE(f.service.items.size() == 5000);
  CHECK(f.service.items[2500].request_id() == f.service.items[0].request_id());
  CHECK(f.service.items[4999].request_id() == f.service.items[2499].request_id());
  // So does the same row in another file, wherever it stands; a corrected
  // row is a new request.
  const std::string other =
      f.Write("other.csv", "long_url,code\r\nhttps://e.com/7,c-7\r\nhttps://e.com/8b,c-8\r\n");
  CHECK(f.Run({"import", other}) == kExitServiceError);  // c-8 is taken (by links.csv's row)
  REQUIRE(f.service.items.size() == 5002);
  CHECK(f.service.items[5000].request_id() == f.service.items[6].request_id());
  CHECK(f.service.items[5001].request_id() != f.service.items[7].request_id());
  CHECK(
      absl::StrContains(f.err_text, "2 rows: 1 imported (0 created, 1 there before), 1 rejected"));
}

TEST_CASE("import rejects rows it or the service refuses, with line and reason",
          "[services/shortenctl][import]") {
  TransferFixture f;
  const std::string file = f.Write("in.csv",
                                   "long_url,code,labels,title\r\n"
                                   "https://e.com/1,ok-1,campaign=x,first\r\n"
                                   "https://e.com/2,Ab3dE5g,,generated shape\r\n"
                                   "https://e.com/3,has space,,bad syntax\r\n"
                                   "ftp://e.com/4,,,bad url\r\n"
                                   "https://e.com/5,ok-1,,taken\r\n"
                                   "https://e.com/6,,nolabel,bad label\r\n"
                                   "https://e.com/7\r\n");
  f.options.transfer.columns = "title:-";
  f.options.transfer.rejects = f.Path("rejects.csv");
  CHECK(f.Run({"import", file}) == kExitServiceError);
  INFO(f.err_text);
  CHECK(f.service.links.size() == 1);
  const std::vector<std::string> rejects = Lines(Read(f.Path("rejects.csv")));
  REQUIRE(rejects.size() == 7);
  CHECK(rejects[0] == "long_url,code,labels,title,import_line,import_error");
  CHECK(rejects[1] ==
        "https://e.com/2,Ab3dE5g,,generated shape,3,\"INVALID_ARGUMENT: custom_alias: "
        "\"\"Ab3dE5g\"\" has the shape of a generated code\"");
  CHECK(absl::StartsWith(rejects[2], "https://e.com/3,has space,,bad syntax,4,\"code: "));
  CHECK(rejects[3] == "ftp://e.com/4,,,bad url,5,INVALID_ARGUMENT: long_url: scheme must be https");
  CHECK(absl::StrContains(rejects[4], ",6,\"ALREADY_EXISTS: custom_alias \"\"ok-1\"\""));
  CHECK(absl::StrContains(rejects[5], ",7,\"labels: expected KEY=VALUE, got \"\"nolabel\"\"\""));
  CHECK(rejects[6] == "https://e.com/7,,,,8,\"1 fields, but the header has 4\"");
  CHECK(absl::StrContains(f.err_text,
                          "7 rows: 1 imported (1 created, 0 there before), 6 "
                          "rejected (in " +
                              f.Path("rejects.csv") + ")"));
  CHECK(absl::StrContains(f.err_text, "; 3 rejected for their code: --codes=keep_or_new"));

  // The rejects file, corrected, imports as it is (import_line and
  // import_error are not refused as unknown columns).
  const std::string fixed = f.Write("fixed.csv",
                                    "long_url,code,labels,title,import_line,import_error\r\n"
                                    "https://e.com/2,Ab3-dE5g,,generated shape,3,whatever\r\n");
  f.options.transfer = TransferFlags();
  f.options.transfer.columns = "title:-";
  CHECK(f.Run({"import", fixed}) == kExitOk);
  CHECK(f.service.links.back().code() == "Ab3-dE5g");
}

TEST_CASE("import --codes=keep_or_new gives refused codes new ones; --codes=new ignores codes",
          "[services/shortenctl][import]") {
  TransferFixture f;
  const std::string file = f.Write("in.csv",
                                   "long_url,code\r\n"
                                   "https://e.com/1,Ab3dE5g\r\n"
                                   "https://e.com/2,has space\r\n"
                                   "https://e.com/3,fine\r\n");
  f.options.transfer.codes = "keep_or_new";
  f.options.qr.output = f.Path("new.csv");
  REQUIRE(f.Run({"import", file}) == kExitOk);
  INFO(f.err_text);
  const std::vector<std::string> out = Lines(Read(f.Path("new.csv")));
  REQUIRE(out.size() == 4);
  CHECK(absl::StartsWith(out[1], "2,Ab3dE5g,g"));
  CHECK(absl::StartsWith(out[2], "3,has space,g"));
  CHECK(absl::StartsWith(out[3], "4,fine,fine,"));
  CHECK(absl::StrContains(f.err_text, ", 2 with new codes"));
  CHECK(absl::EndsWith(f.service.items[1].request_id(), "-new"));  // not alias syntax
  CHECK_FALSE(absl::EndsWith(f.service.items[0].request_id(), "-new"));
  // The service's refusal, again without the code.
  CHECK(f.service.items.back().request_id() == f.service.items[0].request_id() + "-new");
  // Again: the -new request_ids answer the same links.
  REQUIRE(f.Run({"import", file}) == kExitOk);
  CHECK(f.service.links.size() == 3);

  f.options.transfer.codes = "new";
  f.options.qr.output.clear();
  const std::string other = f.Write("other.csv", "long_url,code\r\nhttps://e.com/9,keepme\r\n");
  REQUIRE(f.Run({"import", other}) == kExitOk);
  CHECK(f.service.items.back().custom_alias().empty());
}

TEST_CASE("import retries UNAVAILABLE and RESOURCE_EXHAUSTED, and halves batches over the burst",
          "[services/shortenctl][import]") {
  TransferFixture f;
  const std::string file = f.Write("links.csv", LinksCsv(1000));
  f.service.failures = {{grpc::StatusCode::UNAVAILABLE, "database is down", ""},
                        {grpc::StatusCode::RESOURCE_EXHAUSTED, "rate limit exceeded", "30"}};
  f.service.burst = 300;
  const absl::Time start = absl::Now();
  REQUIRE(f.Run({"import", file}) == kExitOk);
  INFO(f.err_text);
  CHECK(absl::Now() - start >= absl::Milliseconds(30));  // the retry-after-ms waited
  CHECK(f.service.links.size() == 1000);
  CHECK(f.service.calls == std::vector<int>{1000, 1000, 1000, 500, 250, 250, 250, 250});
  CHECK(absl::StrContains(f.err_text, "UNAVAILABLE: database is down; retrying in "));
  CHECK(absl::StrContains(f.err_text, "RESOURCE_EXHAUSTED: rate limit exceeded; retrying in 30ms"));
  CHECK(absl::StrContains(f.err_text, "; sending 500 items per call from now on"));
  CHECK(absl::StrContains(f.err_text, "; sending 250 items per call from now on"));
}

TEST_CASE("import sends smaller batches to a service too slow for the deadline",
          "[services/shortenctl][import]") {
  TransferFixture f;
  const std::string file = f.Write("links.csv", LinksCsv(2500));
  f.service.slow_above = 500;
  f.options.timeout = absl::Milliseconds(300);
  REQUIRE(f.Run({"import", file}) == kExitOk);
  INFO(f.err_text);
  CHECK(f.service.calls == std::vector<int>{1000, 500, 500, 500, 500, 500});
  CHECK(absl::StrContains(f.err_text, "DEADLINE_EXCEEDED: "));
  CHECK(absl::StrContains(f.err_text, "; sending 500 items per call for now"));
  CHECK(f.service.links.size() == 2500);
  CHECK(absl::StrContains(f.err_text, "2500 imported (2500 created, 0 there before)"));
}

TEST_CASE("the progress line is drawn in place and erased for messages",
          "[services/shortenctl][progress]") {
  std::ostringstream err;
  Progress progress(err, /*enabled=*/true, "import", "rows", 1000, 10, 100);
  progress.Update(20, 200);
  CHECK(absl::StartsWith(err.str(), "\rimport ["));
  CHECK(absl::EndsWith(err.str(), "  20 rows\x1b[K"));
  progress.Update(30, 300);  // within 200 ms of the last: not drawn
  CHECK(!absl::StrContains(err.str(), "30 rows"));
  progress.Clear();
  CHECK(absl::EndsWith(err.str(), "\r\x1b[K"));
  progress.Update(40, 400);  // after a Clear: at once
  CHECK(absl::StrContains(err.str(), "40 rows"));
  std::ostringstream quiet;
  Progress off(quiet, /*enabled=*/false, "import", "rows", 1000);
  off.Update(1, 1);
  off.Clear();
  CHECK(quiet.str().empty());
}

TEST_CASE("an interrupted import goes on where it stopped, creating nothing twice",
          "[services/shortenctl][import]") {
  TransferFixture f;
  std::string text = LinksCsv(2500);
  text += "ftp://bad/,\r\n";  // a reject after the interruption
  const std::string file = f.Write("links.csv", text);
  f.options.transfer.rejects = f.Path("rejects.csv");
  f.options.qr.output = f.Path("new.csv");
  // The second call fails in a way no retry mends: the run stops there.
  f.service.failures = {{grpc::StatusCode::OK, "", ""},
                        {grpc::StatusCode::PERMISSION_DENIED, "key revoked meanwhile", ""}};
  CHECK(f.Run({"import", file}) == kExitServiceError);
  INFO(f.err_text);
  CHECK(absl::StrContains(f.err_text, "import: 1000 rows: 1000 imported"));
  CHECK(absl::StrContains(f.err_text, "run the same command again to go on from line 1002"));
  CHECK(absl::StrContains(f.err_text, "PERMISSION_DENIED: key revoked meanwhile"));
  CHECK(f.service.links.size() == 1000);
  REQUIRE(std::filesystem::exists(file + ".import-state"));
  // What an interrupted run wrote after its last state is cut off.
  std::ofstream(f.Path("new.csv"), std::ios::app) << "half a ro";
  // It goes on only into the files it was writing.
  f.options.transfer.rejects = f.Path("other-rejects.csv");
  CHECK(f.Run({"import", file}) == kExitUsage);
  CHECK(absl::StrContains(f.err_text, "wrote --rejects to \"" + f.Path("rejects.csv") +
                                          "\": give it again to go on, or --restart"));
  f.options.transfer.rejects = f.Path("rejects.csv");

  REQUIRE(f.Run({"import", file}) == kExitServiceError);  // the ftp row
  CHECK(absl::StrContains(f.err_text, "import: going on from line 1002"));
  CHECK(absl::StrContains(f.err_text, "2501 rows: 2500 imported (2500 created, 0 there before)"));
  CHECK(f.service.links.size() == 2500);
  CHECK(f.service.items.size() == 2501);  // each row sent once
  const std::vector<std::string> out = Lines(Read(f.Path("new.csv")));
  CHECK(out.size() == 2501);
  CHECK(out[1000] == "1001,c-1000,c-1000,https://sho.rt/c-1000,https://e.com/1000,yes");
  CHECK(out[1001] == "1002,c-1001,c-1001,https://sho.rt/c-1001,https://e.com/1001,yes");
  CHECK(Lines(Read(f.Path("rejects.csv"))).size() == 2);
  CHECK_FALSE(std::filesystem::exists(file + ".import-state"));
}

TEST_CASE("import stops at a quote left open, after the rows before it, and goes on once fixed",
          "[services/shortenctl][import]") {
  TransferFixture f;
  const std::string good = LinksCsv(3000);  // past 64 KiB: fixing the end keeps the file's id
  const std::string file = f.Write("links.csv", good + "\"https://e.com/open,x\r\n");
  CHECK(f.Run({"import", file}) == kExitServiceError);
  INFO(f.err_text);
  CHECK(
      absl::StrContains(f.err_text,
                        "links.csv: line 3002, column 1: quoted field not closed before the end of "
                        "the input"));
  CHECK(absl::StrContains(f.err_text, "import: 3000 rows: 3000 imported"));
  CHECK(f.service.links.size() == 3000);
  CHECK(absl::StrContains(f.err_text, "run the same command again to go on from line 3002"));
  f.Write("links.csv", good + "\"https://e.com/closed\",x\r\n");
  REQUIRE(f.Run({"import", file}) == kExitOk);
  CHECK(absl::StrContains(f.err_text, "going on from line 3002"));
  CHECK(f.service.items.size() == 3001);
  CHECK(f.service.links.back().long_url() == "https://e.com/closed");
}

TEST_CASE("Ctrl-C stops import and export after the batch or page in hand, saying where to go on",
          "[services/shortenctl][import]") {
  TransferFixture f;
  const std::string file = f.Write("links.csv", LinksCsv(3000));
  f.service.ctrl_c_on_call = 2;
  CHECK(f.Run({"import", file}) == kExitInterrupted);
  CHECK(f.err_text ==
        "shortenctl: import: interrupted: 2000 rows: 2000 imported (2000 created, 0 there "
        "before), 0 rejected\n"
        "shortenctl: run the same command again to go on from line 2002\n");
  f.service.ctrl_c_on_call = 0;
  REQUIRE(f.Run({"import", file}) == kExitOk);
  CHECK(f.service.items.size() == 3000);

  f.options.list.page_size = "1000";
  f.service.ctrl_c_on_call = 2;
  CHECK(f.Run({"export"}) == kExitInterrupted);
  CHECK(Lines(f.out_text).size() == 2001);
  CHECK(f.err_text ==
        "shortenctl: export: interrupted after 2000 links; --page_token=2000 goes on from here "
        "(no header; >> FILE)\n");
}

TEST_CASE("import refuses what it cannot use before calling the service",
          "[services/shortenctl][import]") {
  TransferFixture f;
  const std::string unknown = f.Write("u.csv", "url,slug,clicks\r\nhttps://e.com/,a,1\r\n");
  CHECK(f.Run({"import", unknown}) == kExitUsage);
  CHECK(absl::StrContains(f.err_text, "u.csv: header: no long_url column (the header has \"url\""));
  f.options.transfer.columns = "url:long_url,slug:code";
  CHECK(f.Run({"import", unknown}) == kExitUsage);
  CHECK(absl::StrContains(f.err_text, "header: unknown columns \"clicks\""));
  f.options.transfer.ignore_columns = true;
  CHECK(f.Run({"import", unknown}) == kExitOk);
  CHECK(absl::StrContains(f.err_text, "ignoring 1 unknown column(s)"));
  CHECK(f.service.links.size() == 1);

  f.options.transfer = TransferFlags();
  CHECK(f.Run({"import", f.Write("e.csv", "")}) == kExitUsage);
  CHECK(absl::StrContains(f.err_text, "e.csv is empty: it needs a header row"));
  CHECK(f.Run({"import", "-"}) == kExitUsage);
  CHECK(f.Run({"import", f.Path("missing.csv")}) == kExitUsage);
  f.options.transfer.codes = "some";
  CHECK(f.Run({"import", unknown}) == kExitUsage);
  CHECK(absl::StrContains(f.err_text, "--codes: must be keep, keep_or_new or new"));
  f.options.transfer = TransferFlags();
  f.options.shorten.alias = "x";
  CHECK(f.Run({"import", unknown}) == kExitUsage);
  f.options.shorten = ShortenFlags();
  f.options.transfer.rejects = "r.csv";
  CHECK(f.Run({"export"}) == kExitUsage);
  CHECK(absl::StrContains(f.err_text, "apply to import only"));
  CHECK(f.Run({"list"}) == kExitUsage);
  CHECK(absl::StrContains(f.err_text, "apply to import and export only"));

  // A state file of another file is not taken for this one's.
  f.options.transfer = TransferFlags();
  const std::string file = f.Write("links.csv", LinksCsv(3));
  std::ofstream(file + ".import-state") << "shortenctl import state 1\ninput 0123\n";
  CHECK(f.Run({"import", file}) == kExitUsage);
  CHECK(absl::StrContains(f.err_text, "is the state of another file"));
  f.options.transfer.restart = true;
  CHECK(f.Run({"import", file}) == kExitOk);
  CHECK(f.service.calls.size() == 2);
}

TEST_CASE("import and export read and write semicolons with --delimiter, and say so",
          "[services/shortenctl][import]") {
  TransferFixture f;
  const std::string file =
      f.Write("semi.csv", "long_url;labels\r\nhttps://e.com/1;\"a=1,b=2\"\r\nftp://x/;\r\n");
  CHECK(f.Run({"import", file}) == kExitUsage);
  CHECK(absl::StrContains(f.err_text, "no long_url column (the header has \"long_url;labels\""));
  CHECK(absl::StrContains(f.err_text, "say so with --delimiter"));
  f.options.transfer.delimiter = ";";
  f.options.transfer.rejects = f.Path("rejects.csv");
  CHECK(f.Run({"import", file}) == kExitServiceError);
  CHECK(f.service.links.size() == 1);
  CHECK(f.service.links[0].labels().size() == 2);
  CHECK(Lines(Read(f.Path("rejects.csv")))[1] ==
        "ftp://x/;;3;INVALID_ARGUMENT: long_url: scheme must be https");
  f.options.transfer.rejects.clear();
  REQUIRE(f.Run({"export"}) == kExitOk);
  CHECK(Lines(f.out_text)[1] ==
        "g1;https://e.com/1;a=1,b=2;;302;;https://sho.rt/g1;ACTIVE;2026-01-01T00:00:00Z;0");
  f.options.transfer.delimiter = ":";
  CHECK(f.Run({"export"}) == kExitUsage);
}

TEST_CASE("import --dry_run checks every row and calls nothing", "[services/shortenctl][import]") {
  TransferFixture f;
  const std::string file =
      f.Write("in.csv", "long_url,expire_time\r\nhttps://e.com/1,\r\nhttps://e.com/2,soon\r\n");
  f.options.transfer.dry_run = true;
  CHECK(f.Run({"import", file}) == kExitServiceError);
  CHECK(f.service.calls.empty());
  CHECK(absl::StrContains(f.err_text, "line 3: expire_time: \"soon\" is neither"));
  CHECK(absl::StrContains(f.err_text, "2 rows: 1 would be sent, 1 rejected"));
  CHECK_FALSE(std::filesystem::exists(file + ".import-state"));
}

// `n` links in the service, every third labelled campaign=x.
void AddLinks(TransferFixture& f, int n) {
  std::string text = "long_url,code,labels\r\n";
  for (int i = 1; i <= n; ++i) {
    absl::StrAppend(&text, "https://e.com/", i, ",", i % 2 == 0 ? absl::StrCat("-a", i) : "", ",",
                    i % 3 == 0 ? "campaign=x" : "", "\r\n");
  }
  REQUIRE(f.Run({"import", f.Write("seed.csv", text)}) == kExitOk);
}

TEST_CASE("export writes every page as CSV into the file, atomically, and goes on after a failure",
          "[services/shortenctl][export]") {
  TransferFixture f;
  AddLinks(f, 25);
  f.options.qr.output = f.Path("links.csv");
  f.options.list.page_size = "10";
  f.options.labels = "campaign=x";
  f.service.list_failures = {{grpc::StatusCode::OK, "", ""},
                             {grpc::StatusCode::INVALID_ARGUMENT, "the second page fails", ""}};
  CHECK(f.Run({"export"}) == kExitServiceError);
  INFO(f.err_text);
  CHECK(absl::StrContains(f.err_text, "export: 10 links in " + f.Path("links.csv.partial")));
  CHECK_FALSE(std::filesystem::exists(f.Path("links.csv")));
  REQUIRE(std::filesystem::exists(f.Path("links.csv.export-state")));
  CHECK(f.service.list_requests[0].filter() == "labels.campaign = \"x\"");

  // Another listing is not taken for this one.
  f.options.labels = "campaign=y";
  CHECK(f.Run({"export"}) == kExitUsage);
  CHECK(absl::StrContains(f.err_text, "is the state of another export"));
  f.options.labels = "campaign=x";
  f.service.list_failures = {{grpc::StatusCode::UNAVAILABLE, "a blip", ""}};
  REQUIRE(f.Run({"export"}) == kExitOk);
  CHECK(absl::StrContains(f.err_text, "export: going on after 10 links"));
  CHECK(absl::StrContains(f.err_text, "UNAVAILABLE: a blip; retrying in"));
  CHECK(absl::StrContains(f.err_text, "export: 25 links written to " + f.Path("links.csv")));
  CHECK(f.service.list_requests.back().page_token() == "20");
  const std::vector<std::string> rows = Lines(Read(f.Path("links.csv")));
  REQUIRE(rows.size() == 26);
  CHECK(rows[0] ==
        "code,long_url,labels,expire_time,redirect_type,max_clicks,short_url,state,create_time,"
        "click_count");
  CHECK(rows[2] == "'-a2,https://e.com/2,,,302,,https://sho.rt/-a2,ACTIVE,2026-01-01T00:00:00Z,0");
  CHECK_FALSE(std::filesystem::exists(f.Path("links.csv.partial")));
  CHECK_FALSE(std::filesystem::exists(f.Path("links.csv.export-state")));
}

TEST_CASE("export killed between its last page and the rename finishes without listing again",
          "[services/shortenctl][export]") {
  TransferFixture f;
  AddLinks(f, 5);
  f.options.qr.output = f.Path("links.csv");
  f.options.list.page_size = "3";
  f.service.list_failures = {{grpc::StatusCode::OK, "", ""},
                             {grpc::StatusCode::PERMISSION_DENIED, "stop here", ""}};
  CHECK(f.Run({"export"}) == kExitServiceError);
  // As the state after the last page reads.
  const std::string state_path = f.Path("links.csv.export-state");
  std::string state = Read(state_path);
  REQUIRE(absl::StrContains(state, "complete 0\n"));
  state = absl::StrReplaceAll(state, {{"complete 0\n", "complete 1\n"}});
  std::ofstream(state_path, std::ios::binary | std::ios::trunc) << state;
  const size_t listed = f.service.list_requests.size();
  REQUIRE(f.Run({"export"}) == kExitOk);
  CHECK(f.service.list_requests.size() == listed);
  CHECK(Lines(Read(f.Path("links.csv"))).size() == 4);  // the header and the 3 links written
  CHECK_FALSE(std::filesystem::exists(state_path));
}

TEST_CASE("export to stdout, and on from a --page_token without a header",
          "[services/shortenctl][export]") {
  TransferFixture f;
  AddLinks(f, 5);
  f.options.list.page_size = "2";
  f.service.list_failures = {{grpc::StatusCode::OK, "", ""},
                             {grpc::StatusCode::PERMISSION_DENIED, "no", ""}};
  CHECK(f.Run({"export"}) == kExitServiceError);
  CHECK(Lines(f.out_text).size() == 3);
  CHECK(absl::StrContains(f.err_text, "to go on from here (no header): --page_token=2 >> FILE"));
  f.options.list.page_token = "2";
  REQUIRE(f.Run({"export"}) == kExitOk);
  const std::vector<std::string> rest = Lines(f.out_text);
  REQUIRE(rest.size() == 3);
  CHECK(absl::StartsWith(rest[0], "g3,https://e.com/3,"));
  CHECK(f.err_text == "shortenctl: export: 3 links written to stdout\n");
}

TEST_CASE("an export imports into another service unchanged", "[services/shortenctl][export]") {
  TransferFixture from;
  AddLinks(from, 12);
  from.options.qr.output = from.Path("all.csv");
  REQUIRE(from.Run({"export"}) == kExitOk);
  TransferFixture to;
  to.options.transfer.codes = "keep_or_new";  // g1, g2, ... are theirs
  REQUIRE(to.Run({"import", from.Path("all.csv")}) == kExitOk);
  INFO(to.err_text);
  REQUIRE(to.service.links.size() == 12);
  for (size_t i = 0; i < 12; ++i) {
    const v1::Link& a = from.service.links[i];
    const v1::Link& b = to.service.links[i];
    CHECK(a.long_url() == b.long_url());
    CHECK(a.labels().size() == b.labels().size());
    if (absl::StartsWith(a.code(), "-")) CHECK(a.code() == b.code());
  }
}

TEST_CASE("the progress line shows the bar, rate and ETA it can know",
          "[services/shortenctl][progress]") {
  ProgressState state;
  state.verb = "import";
  state.noun = "rows";
  state.items = 412000;
  state.bytes = 35;
  state.total_bytes = 100;
  state.run_items = 82000;
  state.run_bytes = 10;
  state.elapsed = absl::Seconds(10);
  CHECK(RenderProgress(state) ==
        "import [#######.............]  35%  412 000 rows  8 200 rows/s  ETA 1m05s");
  state.total_bytes = 0;
  state.verb = "export";
  state.noun = "links";
  CHECK(RenderProgress(state) == "export  412 000 links  8 200 links/s");
  state.elapsed = absl::ZeroDuration();
  CHECK(RenderProgress(state) == "export  412 000 links");
}

}  // namespace
}  // namespace shortener::ctl
