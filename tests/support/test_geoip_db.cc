#include "tests/support/test_geoip_db.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/common/status_macros.h"
#include "tests/support/orphan_reaper.h"
#include "tests/support/subprocess.h"

namespace shortener::testing {
namespace {

constexpr char kPerl[] = "/usr/bin/perl";

// argv: OUTPUT_PATH ISO_OF_203.0.113.0/24. Reserved networks are kept (the
// writer drops them by default, and documentation ranges are all we use).
constexpr char kWriter[] = R"(use strict;
use warnings;
use MaxMind::DB::Writer::Tree;

my ($out, $iso) = @ARGV;
my %types = (
  country => 'map', registered_country => 'map', iso_code => 'utf8_string',
  names => 'map', en => 'utf8_string', geoname_id => 'uint32',
);
my $tree = MaxMind::DB::Writer::Tree->new(
  ip_version => 6,
  record_size => 24,
  database_type => 'Shortener-Test-Country',
  languages => ['en'],
  description => { en => 'shortener test country database' },
  map_key_type_callback => sub { $types{ $_[0] } },
  remove_reserved_networks => 0,
  alias_ipv6_to_ipv4 => 1,
);
$tree->insert_network('203.0.113.0/24',
  { country => { iso_code => $iso, names => { en => 'Test' } },
    registered_country => { iso_code => $iso } });
$tree->insert_network('2001:db8::/32', { country => { iso_code => 'JP' } });
$tree->insert_network('198.51.100.0/24', { registered_country => { iso_code => 'DE' } });
$tree->insert_network('192.0.2.0/24', { country => { geoname_id => 42 } });
open my $fh, '>:raw', $out or die "cannot write $out: $!";
$tree->write_tree($fh);
close $fh or die "cannot close $out: $!";
)";

}  // namespace

absl::StatusOr<std::unique_ptr<TestGeoIpDb>> TestGeoIpDb::Create() {
  SHORTENER_ASSIGN_OR_RETURN(std::string dir, MakeOwnedTempDir("shortener-geoip-"));
  std::unique_ptr<TestGeoIpDb> db(new TestGeoIpDb(std::move(dir)));
  std::ofstream(db->dir_ + "/write_db.pl") << kWriter;
  SHORTENER_RETURN_IF_ERROR(db->WriteVariant(db->path(), "NL"));
  return db;
}

TestGeoIpDb::~TestGeoIpDb() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

absl::Status TestGeoIpDb::WriteVariant(const std::string& out, const std::string& iso) const {
  const std::string log = dir_ + "/perl.log";
  std::filesystem::remove(log);
  SHORTENER_ASSIGN_OR_RETURN(Subprocess child,
                             Subprocess::Spawn({kPerl, dir_ + "/write_db.pl", out, iso}, log));
  const std::optional<int> code = child.Wait(absl::Seconds(30));
  if (code == 0) return absl::OkStatus();
  const std::string output = ReadTextFile(log);
  if (absl::StrContains(output, "Can't locate MaxMind/DB/Writer")) {
    return absl::FailedPreconditionError(
        "the perl module MaxMind::DB::Writer is missing: install the Debian package "
        "libmaxmind-db-writer-perl (deploy/local/deps.sh does)");
  }
  return absl::InternalError(absl::StrCat("writing the test GeoIP database failed (exit ",
                                          code.value_or(-1), "):\n", output));
}

}  // namespace shortener::testing
