#include "services/shortenctl/interrupt.h"

#include <atomic>

namespace shortener::ctl {
namespace {

// Lock-free, so the handler may set it.
std::atomic<bool> g_interrupted{false};

extern "C" void OnInterrupt(int) { g_interrupted.store(true); }

}  // namespace

InterruptWatch::InterruptWatch() {
  g_interrupted.store(false);
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // a second signal: the default action
  sigaction(SIGINT, &action, &old_int_);
  sigaction(SIGTERM, &action, &old_term_);
}

InterruptWatch::~InterruptWatch() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

bool InterruptWatch::interrupted() const { return g_interrupted.load(); }

}  // namespace shortener::ctl
