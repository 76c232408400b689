// Wall-clock time and the date formats of HTTP and AWS. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace serac {

using WallTime = std::chrono::system_clock::time_point;

WallTime Now();
int64_t ToUnixMillis(WallTime t);
WallTime FromUnixMillis(int64_t millis);

std::string FormatAmzDate(WallTime t);   // 20130524T000000Z
std::string FormatAmzDay(WallTime t);    // 20130524
std::string FormatIso8601(WallTime t);   // 2013-05-24T00:00:00.000Z (S3 XML LastModified)
std::string FormatHttpDate(WallTime t);  // Fri, 24 May 2013 00:00:00 GMT (RFC 7231 IMF-fixdate)

std::optional<WallTime> ParseAmzDate(std::string_view text);  // 20130524T000000Z
// Accepts IMF-fixdate, RFC 850 and asctime, as HTTP requires of recipients.
std::optional<WallTime> ParseHttpDate(std::string_view text);
std::optional<WallTime> ParseIso8601(std::string_view text);

}  // namespace serac
