// Cleans up after test processes that died without running destructors
// (killed by a ctest timeout, aborted): every temp dir a test creates records
// its owner's PID in `owner.pid`; when that process is gone, the next test
// that starts stops what the dir still runs (a postmaster via its
// postmaster.pid, a service via `child.pid`) and deletes the dir.
#ifndef SHORTENER_TESTS_SUPPORT_ORPHAN_REAPER_H_
#define SHORTENER_TESTS_SUPPORT_ORPHAN_REAPER_H_

#include <string>

namespace shortener::testing {

// Writes this process's PID to `dir`/owner.pid.
void RecordOwner(const std::string& dir);

// Writes a child's PID to `dir`/child.pid.
void RecordChild(const std::string& dir, int pid);

// Reaps dirs named /tmp/`prefix`* whose owner is dead. Best effort; never
// fails.
void ReapOrphans(const std::string& prefix);

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SUPPORT_ORPHAN_REAPER_H_
