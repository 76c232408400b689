// Slows down guessing of secrets at the places a secret is presented without a signature (the
// OAuth2 token endpoint): an address that fails to sign in as one client too often, or as any
// client far too often, within a window is refused until its oldest counted failure has left the
// window. Counted per (address, client) up to limits::kSignInFailuresPerClientMax and per address up
// to limits::kSignInFailuresPerAddressMax, both within limits::kSignInFailureWindow. Memory is
// bounded: at most limits::kSignInThrottledKeysMax keys are remembered (the least recently failed
// are forgotten first).
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace serac::auth {

class SignInThrottle {
 public:
  using Clock = std::chrono::steady_clock;

  // How long `address` must still wait before it may try `client` again; nullopt: now.
  std::optional<std::chrono::seconds> WaitFor(std::string_view address, std::string_view client,
                                              Clock::time_point now) const;
  void RecordFailure(std::string_view address, std::string_view client, Clock::time_point now);
  // A success clears the (address, client) count; the address's count stays.
  void RecordSuccess(std::string_view address, std::string_view client);

 private:
  struct Entry {
    std::deque<Clock::time_point> failures;  // within the window, oldest first
    std::list<std::string>::iterator recency;
  };
  std::optional<std::chrono::seconds> WaitForKey(const std::string& key, uint32_t failures_max,
                                                 Clock::time_point now) const;
  void Record(const std::string& key, uint32_t failures_max, Clock::time_point now);

  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;  // guarded by mutex_
  std::list<std::string> recency_;                  // guarded by mutex_; most recent first
};

}  // namespace serac::auth
