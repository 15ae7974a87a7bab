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

// argv: triples LAYOUT OUTPUT_PATH VARIANT, LAYOUT one of country, city,
// asn (test_geoip_db.h says what each holds and what VARIANT changes).
// Reserved networks are kept (the writer drops them by default, and
// documentation ranges are all we use).
constexpr char kWriter[] = R"(use strict;
use warnings;
use utf8;
use MaxMind::DB::Writer::Tree;

my %types = (
  country => 'map', registered_country => 'map', iso_code => 'utf8_string',
  names => 'map', en => 'utf8_string', de => 'utf8_string', geoname_id => 'uint32',
  subdivisions => ['array', 'map'], city => 'map',
  autonomous_system_number => 'uint32', autonomous_system_organization => 'utf8_string',
);
my %types_of = (country => 'Country', city => 'City', asn => 'ASN');

sub country_records {
  my ($iso) = @_;
  return (
    ['203.0.113.0/24', { country => { iso_code => $iso, names => { en => 'Test' } },
                         registered_country => { iso_code => $iso } }],
    ['2001:db8::/32', { country => { iso_code => 'JP' } }],
    ['198.51.100.0/24', { registered_country => { iso_code => 'DE' } }],
    ['192.0.2.0/24', { country => { geoname_id => 42 } }],
  );
}

sub city_records {
  my ($name) = @_;
  return (
    ['203.0.113.0/24', { country => { iso_code => 'US' },
                         subdivisions => [{ iso_code => 'IL' }, { iso_code => 'SAN' }],
                         city => { names => { en => $name, de => 'Quelle' } } }],
    ['198.51.100.0/24', { country => { iso_code => 'us' }, subdivisions => [{ iso_code => 'MO' }],
                          city => { names => { en => 'Springfield' } } }],
    ['2001:db8::/32', { country => { iso_code => 'JP' }, subdivisions => [{ iso_code => '13' }],
                        city => { names => { en => "T\x{14D}ky\x{14D}" } } }],
    ['192.0.2.0/25', { country => { iso_code => 'MC' }, city => { names => { en => 'Monaco' } } }],
    ['192.0.2.128/25', { registered_country => { iso_code => 'DE' },
                         subdivisions => [{ iso_code => 'BE' }],
                         city => { names => { en => 'Berlin' } } }],
    ['100.64.0.0/24', { country => { iso_code => 'GB' }, subdivisions => [{ iso_code => 'ENG' }],
                        city => { names => { en => "  Lon\x{1}don\n" . ('x' x 300) } } }],
    ['100.64.1.0/24', { country => { iso_code => 'FR' },
                        subdivisions => [{ iso_code => "\x{CE}DF" }],
                        city => { names => { de => 'Paris' } } }],
  );
}

sub asn_records {
  my ($organisation) = @_;
  return (
    ['203.0.113.0/24', { autonomous_system_number => 64500,
                         autonomous_system_organization => $organisation }],
    ['2001:db8::/32', { autonomous_system_number => 64501,
                        autonomous_system_organization => "Beispiel GmbH & Co. KG" }],
    ['198.51.100.0/24', { autonomous_system_number => 4200000000 }],
    ['192.0.2.0/24', { autonomous_system_number => 0,
                       autonomous_system_organization => 'Reserved' }],
    ['100.64.0.0/24', { autonomous_system_number => 64502,
                        autonomous_system_organization => "Tab\tOrg " . ('y' x 300) }],
  );
}

while (my ($layout, $out, $variant) = splice(@ARGV, 0, 3)) {
  my $tree = MaxMind::DB::Writer::Tree->new(
    ip_version => 6,
    record_size => 24,
    database_type => "Shortener-Test-$types_of{$layout}",
    languages => ['en'],
    description => { en => "shortener test $layout database" },
    map_key_type_callback => sub { $types{ $_[0] } },
    remove_reserved_networks => 0,
    alias_ipv6_to_ipv4 => 1,
  );
  my @records = $layout eq 'country' ? country_records($variant)
              : $layout eq 'city' ? city_records($variant)
              : asn_records($variant);
  $tree->insert_network(@$_) for @records;
  open my $fh, '>:raw', $out or die "cannot write $out: $!";
  $tree->write_tree($fh);
  close $fh or die "cannot close $out: $!";
}
)";

const char* LayoutName(TestGeoIpDb::Layout layout) {
  switch (layout) {
    case TestGeoIpDb::Layout::kCountry:
      return "country";
    case TestGeoIpDb::Layout::kCity:
      return "city";
    case TestGeoIpDb::Layout::kAsn:
      return "asn";
  }
  return "country";
}

}  // namespace

absl::StatusOr<std::unique_ptr<TestGeoIpDb>> TestGeoIpDb::Create() {
  SHORTENER_ASSIGN_OR_RETURN(std::string dir, MakeOwnedTempDir("shortener-geoip-"));
  std::unique_ptr<TestGeoIpDb> db(new TestGeoIpDb(std::move(dir)));
  std::ofstream(db->dir_ + "/write_db.pl") << kWriter;
  // One perl run for the three files (the module takes most of its time).
  SHORTENER_RETURN_IF_ERROR(
      db->RunWriter({"country", db->path(), "NL", "city", db->city_path(), "Springfield", "asn",
                     db->asn_path(), "Example Net B.V."}));
  return db;
}

TestGeoIpDb::~TestGeoIpDb() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

absl::Status TestGeoIpDb::WriteVariant(const std::string& out, const std::string& iso) const {
  return Write(Layout::kCountry, out, iso);
}

absl::Status TestGeoIpDb::Write(Layout layout, const std::string& out,
                                const std::string& variant) const {
  return RunWriter({LayoutName(layout), out, variant});
}

absl::Status TestGeoIpDb::RunWriter(const std::vector<std::string>& triples) const {
  const std::string log = dir_ + "/perl.log";
  std::filesystem::remove(log);
  std::vector<std::string> argv = {kPerl, dir_ + "/write_db.pl"};
  argv.insert(argv.end(), triples.begin(), triples.end());
  SHORTENER_ASSIGN_OR_RETURN(Subprocess child, Subprocess::Spawn(argv, log));
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
