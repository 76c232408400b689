#include "common/clock.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <limits>

namespace serac {

namespace {

// Fixed English names: HTTP dates must not depend on the process locale, so strftime is avoided.
constexpr const char* kShortDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr const char* kLongDays[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                     "Thursday", "Friday", "Saturday"};
constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

struct BrokenDownUtc {
  struct tm fields {};
  int millis = 0;
};

BrokenDownUtc ToUtc(WallTime t) {
  int64_t millis = ToUnixMillis(t);
  int64_t seconds = millis / 1000;
  int64_t remainder = millis % 1000;
  if (remainder < 0) {  // round toward negative infinity for times before 1970
    remainder += 1000;
    seconds -= 1;
  }
  BrokenDownUtc out;
  time_t as_time_t = static_cast<time_t>(seconds);
  gmtime_r(&as_time_t, &out.fields);
  out.millis = static_cast<int>(remainder);
  return out;
}

// A tiny cursor over the text being parsed; every Take* returns false on mismatch.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  bool TakeLiteral(std::string_view literal) {
    if (text_.substr(0, literal.size()) != literal) return false;
    text_.remove_prefix(literal.size());
    return true;
  }
  // Exactly `width` decimal digits.
  bool TakeDigits(int width, int& value) {
    if (text_.size() < static_cast<size_t>(width)) return false;
    value = 0;
    for (int i = 0; i < width; ++i) {
      char c = text_[i];
      if (c < '0' || c > '9') return false;
      value = value * 10 + (c - '0');
    }
    text_.remove_prefix(width);
    return true;
  }
  // One of `names`; stores its index.
  template <size_t N>
  bool TakeName(const char* const (&names)[N], int& index) {
    for (size_t i = 0; i < N; ++i) {
      if (TakeLiteral(names[i])) {
        index = static_cast<int>(i);
        return true;
      }
    }
    return false;
  }
  bool AtEnd() const { return text_.empty(); }
  char Peek() const { return text_.empty() ? '\0' : text_.front(); }

 private:
  std::string_view text_;
};

bool TakeClock(Scanner& scan, struct tm& fields) {
  return scan.TakeDigits(2, fields.tm_hour) && scan.TakeLiteral(":") && scan.TakeDigits(2, fields.tm_min) &&
         scan.TakeLiteral(":") && scan.TakeDigits(2, fields.tm_sec);
}

constexpr int kWallTimeYearMin = 1678;
constexpr int kWallTimeYearMax = 2261;

bool IsLeapYear(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int DaysInMonth(int year, int month_index) {
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return (month_index == 1 && IsLeapYear(year)) ? 29 : kDays[month_index];
}

// `fields` holds a full year in tm_year and a 0-based month; rejects impossible dates, since
// timegm would silently normalise "Feb 31" into March. Leap seconds (:60) are accepted as :59.
std::optional<WallTime> FromUtcFields(struct tm fields, int millis = 0) {
  int year = fields.tm_year;
  // WallTime counts nanoseconds in 64 bits: it reaches from 1677-09-21 to 2262-04-11. A date
  // outside the whole years within that span cannot be a time point, so it is no date at all.
  if (year < kWallTimeYearMin || year > kWallTimeYearMax || fields.tm_mon < 0 || fields.tm_mon > 11) {
    return std::nullopt;
  }
  if (fields.tm_mday < 1 || fields.tm_mday > DaysInMonth(year, fields.tm_mon)) return std::nullopt;
  if (fields.tm_hour > 23 || fields.tm_min > 59 || fields.tm_sec > 60) return std::nullopt;
  if (fields.tm_sec == 60) fields.tm_sec = 59;
  // Days since 1970-01-01 in the proleptic Gregorian calendar, counted from March so that the
  // leap day ends a year (what timegm computes, without its locking and normalisation).
  const int64_t y = year - (fields.tm_mon < 2 ? 1 : 0);
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t year_of_era = y - era * 400;
  const int64_t month_from_march = (fields.tm_mon + 10) % 12;
  const int64_t day_of_year = (153 * month_from_march + 2) / 5 + fields.tm_mday - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  const int64_t days = era * 146097 + day_of_era - 719468;
  const int64_t seconds = days * 86400 + fields.tm_hour * 3600 + fields.tm_min * 60 + fields.tm_sec;
  return FromUnixMillis(seconds * 1000 + millis);
}

// RFC 7231 7.1.1.1: a two-digit year more than 50 years in the future means the past century.
int ExpandTwoDigitYear(int two_digit_year) {
  int current_year = ToUtc(Now()).fields.tm_year + 1900;
  int year = current_year - current_year % 100 + two_digit_year;
  if (year > current_year + 50) year -= 100;
  return year;
}

// Sun, 06 Nov 1994 08:49:37 GMT
std::optional<WallTime> ParseImfFixdate(std::string_view text) {
  Scanner scan(text);
  struct tm fields {};
  int weekday = 0;
  if (!scan.TakeName(kShortDays, weekday) || !scan.TakeLiteral(", ") || !scan.TakeDigits(2, fields.tm_mday) ||
      !scan.TakeLiteral(" ") || !scan.TakeName(kMonths, fields.tm_mon) || !scan.TakeLiteral(" ") ||
      !scan.TakeDigits(4, fields.tm_year) || !scan.TakeLiteral(" ") || !TakeClock(scan, fields) ||
      !scan.TakeLiteral(" GMT") || !scan.AtEnd()) {
    return std::nullopt;
  }
  return FromUtcFields(fields);
}

// Sunday, 06-Nov-94 08:49:37 GMT
std::optional<WallTime> ParseRfc850Date(std::string_view text) {
  Scanner scan(text);
  struct tm fields {};
  int weekday = 0;
  int two_digit_year = 0;
  if (!scan.TakeName(kLongDays, weekday) || !scan.TakeLiteral(", ") || !scan.TakeDigits(2, fields.tm_mday) ||
      !scan.TakeLiteral("-") || !scan.TakeName(kMonths, fields.tm_mon) || !scan.TakeLiteral("-") ||
      !scan.TakeDigits(2, two_digit_year) || !scan.TakeLiteral(" ") || !TakeClock(scan, fields) ||
      !scan.TakeLiteral(" GMT") || !scan.AtEnd()) {
    return std::nullopt;
  }
  fields.tm_year = ExpandTwoDigitYear(two_digit_year);
  return FromUtcFields(fields);
}

// Sun Nov  6 08:49:37 1994  (day of month padded with a space)
std::optional<WallTime> ParseAsctimeDate(std::string_view text) {
  Scanner scan(text);
  struct tm fields {};
  int weekday = 0;
  if (!scan.TakeName(kShortDays, weekday) || !scan.TakeLiteral(" ") ||
      !scan.TakeName(kMonths, fields.tm_mon) || !scan.TakeLiteral(" ")) {
    return std::nullopt;
  }
  bool day_parsed = scan.Peek() == ' ' ? (scan.TakeLiteral(" ") && scan.TakeDigits(1, fields.tm_mday))
                                       : scan.TakeDigits(2, fields.tm_mday);
  if (!day_parsed || !scan.TakeLiteral(" ") || !TakeClock(scan, fields) || !scan.TakeLiteral(" ") ||
      !scan.TakeDigits(4, fields.tm_year) || !scan.AtEnd()) {
    return std::nullopt;
  }
  return FromUtcFields(fields);
}

// Room for any date these write, whatever the year (snprintf truncates; FormattedLength says how
// much of the buffer holds the text).
constexpr int kFormattedDateBytesMax = 96;
int FormattedLength(int written) { return written < 0 ? 0 : std::min(written, kFormattedDateBytesMax - 1); }

}  // namespace

WallTime Now() { return std::chrono::system_clock::now(); }

int64_t ToUnixMillis(WallTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

WallTime FromUnixMillis(int64_t millis) {
  // Saturates at the ends of WallTime's range instead of overflowing its nanosecond count.
  constexpr int64_t kMillisMax =
      std::chrono::duration_cast<std::chrono::milliseconds>(WallTime::duration::max()).count();
  millis = std::clamp<int64_t>(millis, -kMillisMax, kMillisMax);
  return WallTime(std::chrono::duration_cast<WallTime::duration>(std::chrono::milliseconds(millis)));
}

std::string FormatAmzDate(WallTime t) {
  const struct tm& f = ToUtc(t).fields;
  char buffer[96];
  std::snprintf(buffer, sizeof(buffer), "%04d%02d%02dT%02d%02d%02dZ", f.tm_year + 1900, f.tm_mon + 1,
                f.tm_mday, f.tm_hour, f.tm_min, f.tm_sec);
  return buffer;
}

std::string FormatAmzDay(WallTime t) {
  const struct tm& f = ToUtc(t).fields;
  char buffer[96];
  std::snprintf(buffer, sizeof(buffer), "%04d%02d%02d", f.tm_year + 1900, f.tm_mon + 1, f.tm_mday);
  return buffer;
}

std::string FormatIso8601(WallTime t) {
  // Every log line starts with one: each thread formats a second once and adds the milliseconds.
  // The cache is plain bytes, not a std::string: a thread-local that allocates is freed by a
  // destructor as its thread exits, and a leak check that runs meanwhile reports it.
  thread_local int64_t cached_second = std::numeric_limits<int64_t>::min();
  thread_local char cached[kFormattedDateBytesMax];  // "YYYY-MM-DDTHH:MM:SS."
  thread_local int cached_length = 0;
  const int64_t unix_millis = ToUnixMillis(t);
  const int64_t second = unix_millis >= 0 ? unix_millis / 1000 : -((-unix_millis + 999) / 1000);
  if (second != cached_second) {
    const struct tm& f = ToUtc(t).fields;
    cached_length = FormattedLength(std::snprintf(cached, sizeof(cached), "%04d-%02d-%02dT%02d:%02d:%02d.",
                                                  f.tm_year + 1900, f.tm_mon + 1, f.tm_mday, f.tm_hour,
                                                  f.tm_min, f.tm_sec));
    cached_second = second;
  }
  const auto millis = static_cast<int>(unix_millis - second * 1000);
  std::string out;
  out.reserve(static_cast<size_t>(cached_length) + 4);
  out.assign(cached, static_cast<size_t>(cached_length));
  out += static_cast<char>('0' + millis / 100);
  out += static_cast<char>('0' + millis / 10 % 10);
  out += static_cast<char>('0' + millis % 10);
  out += 'Z';
  return out;
}

std::string FormatHttpDate(WallTime t) {
  // Every response carries a Date header with a resolution of one second: each thread formats
  // a second once (into plain bytes, as FormatIso8601 explains).
  thread_local int64_t cached_second = std::numeric_limits<int64_t>::min();
  thread_local char cached[kFormattedDateBytesMax];
  thread_local int cached_length = 0;
  const int64_t second = std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count();
  if (second != cached_second) {
    const struct tm& f = ToUtc(t).fields;
    cached_length = FormattedLength(
        std::snprintf(cached, sizeof(cached), "%s, %02d %s %04d %02d:%02d:%02d GMT", kShortDays[f.tm_wday],
                      f.tm_mday, kMonths[f.tm_mon], f.tm_year + 1900, f.tm_hour, f.tm_min, f.tm_sec));
    cached_second = second;
  }
  return std::string(cached, static_cast<size_t>(cached_length));
}

std::optional<WallTime> ParseAmzDate(std::string_view text) {
  Scanner scan(text);
  struct tm fields {};
  int month = 0;
  if (!scan.TakeDigits(4, fields.tm_year) || !scan.TakeDigits(2, month) ||
      !scan.TakeDigits(2, fields.tm_mday) || !scan.TakeLiteral("T") || !scan.TakeDigits(2, fields.tm_hour) ||
      !scan.TakeDigits(2, fields.tm_min) || !scan.TakeDigits(2, fields.tm_sec) || !scan.TakeLiteral("Z") ||
      !scan.AtEnd()) {
    return std::nullopt;
  }
  fields.tm_mon = month - 1;
  return FromUtcFields(fields);
}

std::optional<WallTime> ParseHttpDate(std::string_view text) {
  if (auto t = ParseImfFixdate(text)) return t;
  if (auto t = ParseRfc850Date(text)) return t;
  return ParseAsctimeDate(text);
}

// 2013-05-24T00:00:00Z, with optional fraction (milliseconds kept) and Z or a ±hh:mm offset.
std::optional<WallTime> ParseIso8601(std::string_view text) {
  Scanner scan(text);
  struct tm fields {};
  int month = 0;
  if (!scan.TakeDigits(4, fields.tm_year) || !scan.TakeLiteral("-") || !scan.TakeDigits(2, month) ||
      !scan.TakeLiteral("-") || !scan.TakeDigits(2, fields.tm_mday) || !scan.TakeLiteral("T") ||
      !TakeClock(scan, fields)) {
    return std::nullopt;
  }
  fields.tm_mon = month - 1;
  int millis = 0;
  if (scan.TakeLiteral(".")) {
    int digits = 0;
    int digit = 0;
    while (scan.TakeDigits(1, digit)) {
      if (digits < 3) millis = millis * 10 + digit;
      ++digits;
    }
    if (digits == 0) return std::nullopt;
    for (int i = digits; i < 3; ++i) millis *= 10;
  }
  int offset_minutes = 0;
  if (!scan.TakeLiteral("Z")) {
    char sign = scan.Peek();
    int hours = 0;
    int minutes = 0;
    if ((sign != '+' && sign != '-') || !scan.TakeLiteral(std::string_view(&sign, 1)) ||
        !scan.TakeDigits(2, hours) || !scan.TakeLiteral(":") || !scan.TakeDigits(2, minutes) || hours > 23 ||
        minutes > 59) {
      return std::nullopt;
    }
    offset_minutes = (sign == '+' ? 1 : -1) * (hours * 60 + minutes);
  }
  if (!scan.AtEnd()) return std::nullopt;
  std::optional<WallTime> local = FromUtcFields(fields, millis);
  if (!local) return std::nullopt;
  return *local - std::chrono::minutes(offset_minutes);
}

}  // namespace serac
