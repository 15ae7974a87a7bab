// Cleans up after test processes that died without running destructors
// (killed by a ctest timeout, aborted): every temp dir a test creates records
// its owner's PID in `owner.pid`; when that process is gone, the next test
// that starts stops what the dir still runs (a postmaster via its
// postmaster.pid, a service via `child.pid`) and deletes the dir.
#ifndef SHORTENER_TESTS_SUPPORT_ORPHAN_REAPER_H_
#define SHORTENER_TESTS_SUPPORT_ORPHAN_REAPER_H_

#include <string>

#include "absl/status/statusor.h"

namespace shortener::testing {

// Writes this process's PID to `dir`/owner.pid.
void RecordOwner(const std::string& dir);

// Writes a child's PID to `dir`/child.pid.
void RecordChild(const std::string& dir, int pid);

// Reaps dirs named /tmp/`prefix`* whose owner is dead. Best effort; never
// fails.
void ReapOrphans(const std::string& prefix);

// Stops what every /tmp dir owned by this process runs and deletes the dirs:
// for a process about to exit on a signal, whose destructors will not run.
// Best effort; never fails.
void RemoveOwnedTempDirs();

// Reaps the orphans of `prefix`, then creates /tmp/`prefix`XXXXXX owned by
// this process. INTERNAL if it cannot.
absl::StatusOr<std::string> MakeOwnedTempDir(const std::string& prefix);

// The number on the first line of a PID file (owner.pid, child.pid,
// postmaster.pid); 0 if there is none.
int ReadPidFile(const std::string& path);

// The whole of a text file (a child's log); empty if it cannot be read.
std::string ReadTextFile(const std::string& path);

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SUPPORT_ORPHAN_REAPER_H_
