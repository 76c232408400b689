#include "common/clock.h"

#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <thread>
#include <vector>

#include "common/log.h"
#include "common/random.h"

namespace serac {
namespace {

// 2013-05-24T00:00:00Z, the date used throughout the AWS SigV4 examples.
constexpr int64_t kExampleMillis = 1369353600000;
// Sun, 06 Nov 1994 08:49:37 GMT, the RFC 7231 example.
constexpr int64_t kRfcExampleMillis = 784111777000;

TEST(ClockTest, UnixMillisRoundTrip) {
  EXPECT_EQ(ToUnixMillis(FromUnixMillis(kExampleMillis)), kExampleMillis);
  EXPECT_EQ(ToUnixMillis(FromUnixMillis(-1)), -1);
  int64_t now = ToUnixMillis(Now());
  EXPECT_GT(now, kExampleMillis);
}

TEST(ClockTest, FormatsAwsAndHttpDates) {
  WallTime t = FromUnixMillis(kExampleMillis + 123);
  EXPECT_EQ(FormatAmzDate(t), "20130524T000000Z");
  EXPECT_EQ(FormatAmzDay(t), "20130524");
  EXPECT_EQ(FormatIso8601(t), "2013-05-24T00:00:00.123Z");
  EXPECT_EQ(FormatHttpDate(t), "Fri, 24 May 2013 00:00:00 GMT");
  EXPECT_EQ(FormatHttpDate(FromUnixMillis(kRfcExampleMillis)), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(FormatIso8601(FromUnixMillis(-1)), "1969-12-31T23:59:59.999Z");
}

// Parsing computes seconds from calendar fields itself: every day from 1700 to 2250 (leap years,
// centuries, 1970 and both sides of it; WallTime counts nanoseconds in 64 bits, about 1678 to
// 2262) must come back as the instant formatting started from.
TEST(ClockTest, ParsedCalendarDaysMatchTheFormattedInstant) {
  constexpr int64_t kDayMillis = 86400000;
  const int64_t first = -8520336000000;  // 1700-01-01T00:00:00Z
  const int64_t last = 8835955200000;    // 2250-01-01T00:00:00Z
  for (int64_t millis = first; millis <= last; millis += kDayMillis + 1001) {
    const WallTime t = FromUnixMillis(millis);
    const std::string text = FormatIso8601(t);
    ASSERT_EQ(ParseIso8601(text), t) << text;
    const WallTime second = FromUnixMillis(millis - ((millis % 1000) + 1000) % 1000);
    ASSERT_EQ(ParseAmzDate(FormatAmzDate(t)), second) << text;
  }
  // The ISO form, milliseconds included, across a change of second (the per-thread cache).
  EXPECT_EQ(FormatIso8601(FromUnixMillis(kExampleMillis + 999)), "2013-05-24T00:00:00.999Z");
  EXPECT_EQ(FormatIso8601(FromUnixMillis(kExampleMillis + 1000)), "2013-05-24T00:00:01.000Z");
  EXPECT_EQ(FormatIso8601(FromUnixMillis(kExampleMillis + 1007)), "2013-05-24T00:00:01.007Z");
}

TEST(ClockTest, ParsesAllThreeHttpDateFormats) {
  for (const char* text :
       {"Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"}) {
    auto parsed = ParseHttpDate(text);
    ASSERT_TRUE(parsed.has_value()) << text;
    EXPECT_EQ(ToUnixMillis(*parsed), kRfcExampleMillis) << text;
  }
  auto two_digit_day = ParseHttpDate("Thu Nov 16 08:49:37 1994");
  ASSERT_TRUE(two_digit_day.has_value());
  EXPECT_EQ(ToUnixMillis(*two_digit_day), kRfcExampleMillis + 10LL * 86400 * 1000);
}

TEST(ClockTest, RejectsMalformedHttpDates) {
  for (const char* text :
       {"", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 1994 08:49:37 GMT",
        "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 31 Feb 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:49:37 GMT ", "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sun Nov 6 08:49:37 1994"}) {
    EXPECT_FALSE(ParseHttpDate(text).has_value()) << text;
  }
}

// Dates a 64-bit nanosecond clock cannot hold are no dates: parsing them must not overflow.
TEST(ClockTest, DatesBeyondTheClocksRangeAreRefused) {
  EXPECT_FALSE(ParseHttpDate("Thu, 01 Jan 1031 00:00:00 GMT").has_value());
  EXPECT_FALSE(ParseHttpDate("Fri, 01 Jan 9999 00:00:00 GMT").has_value());
  EXPECT_FALSE(ParseAmzDate("30000101T000000Z").has_value());
  EXPECT_FALSE(ParseIso8601("1600-01-01T00:00:00.000Z").has_value());
  EXPECT_TRUE(ParseHttpDate("Thu, 01 Jan 1970 00:00:00 GMT").has_value());
  EXPECT_TRUE(ParseAmzDate("22610101T000000Z").has_value());
  EXPECT_EQ(ToUnixMillis(FromUnixMillis(INT64_MAX)), ToUnixMillis(FromUnixMillis(INT64_MAX - 1)));
}

TEST(ClockTest, HttpDateRoundTrip) {
  for (int64_t seconds : {0LL, 951782400LL /* 2000-02-29 */, 1700000000LL, 4102444799LL}) {
    WallTime t = FromUnixMillis(seconds * 1000);
    auto parsed = ParseHttpDate(FormatHttpDate(t));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, t);
  }
}

TEST(ClockTest, ParsesAmzDate) {
  auto parsed = ParseAmzDate("20130524T000000Z");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(ToUnixMillis(*parsed), kExampleMillis);
  EXPECT_FALSE(ParseAmzDate("20130524T000000").has_value());
  EXPECT_FALSE(ParseAmzDate("20131324T000000Z").has_value());
  EXPECT_FALSE(ParseAmzDate("2013-05-24T00:00:00Z").has_value());
  EXPECT_FALSE(ParseAmzDate("20130524T0000000Z").has_value());
}

TEST(ClockTest, ParsesIso8601) {
  auto plain = ParseIso8601("2013-05-24T00:00:00Z");
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(ToUnixMillis(*plain), kExampleMillis);
  auto fraction = ParseIso8601("2013-05-24T00:00:00.5Z");
  ASSERT_TRUE(fraction.has_value());
  EXPECT_EQ(ToUnixMillis(*fraction), kExampleMillis + 500);
  auto micros = ParseIso8601("2013-05-24T00:00:00.123456Z");
  ASSERT_TRUE(micros.has_value());
  EXPECT_EQ(ToUnixMillis(*micros), kExampleMillis + 123);
  auto offset = ParseIso8601("2013-05-24T02:30:00+02:30");
  ASSERT_TRUE(offset.has_value());
  EXPECT_EQ(ToUnixMillis(*offset), kExampleMillis);
  EXPECT_EQ(ParseIso8601(FormatIso8601(FromUnixMillis(kExampleMillis + 7))),
            FromUnixMillis(kExampleMillis + 7));
  EXPECT_FALSE(ParseIso8601("2013-05-24T00:00:00").has_value());
  EXPECT_FALSE(ParseIso8601("2013-05-24T00:00:00.Z").has_value());
  EXPECT_FALSE(ParseIso8601("2013-05-24 00:00:00Z").has_value());
  EXPECT_FALSE(ParseIso8601("2013-02-30T00:00:00Z").has_value());
}

TEST(ClockTest, FormattingIsThreadSafe) {
  std::vector<std::thread> threads;
  std::vector<bool> ok(4, true);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([i, &ok] {
      WallTime t = FromUnixMillis(kExampleMillis + i * 86400000LL);
      std::string expected = FormatHttpDate(t);
      for (int j = 0; j < 2000; ++j) {
        if (FormatHttpDate(t) != expected) ok[i] = false;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (bool thread_ok : ok) EXPECT_TRUE(thread_ok);
}

TEST(RandomTest, IdsHaveTheDocumentedShape) {
  std::string id = RandomHexId();
  EXPECT_EQ(id.size(), 32u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(RandomHexId(), RandomHexId());
  std::string request_id = RandomRequestId();
  EXPECT_EQ(request_id.size(), 16u);
  EXPECT_EQ(request_id.find_first_not_of("0123456789ABCDEF"), std::string::npos);
  std::string secret = RandomAlphanumeric(40);
  EXPECT_EQ(secret.size(), 40u);
  EXPECT_EQ(secret.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
            std::string::npos);
  std::string uuid = RandomUuid();
  ASSERT_EQ(uuid.size(), 36u);
  EXPECT_EQ(uuid[8], '-');
  EXPECT_EQ(uuid[13], '-');
  EXPECT_EQ(uuid[14], '4');
  EXPECT_NE(std::string("89ab").find(uuid[19]), std::string::npos);
  EXPECT_EQ(RandomBytes(0), "");
  EXPECT_EQ(RandomBytes(1000).size(), 1000u);
}

}  // namespace
}  // namespace serac
