#include "auth/sign_in_throttle.h"

#include <gtest/gtest.h>

#include "common/limits.h"

namespace serac::auth {
namespace {

using Clock = SignInThrottle::Clock;
using std::chrono::seconds;

TEST(SignInThrottleTest, AClientGuessedAtTooOftenWaitsUntilItsOldestFailureLeavesTheWindow) {
  SignInThrottle throttle;
  const Clock::time_point start = Clock::now();
  for (uint32_t i = 0; i < limits::kSignInFailuresPerClientMax; ++i) {
    EXPECT_FALSE(throttle.WaitFor("10.0.0.1", "AKID", start + seconds(i)));
    throttle.RecordFailure("10.0.0.1", "AKID", start + seconds(i));
  }
  const Clock::time_point now = start + seconds(limits::kSignInFailuresPerClientMax);
  std::optional<seconds> wait = throttle.WaitFor("10.0.0.1", "AKID", now);
  ASSERT_TRUE(wait);
  EXPECT_EQ(*wait, limits::kSignInFailureWindow - seconds(limits::kSignInFailuresPerClientMax));
  // Another client from the address, and the client from another address, are not held up.
  EXPECT_FALSE(throttle.WaitFor("10.0.0.1", "OTHER", now));
  EXPECT_FALSE(throttle.WaitFor("10.0.0.2", "AKID", now));
  // Once the oldest failure is out of the window, one more try is allowed.
  EXPECT_FALSE(throttle.WaitFor("10.0.0.1", "AKID", start + limits::kSignInFailureWindow));
}

TEST(SignInThrottleTest, ASuccessClearsTheClientsCount) {
  SignInThrottle throttle;
  const Clock::time_point now = Clock::now();
  for (uint32_t i = 0; i + 1 < limits::kSignInFailuresPerClientMax; ++i)
    throttle.RecordFailure("a", "k", now);
  throttle.RecordSuccess("a", "k");
  throttle.RecordFailure("a", "k", now);
  EXPECT_FALSE(throttle.WaitFor("a", "k", now));
}

TEST(SignInThrottleTest, SprayingManyClientsFromOneAddressIsRefusedToo) {
  SignInThrottle throttle;
  const Clock::time_point now = Clock::now();
  for (uint32_t i = 0; i < limits::kSignInFailuresPerAddressMax; ++i) {
    throttle.RecordFailure("10.0.0.9", "key-" + std::to_string(i), now);
  }
  EXPECT_TRUE(throttle.WaitFor("10.0.0.9", "never-tried", now));
  EXPECT_FALSE(throttle.WaitFor("10.0.0.8", "never-tried", now));
}

TEST(SignInThrottleTest, MemoryIsBoundedByKeys) {
  SignInThrottle throttle;
  const Clock::time_point now = Clock::now();
  // Far more distinct addresses than are kept: the oldest are forgotten, the newest still count.
  for (uint32_t i = 0; i < limits::kSignInThrottledKeysMax; ++i) {
    throttle.RecordFailure("addr-" + std::to_string(i), "k", now);
  }
  for (uint32_t i = 0; i < limits::kSignInFailuresPerClientMax; ++i) throttle.RecordFailure("last", "k", now);
  EXPECT_TRUE(throttle.WaitFor("last", "k", now));
}

}  // namespace
}  // namespace serac::auth
