// The text forms of pg_values.h, read exactly: integers and decimals digit by digit (no double in
// between), dates by the proleptic Gregorian calendar, timestamps to the microsecond.
#include "sync/pg_values.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "iceberg/schema/partition.h"

namespace serac::sync {
namespace {

using iceberg::TypeId;

Status Bad(std::string_view text, std::string_view what) {
  std::string shown(text.substr(0, 64));
  if (text.size() > 64) shown += "...";
  return Error(ErrorCode::kInvalidArgument, "\"" + shown + "\" is not " + std::string(what));
}

template <typename T>
Result<T> Integer(std::string_view text, std::string_view what) {
  T value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return Bad(text, what);
  return value;
}

template <typename T>
Result<T> Floating(std::string_view text) {
  if (text == "NaN") return std::numeric_limits<T>::quiet_NaN();
  if (text == "Infinity") return std::numeric_limits<T>::infinity();
  if (text == "-Infinity") return -std::numeric_limits<T>::infinity();
  T value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return Bad(text, "a floating-point number");
  return value;
}

// A decimal's digits ("-123.45", at most `scale` fraction digits, padded to it) as the unscaled
// value in big-endian two's complement, as partition.h keeps a decimal.
Result<std::string> Decimal(std::string_view text, const iceberg::Type& type) {
  std::string_view digits = text;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits == "NaN" || digits == "Infinity") {
    return Error(ErrorCode::kInvalidArgument, "\"" + std::string(text) + "\" has no value in " + type.Name());
  }
  __int128 unscaled = 0;
  int integer_digits = 0;
  int fraction_digits = 0;
  bool in_fraction = false;
  for (char c : digits) {
    if (c == '.' && !in_fraction) {
      in_fraction = true;
      continue;
    }
    if (c < '0' || c > '9') return Bad(text, "a number");
    if (in_fraction) {
      if (++fraction_digits > type.scale) {
        if (c != '0') return Bad(text, "a number of " + type.Name() + " (too many fraction digits)");
        continue;
      }
    } else if (unscaled != 0 || c != '0') {
      ++integer_digits;
    }
    unscaled = unscaled * 10 + (c - '0');
    if (integer_digits > type.precision - type.scale) {
      return Bad(text, "a number of " + type.Name() + " (too many digits)");
    }
  }
  if (digits.empty() || digits == ".") return Bad(text, "a number");
  for (int i = std::min(fraction_digits, type.scale); i < type.scale; ++i) unscaled *= 10;
  if (negative) unscaled = -unscaled;
  std::string bytes(16, '\0');
  auto bits = static_cast<unsigned __int128>(unscaled);
  for (int i = 15; i >= 0; --i) {
    bytes[static_cast<size_t>(i)] = static_cast<char>(static_cast<uint8_t>(bits & 0xFF));
    bits >>= 8;
  }
  return std::string(iceberg::TrimTwosComplement(bytes));
}

// money with lc_monetary C: "$1,234.56", "-$1,234.56".
Result<std::string> Money(std::string_view text, const iceberg::Type& type) {
  std::string plain;
  for (char c : text) {
    if (c == '$' || c == ',') continue;
    plain += c;
  }
  return Decimal(plain, type);
}

// "YYYY-MM-DD" (a year of four or more digits) with " BC" after it for years before 1; days since
// 1970-01-01. `rest` gets what follows the date.
Result<int64_t> DateDays(std::string_view text, std::string_view& rest) {
  size_t dash = text.find('-', 1);
  if (dash == std::string_view::npos || dash < 4 || text.size() < dash + 6) return Bad(text, "a date");
  SERAC_ASSIGN_OR_RETURN(int64_t year, Integer<int64_t>(text.substr(0, dash), "a date"));
  // PostgreSQL's dates end in 5874897 AD and its texts write years before 1 as "N BC": a longer
  // or a signed year is not one of its texts.
  if (year < 0 || year > 5874898) return Bad(text, "a date");
  SERAC_ASSIGN_OR_RETURN(int64_t month, Integer<int64_t>(text.substr(dash + 1, 2), "a date"));
  if (text[dash + 3] != '-') return Bad(text, "a date");
  SERAC_ASSIGN_OR_RETURN(int64_t day, Integer<int64_t>(text.substr(dash + 4, 2), "a date"));
  if (month < 1 || month > 12 || day < 1 || day > 31) return Bad(text, "a date");
  rest = text.substr(dash + 6);
  if (rest.size() >= 3 && rest.substr(rest.size() - 3) == " BC") {
    year = 1 - year;  // 1 BC is year 0 of the proleptic calendar
    rest.remove_suffix(3);
  }
  return iceberg::DaysFromCivil(year, month, day);
}

// "HH:MM:SS[.ffffff]" as microseconds since midnight.
Result<int64_t> TimeMicros(std::string_view text) {
  if (text.size() < 8 || text[2] != ':' || text[5] != ':') return Bad(text, "a time");
  SERAC_ASSIGN_OR_RETURN(int64_t hours, Integer<int64_t>(text.substr(0, 2), "a time"));
  SERAC_ASSIGN_OR_RETURN(int64_t minutes, Integer<int64_t>(text.substr(3, 2), "a time"));
  SERAC_ASSIGN_OR_RETURN(int64_t seconds, Integer<int64_t>(text.substr(6, 2), "a time"));
  int64_t micros = 0;
  if (text.size() > 8) {
    if (text[8] != '.' || text.size() > 15 || text.size() == 9) return Bad(text, "a time");
    std::string fraction(text.substr(9));
    fraction.resize(6, '0');
    SERAC_ASSIGN_OR_RETURN(micros, Integer<int64_t>(fraction, "a time"));
  }
  if (hours > 24 || minutes > 59 || seconds > 60) return Bad(text, "a time");
  return ((hours * 60 + minutes) * 60 + seconds) * 1'000'000 + micros;
}

// "+HH[:MM[:SS]]" or "-HH..." as seconds east of UTC.
Result<int64_t> OffsetSeconds(std::string_view text) {
  if (text.size() < 3 || (text[0] != '+' && text[0] != '-')) return Bad(text, "a time zone offset");
  int64_t seconds = 0;
  int64_t unit = 3600;
  for (size_t at = 1; at < text.size(); at += 3, unit /= 60) {
    if (unit == 0 || text.size() < at + 2 || (at > 1 && text[at - 1] != ':')) {
      return Bad(text, "a time zone offset");
    }
    SERAC_ASSIGN_OR_RETURN(int64_t part, Integer<int64_t>(text.substr(at, 2), "a time zone offset"));
    seconds += part * unit;
  }
  return text[0] == '-' ? -seconds : seconds;
}

Result<int64_t> TimestampMicros(std::string_view text, bool with_zone) {
  if (text == "infinity" || text == "-infinity") {
    return Error(ErrorCode::kInvalidArgument, "\"" + std::string(text) + "\" has no Iceberg timestamp");
  }
  bool before_christ = false;
  if (text.size() > 3 && text.substr(text.size() - 3) == " BC") {
    before_christ = true;
    text.remove_suffix(3);
  }
  const size_t space = text.find(' ');
  if (space == std::string_view::npos) return Bad(text, "a timestamp");
  std::string date(text.substr(0, space));
  if (before_christ) date += " BC";
  std::string_view after_date;
  SERAC_ASSIGN_OR_RETURN(int64_t days, DateDays(date, after_date));
  if (!after_date.empty()) return Bad(text, "a timestamp");
  std::string_view clock = text.substr(space + 1);
  int64_t offset = 0;
  if (with_zone) {
    const size_t sign = clock.find_first_of("+-");
    if (sign == std::string_view::npos) return Bad(text, "a timestamp with a time zone");
    SERAC_ASSIGN_OR_RETURN(offset, OffsetSeconds(clock.substr(sign)));
    clock = clock.substr(0, sign);
  }
  SERAC_ASSIGN_OR_RETURN(int64_t micros, TimeMicros(clock));
  int64_t total = 0;
  if (__builtin_mul_overflow(days, int64_t{86'400'000'000}, &total) ||
      __builtin_add_overflow(total, micros, &total) ||
      __builtin_sub_overflow(total, offset * 1'000'000, &total)) {
    return Bad(text, "a timestamp Iceberg can hold");
  }
  return total;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> Uuid(std::string_view text) {
  std::string bytes;
  int high = -1;
  for (char c : text) {
    if (c == '-') continue;
    const int digit = HexDigit(c);
    if (digit < 0) return Bad(text, "a uuid");
    if (high < 0) {
      high = digit;
    } else {
      bytes += static_cast<char>(high << 4 | digit);
      high = -1;
    }
  }
  if (bytes.size() != 16 || high >= 0) return Bad(text, "a uuid");
  return bytes;
}

Result<std::string> Bytea(std::string_view text) {
  if (text.size() < 2 || text[0] != '\\' || text[1] != 'x' || text.size() % 2 != 0) {
    return Bad(text, "bytea in hex (\\x...)");
  }
  std::string bytes;
  bytes.reserve(text.size() / 2 - 1);
  for (size_t i = 2; i < text.size(); i += 2) {
    const int high = HexDigit(text[i]);
    const int low = HexDigit(text[i + 1]);
    if (high < 0 || low < 0) return Bad(text, "bytea in hex (\\x...)");
    bytes += static_cast<char>(high << 4 | low);
  }
  return bytes;
}

Result<iceberg::Datum> Primitive(std::string_view text, const iceberg::Type& type) {
  switch (type.id) {
    case TypeId::kBoolean:
      if (text == "t") return iceberg::Datum(true);
      if (text == "f") return iceberg::Datum(false);
      return Bad(text, "a boolean");
    case TypeId::kInt: {
      SERAC_ASSIGN_OR_RETURN(int32_t value, Integer<int32_t>(text, "an integer"));
      return iceberg::Datum(value);
    }
    case TypeId::kLong: {
      SERAC_ASSIGN_OR_RETURN(int64_t value, Integer<int64_t>(text, "an integer"));
      return iceberg::Datum(value);
    }
    case TypeId::kFloat: {
      SERAC_ASSIGN_OR_RETURN(float value, Floating<float>(text));
      return iceberg::Datum(value);
    }
    case TypeId::kDouble: {
      SERAC_ASSIGN_OR_RETURN(double value, Floating<double>(text));
      return iceberg::Datum(value);
    }
    case TypeId::kDecimal: {
      const bool money = text.find('$') != std::string_view::npos;
      SERAC_ASSIGN_OR_RETURN(std::string value, money ? Money(text, type) : Decimal(text, type));
      return iceberg::Datum(std::move(value));
    }
    case TypeId::kDate: {
      if (text == "infinity" || text == "-infinity") {
        return Error(ErrorCode::kInvalidArgument, "\"" + std::string(text) + "\" has no Iceberg date");
      }
      std::string_view rest;
      SERAC_ASSIGN_OR_RETURN(int64_t days, DateDays(text, rest));
      if (!rest.empty()) return Bad(text, "a date");
      if (days < std::numeric_limits<int32_t>::min() || days > std::numeric_limits<int32_t>::max()) {
        return Bad(text, "a date Iceberg can hold");
      }
      return iceberg::Datum(static_cast<int32_t>(days));
    }
    case TypeId::kTime: {
      SERAC_ASSIGN_OR_RETURN(int64_t micros, TimeMicros(text));
      return iceberg::Datum(micros);
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz: {
      SERAC_ASSIGN_OR_RETURN(int64_t micros, TimestampMicros(text, type.id == TypeId::kTimestampTz));
      return iceberg::Datum(micros);
    }
    case TypeId::kUuid: {
      SERAC_ASSIGN_OR_RETURN(std::string bytes, Uuid(text));
      return iceberg::Datum(std::move(bytes));
    }
    case TypeId::kBinary: {
      SERAC_ASSIGN_OR_RETURN(std::string bytes, Bytea(text));
      return iceberg::Datum(std::move(bytes));
    }
    case TypeId::kString:
      return iceberg::Datum(std::string(text));
    default:
      return Error(ErrorCode::kNotImplemented, "values of " + type.Name() + " are not read from PostgreSQL");
  }
}

// A one-dimensional array's text "{a,NULL,"b c"}" (optionally "[1:3]={...}") as its elements' texts.
Result<std::vector<std::optional<std::string>>> ArrayElements(std::string_view text) {
  if (!text.empty() && text[0] == '[') {
    const size_t equals = text.find('=');
    if (equals == std::string_view::npos) return Bad(text, "an array");
    text.remove_prefix(equals + 1);
  }
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return Bad(text, "an array");
  std::vector<std::optional<std::string>> elements;
  const std::string_view body = text.substr(1, text.size() - 2);
  if (body.empty()) return elements;
  if (body[0] == '{') {
    return Error(ErrorCode::kInvalidArgument,
                 "a multi-dimensional array has no Iceberg list of one level: \"" +
                     std::string(text.substr(0, 64)) + "\"");
  }
  size_t at = 0;
  while (true) {
    std::string element;
    bool quoted = false;
    if (at < body.size() && body[at] == '"') {
      quoted = true;
      ++at;
      while (true) {
        if (at >= body.size()) return Bad(text, "an array (an unterminated quote)");
        const char c = body[at++];
        if (c == '"') break;
        if (c == '\\') {
          if (at >= body.size()) return Bad(text, "an array");
          element += body[at++];
        } else {
          element += c;
        }
      }
    } else {
      while (at < body.size() && body[at] != ',') {
        if (body[at] == '{' || body[at] == '"') return Bad(text, "an array of one dimension");
        element += body[at++];
      }
    }
    if (!quoted && element == "NULL") {
      elements.emplace_back(std::nullopt);
    } else {
      elements.emplace_back(std::move(element));
    }
    if (at >= body.size()) break;
    if (body[at] != ',') return Bad(text, "an array");
    ++at;
  }
  return elements;
}

}  // namespace

Result<parquet::RowValue> ValueFromText(const std::optional<std::string_view>& text,
                                        const iceberg::Type& type) {
  parquet::RowValue value;
  if (!text) return value;
  if (type.id == TypeId::kList) {
    const iceberg::Type& element_type = type.fields.at(0).type;
    SERAC_ASSIGN_OR_RETURN(auto elements, ArrayElements(*text));
    value.elements.emplace();
    value.elements->reserve(elements.size());
    for (const auto& element : elements) {
      if (!element) {
        value.elements->emplace_back();
        continue;
      }
      SERAC_ASSIGN_OR_RETURN(iceberg::Datum datum, Primitive(*element, element_type));
      value.elements->push_back(std::move(datum));
    }
    return value;
  }
  SERAC_ASSIGN_OR_RETURN(value.datum, Primitive(*text, type));
  return value;
}

Status SplitCopyLine(std::string_view line, std::vector<std::optional<std::string>>& fields) {
  fields.clear();
  std::string field;
  bool null = false;
  for (size_t at = 0;; ++at) {
    if (at == line.size() || line[at] == '\t') {
      if (null) {
        fields.emplace_back(std::nullopt);
      } else {
        fields.emplace_back(std::move(field));
      }
      field.clear();
      null = false;
      if (at == line.size()) break;
      continue;
    }
    const char c = line[at];
    if (c != '\\') {
      field += c;
      continue;
    }
    if (++at == line.size()) return Error(ErrorCode::kInvalidArgument, "COPY row ends inside an escape");
    const char e = line[at];
    switch (e) {
      case 'N':
        if (!field.empty()) return Error(ErrorCode::kInvalidArgument, "COPY row has \\N inside a value");
        null = true;
        break;
      case 'b':
        field += '\b';
        break;
      case 'f':
        field += '\f';
        break;
      case 'n':
        field += '\n';
        break;
      case 'r':
        field += '\r';
        break;
      case 't':
        field += '\t';
        break;
      case 'v':
        field += '\v';
        break;
      case 'x': {
        int value = 0;
        int digits = 0;
        while (digits < 2 && at + 1 < line.size() && HexDigit(line[at + 1]) >= 0) {
          value = value * 16 + HexDigit(line[++at]);
          ++digits;
        }
        if (digits == 0) {
          field += 'x';
        } else {
          field += static_cast<char>(value);
        }
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int value = e - '0';
          for (int digits = 1;
               digits < 3 && at + 1 < line.size() && line[at + 1] >= '0' && line[at + 1] <= '7'; ++digits) {
            value = value * 8 + (line[++at] - '0');
          }
          field += static_cast<char>(value);
        } else {
          field += e;
        }
    }
  }
  return Status::Ok();
}

}  // namespace serac::sync
