// The shortenctl binary against a real shorten-service on a private
// PostgreSQL cluster, shared by the test files of ctl_service_test: one
// cluster and one service for the whole binary (Shared()), every test with
// URLs, aliases and keys of its own.
// Not thread-safe: tests run one at a time.
#ifndef SHORTENER_TESTS_SERVICES_SHORTENCTL_CTL_SERVICE_FIXTURE_H_
#define SHORTENER_TESTS_SERVICES_SHORTENCTL_CTL_SERVICE_FIXTURE_H_

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/pg_cluster.h"
#include "tests/support/service_process.h"
#include "tests/support/subprocess.h"

namespace shortener::testing {

struct Outcome {
  int exit_code = -1;
  std::string out;     // stdout
  std::string err;     // stderr
  std::string output;  // stdout, then stderr
};

// The content of the file at `path` ("" when it cannot be read).
std::string ReadFile(const std::string& path);

// One cluster and one service: every test uses URLs, aliases and keys of
// its own.
class CtlServiceFixture {
 public:
  CtlServiceFixture() {
    // A key in the tester's environment must not stand in for the ones the
    // tests choose.
    unsetenv("SHORTENER_API_KEY");
    char dir_template[] = "/tmp/ctl_service_test.XXXXXX";
    REQUIRE(mkdtemp(dir_template) != nullptr);
    dir_ = dir_template;
    auto cluster = PgCluster::Start();
    if (!cluster.ok()) FAIL(cluster.status().ToString());
    cluster_ = *std::move(cluster);
    ServiceProcessOptions options;
    options.conninfo = cluster_->ConnInfo();
    options.base_url = "https://sho.rt/";
    auto service = ServiceProcess::Start(options);
    if (!service.ok()) FAIL(service.status().ToString());
    service_ = *std::move(service);
  }
  ~CtlServiceFixture() {
    // ServiceProcess leaves its temp dir (secret, log) behind: remove it too.
    const std::filesystem::path service_dir =
        std::filesystem::path(service_->log_path()).parent_path();
    service_.reset();
    cluster_.reset();
    std::filesystem::remove_all(service_dir);
    std::filesystem::remove_all(dir_);
  }

  // Runs shortenctl --service=<the service> --api_key_file=<admin key>
  // args..., with `input` as a file named by "@input" in args.
  Outcome Run(std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), "--api_key_file=" + admin_key_file());
    return RunWithoutKey(std::move(args), input);
  }

  // Runs shortenctl --service=<the service> args...: no key unless args or
  // the environment give one. stdout also stays in stdout_path() until the
  // next run.
  Outcome RunWithoutKey(std::vector<std::string> args, const std::string& input = "") {
    const std::string err_path = dir_ + "/err";
    const std::string in_path = dir_ + "/in";
    std::filesystem::remove(stdout_path());
    std::filesystem::remove(err_path);
    std::ofstream(in_path) << input;
    for (std::string& a : args) {
      if (a == "@input") a = in_path;
    }
    // Subprocess sends stdout and stderr to one file; a shell keeps them
    // apart, as a user's `> FILE` would.
    std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>'" + err_path + "'",
                                     BinaryPath("shortenctl"), "--service=" + service_->target()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto child = Subprocess::Spawn(argv, stdout_path());
    REQUIRE(child.ok());
    std::optional<int> code = child->Wait(absl::Seconds(20));
    REQUIRE(code.has_value());
    Outcome outcome{*code, ReadFile(stdout_path()), ReadFile(err_path), ""};
    outcome.output = outcome.out + outcome.err;
    return outcome;
  }

  std::string stdout_path() const { return dir_ + "/out"; }
  ServiceProcess& service() { return *service_; }
  // The key ServiceProcess had the service make (--bootstrap_admin_key_file).
  const std::string& admin_key_file() const { return service_->admin_key_file(); }
  // A path in the fixture's temp dir.
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
  std::unique_ptr<PgCluster> cluster_;
  std::unique_ptr<ServiceProcess> service_;
};

// The fixture of the whole binary; destroyed at normal exit, which stops
// the service and the cluster.
CtlServiceFixture& Shared();

// The value of row `label` in shortenctl's human output ("  code     abc").
std::string Row(const std::string& output, const std::string& label);

// A key made with `keys create` and kept as `> FILE` keeps it.
struct CreatedKey {
  std::string file;  // holds exactly what keys create printed on stdout
  std::string key;
  std::string id;
};

// keys create --name=name --scopes=scopes with the admin key.
CreatedKey CreateKey(CtlServiceFixture& f, const std::string& name, const std::string& scopes);

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SERVICES_SHORTENCTL_CTL_SERVICE_FIXTURE_H_
