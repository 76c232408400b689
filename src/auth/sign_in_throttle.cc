#include "auth/sign_in_throttle.h"

#include "common/limits.h"

namespace serac::auth {
namespace {

std::string PairKey(std::string_view address, std::string_view client) {
  std::string key(address);
  key.push_back('\0');  // no address holds one
  key.append(client.substr(0, limits::kTokenAccessKeyBytesMax));
  return key;
}

}  // namespace

std::optional<std::chrono::seconds> SignInThrottle::WaitForKey(const std::string& key, uint32_t failures_max,
                                                               Clock::time_point now) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  const std::deque<Clock::time_point>& failures = it->second.failures;
  size_t recent = 0;
  for (auto at = failures.rbegin(); at != failures.rend() && now - *at < limits::kSignInFailureWindow; ++at) {
    ++recent;
  }
  if (recent < failures_max) return std::nullopt;
  // Free again once the oldest of the last failures_max failures leaves the window.
  const Clock::time_point oldest_counted = failures[failures.size() - failures_max];
  auto wait = std::chrono::ceil<std::chrono::seconds>(oldest_counted + limits::kSignInFailureWindow - now);
  return std::max(wait, std::chrono::seconds(1));
}

std::optional<std::chrono::seconds> SignInThrottle::WaitFor(std::string_view address, std::string_view client,
                                                            Clock::time_point now) const {
  std::lock_guard lock(mutex_);
  std::optional<std::chrono::seconds> by_address =
      WaitForKey(std::string(address), limits::kSignInFailuresPerAddressMax, now);
  std::optional<std::chrono::seconds> by_client =
      WaitForKey(PairKey(address, client), limits::kSignInFailuresPerClientMax, now);
  if (by_address && by_client) return std::max(*by_address, *by_client);
  return by_address ? by_address : by_client;
}

void SignInThrottle::Record(const std::string& key, uint32_t failures_max, Clock::time_point now) {
  auto [it, inserted] = entries_.try_emplace(key);
  if (!inserted) recency_.erase(it->second.recency);
  recency_.push_front(key);
  it->second.recency = recency_.begin();
  std::deque<Clock::time_point>& failures = it->second.failures;
  failures.push_back(now);
  while (failures.size() > failures_max ||
         (!failures.empty() && now - failures.front() >= limits::kSignInFailureWindow)) {
    failures.pop_front();
  }
  while (entries_.size() > limits::kSignInThrottledKeysMax) {
    entries_.erase(recency_.back());
    recency_.pop_back();
  }
}

void SignInThrottle::RecordFailure(std::string_view address, std::string_view client, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  Record(std::string(address), limits::kSignInFailuresPerAddressMax, now);
  Record(PairKey(address, client), limits::kSignInFailuresPerClientMax, now);
}

void SignInThrottle::RecordSuccess(std::string_view address, std::string_view client) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(PairKey(address, client));
  if (it == entries_.end()) return;
  recency_.erase(it->second.recency);
  entries_.erase(it);
}

}  // namespace serac::auth
