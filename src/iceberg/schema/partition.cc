#include "iceberg/schema/partition.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "common/encoding.h"

namespace serac::iceberg {

namespace {

Status Invalid(std::string message) { return Error(ErrorCode::kInvalidArgument, std::move(message)); }

uint32_t RotateLeft(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

uint32_t Mix(uint32_t k) {
  k *= 0xcc9e2d51u;
  k = RotateLeft(k, 15);
  return k * 0x1b873593u;
}

std::string LittleEndian64(int64_t value) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((static_cast<uint64_t>(value) >> (8 * i)) & 0xFF);
  return out;
}

// ---- Decimals: unscaled values as big-endian two's complement ----

using Int128 = __int128;

Result<Int128> UnscaledFromBytes(std::string_view bytes) {
  if (bytes.empty() || bytes.size() > 16) return Invalid("a decimal needs 1 to 16 bytes");
  Int128 value = (static_cast<uint8_t>(bytes[0]) & 0x80) ? -1 : 0;
  for (char c : bytes)
    value = static_cast<Int128>((static_cast<unsigned __int128>(value) << 8) | static_cast<uint8_t>(c));
  return value;
}

// The fewest bytes that hold `value` as two's complement (Java's BigInteger.toByteArray).
std::string MinimalBytes(Int128 value) {
  std::string out;
  for (int i = 15; i >= 0; --i) {
    out.push_back(static_cast<char>((static_cast<unsigned __int128>(value) >> (8 * i)) & 0xFF));
  }
  return std::string(TrimTwosComplement(out));
}

std::string Int128ToString(Int128 value) {
  if (value == 0) return "0";
  const bool negative = value < 0;
  unsigned __int128 magnitude =
      negative ? -static_cast<unsigned __int128>(value) : static_cast<unsigned __int128>(value);
  std::string digits;
  while (magnitude > 0) {
    digits.push_back(static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  }
  if (negative) digits.push_back('-');
  return std::string(digits.rbegin(), digits.rend());
}

// A decimal's plain text with `scale` digits after the point (BigDecimal.toPlainString).
std::string DecimalText(Int128 unscaled, int32_t scale) {
  std::string digits = Int128ToString(unscaled < 0 ? -unscaled : unscaled);
  if (scale > 0) {
    if (digits.size() <= static_cast<size_t>(scale))
      digits.insert(0, static_cast<size_t>(scale) + 1 - digits.size(), '0');
    digits.insert(digits.size() - static_cast<size_t>(scale), ".");
  }
  return (unscaled < 0 ? "-" : "") + digits;
}

// ---- Calendar: days since 1970-01-01 to and from civil dates (proleptic Gregorian) ----

void CivilFromDays(int64_t days, int64_t& year, unsigned& month, unsigned& day) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const auto doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  day = doy - (153 * mp + 2) / 5 + 1;
  month = mp < 10 ? mp + 3 : mp - 9;
  year = static_cast<int64_t>(yoe) + era * 400 + (month <= 2 ? 1 : 0);
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t FloorMod(int64_t a, int64_t b) { return a - FloorDiv(a, b) * b; }

constexpr int64_t kMicrosPerDay = 86'400'000'000;
constexpr int64_t kMicrosPerHour = 3'600'000'000;

bool IsTimestamp(TypeId id) {
  return id == TypeId::kTimestamp || id == TypeId::kTimestampTz || id == TypeId::kTimestampNs ||
         id == TypeId::kTimestampTzNs;
}
bool IsNanos(TypeId id) { return id == TypeId::kTimestampNs || id == TypeId::kTimestampTzNs; }

// A date or timestamp value as microseconds since the epoch (dates at midnight).
Result<int64_t> EpochMicros(const Type& type, const Datum& value) {
  if (type.id == TypeId::kDate) {
    if (const auto* days = std::get_if<int32_t>(&value)) return static_cast<int64_t>(*days) * kMicrosPerDay;
  } else if (IsTimestamp(type.id)) {
    if (const auto* v = std::get_if<int64_t>(&value)) return IsNanos(type.id) ? FloorDiv(*v, 1000) : *v;
  }
  return Invalid("a " + type.Name() + " value of the wrong kind");
}

std::string TwoDigits(int64_t v) { return (v < 10 ? "0" : "") + std::to_string(v); }

std::string YearText(int64_t year) {
  if (year >= 0 && year <= 9999) {
    std::string text = std::to_string(year);
    return std::string(4 - text.size(), '0') + text;
  }
  return (year > 0 ? "+" : "") + std::to_string(year);
}

std::string DateText(int64_t days) {
  int64_t year;
  unsigned month, day;
  CivilFromDays(days, year, month, day);
  return YearText(year) + "-" + TwoDigits(month) + "-" + TwoDigits(day);
}

// java.time's LocalTime.toString: seconds only when not zero, the fraction in groups of three.
std::string TimeText(int64_t micros_of_day) {
  const int64_t hours = micros_of_day / kMicrosPerHour;
  const int64_t minutes = micros_of_day / 60'000'000 % 60;
  const int64_t seconds = micros_of_day / 1'000'000 % 60;
  const int64_t fraction = micros_of_day % 1'000'000;
  std::string out = TwoDigits(hours) + ":" + TwoDigits(minutes);
  if (seconds != 0 || fraction != 0) {
    out += ":" + TwoDigits(seconds);
    if (fraction != 0) {
      std::string digits = std::to_string(fraction);
      digits.insert(0, 6 - digits.size(), '0');
      if (fraction % 1000 == 0) digits.resize(3);
      out += "." + digits;
    }
  }
  return out;
}

std::string TimestampText(int64_t micros, bool with_zone) {
  const int64_t days = FloorDiv(micros, kMicrosPerDay);
  return DateText(days) + "T" + TimeText(FloorMod(micros, kMicrosPerDay)) + (with_zone ? "Z" : "");
}

std::string UuidText(std::string_view bytes) {
  std::string hex = HexEncode(bytes);
  if (hex.size() != 32) return hex;
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" + hex.substr(16, 4) + "-" +
         hex.substr(20);
}

// java.net.URLEncoder with UTF-8: letters, digits and ".-*_" stay, a space is '+', the rest %XX.
std::string UrlEncodeForm(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<uint8_t>(c);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
        c == '*' || c == '_') {
      out.push_back(c);
    } else if (c == ' ') {
      out.push_back('+');
    } else {
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xF]);
    }
  }
  return out;
}

// The value as Java's Transform.toHumanString writes it for a value of `type`.
std::string HumanValue(const Type& type, const Datum& value) {
  if (IsNull(value)) return "null";
  switch (type.id) {
    case TypeId::kDate:
      return DateText(std::get<int32_t>(value));
    case TypeId::kTime:
      return TimeText(std::get<int64_t>(value));
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      return TimestampText(std::get<int64_t>(value), type.id == TypeId::kTimestampTz);
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      return TimestampText(FloorDiv(std::get<int64_t>(value), 1000), type.id == TypeId::kTimestampTzNs);
    case TypeId::kDecimal: {
      auto unscaled = UnscaledFromBytes(std::get<std::string>(value));
      return unscaled.ok() ? DecimalText(*unscaled, type.scale) : "null";
    }
    case TypeId::kUuid:
      return UuidText(std::get<std::string>(value));
    case TypeId::kBinary:
    case TypeId::kFixed:
      return Base64Encode(std::get<std::string>(value));
    default:
      break;
  }
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (std::holds_alternative<float>(value) || std::holds_alternative<double>(value)) {
    char text[32];
    const auto written = std::holds_alternative<float>(value)
                             ? std::to_chars(text, text + sizeof(text), std::get<float>(value))
                             : std::to_chars(text, text + sizeof(text), std::get<double>(value));
    return std::string(text, written.ptr);
  }
  if (const auto* i = std::get_if<int32_t>(&value)) return std::to_string(*i);
  if (const auto* l = std::get_if<int64_t>(&value)) return std::to_string(*l);
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  return "null";
}

// The human form of a partition value that `transform` produced.
std::string HumanPartitionValue(const Transform& transform, const Type& result_type, const Datum& value) {
  if (IsNull(value)) return "null";
  switch (transform.kind()) {
    case Transform::Kind::kYear:
      return YearText(1970 + static_cast<int64_t>(std::get<int32_t>(value)));
    case Transform::Kind::kMonth: {
      const int64_t months = std::get<int32_t>(value);
      return YearText(1970 + FloorDiv(months, 12)) + "-" + TwoDigits(FloorMod(months, 12) + 1);
    }
    case Transform::Kind::kDay:
      return DateText(std::get<int32_t>(value));
    case Transform::Kind::kHour: {
      const int64_t hours = std::get<int32_t>(value);
      return DateText(FloorDiv(hours, 24)) + "-" + TwoDigits(FloorMod(hours, 24));
    }
    default:
      return HumanValue(result_type, value);
  }
}

Result<Datum> TruncateString(std::string_view text, int32_t width) {
  // Width in code points: skip UTF-8 continuation bytes.
  size_t points = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<uint8_t>(text[i]) & 0xC0) != 0x80) {
      if (points == static_cast<size_t>(width)) return Datum(std::string(text.substr(0, i)));
      ++points;
    }
  }
  return Datum(std::string(text));
}

}  // namespace

int32_t Murmur3Hash32(std::string_view bytes) {
  uint32_t h = 0;
  const size_t blocks = bytes.size() / 4;
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  for (size_t i = 0; i < blocks; ++i) {
    uint32_t k = static_cast<uint32_t>(data[4 * i]) | (static_cast<uint32_t>(data[4 * i + 1]) << 8) |
                 (static_cast<uint32_t>(data[4 * i + 2]) << 16) |
                 (static_cast<uint32_t>(data[4 * i + 3]) << 24);
    h ^= Mix(k);
    h = RotateLeft(h, 13);
    h = h * 5 + 0xe6546b64u;
  }
  uint32_t k = 0;
  const uint8_t* tail = data + 4 * blocks;
  switch (bytes.size() & 3) {
    case 3:
      k ^= static_cast<uint32_t>(tail[2]) << 16;
      [[fallthrough]];
    case 2:
      k ^= static_cast<uint32_t>(tail[1]) << 8;
      [[fallthrough]];
    case 1:
      k ^= tail[0];
      h ^= Mix(k);
      break;
    default:
      break;
  }
  h ^= static_cast<uint32_t>(bytes.size());
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return static_cast<int32_t>(h);
}

Result<int32_t> HashDatum(const Type& type, const Datum& value) {
  switch (type.id) {
    case TypeId::kInt:
    case TypeId::kDate:
      if (const auto* v = std::get_if<int32_t>(&value)) return Murmur3Hash32(LittleEndian64(*v));
      break;
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      if (const auto* v = std::get_if<int64_t>(&value)) return Murmur3Hash32(LittleEndian64(*v));
      break;
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      if (const auto* v = std::get_if<int64_t>(&value))
        return Murmur3Hash32(LittleEndian64(FloorDiv(*v, 1000)));
      break;
    case TypeId::kDecimal:
      if (const auto* v = std::get_if<std::string>(&value)) {
        SERAC_ASSIGN_OR_RETURN(Int128 unscaled, UnscaledFromBytes(*v));
        return Murmur3Hash32(MinimalBytes(unscaled));
      }
      break;
    case TypeId::kString:
    case TypeId::kUuid:
    case TypeId::kFixed:
    case TypeId::kBinary:
      if (const auto* v = std::get_if<std::string>(&value)) return Murmur3Hash32(*v);
      break;
    default:
      return Invalid("bucket does not apply to " + type.Name());
  }
  return Invalid("a " + type.Name() + " value of the wrong kind");
}

// ---- Transform ----

Result<Transform> Transform::Parse(std::string_view text) {
  const std::string lower = AsciiLower(text);
  if (lower == "identity") return Transform(Kind::kIdentity, 0);
  if (lower == "year") return Transform(Kind::kYear, 0);
  if (lower == "month") return Transform(Kind::kMonth, 0);
  if (lower == "day") return Transform(Kind::kDay, 0);
  if (lower == "hour") return Transform(Kind::kHour, 0);
  if (lower == "void") return Transform(Kind::kVoid, 0);
  for (auto [prefix, kind] : {std::pair{"bucket[", Kind::kBucket}, std::pair{"truncate[", Kind::kTruncate}}) {
    const std::string_view p(prefix);
    if (lower.size() > p.size() + 1 && lower.compare(0, p.size(), p) == 0 && lower.back() == ']') {
      const std::string digits = lower.substr(p.size(), lower.size() - p.size() - 1);
      if (digits.empty() || digits.size() > 9 ||
          digits.find_first_not_of("0123456789") != std::string::npos) {
        break;
      }
      const int32_t parameter = std::stoi(digits);
      if (parameter <= 0)
        return Invalid("transform " + std::string(text) + ": the argument must be positive");
      return Transform(kind, parameter);
    }
  }
  return Error(ErrorCode::kNotImplemented, "unsupported partition transform: " + std::string(text));
}

std::string Transform::ToString() const {
  switch (kind_) {
    case Kind::kIdentity:
      return "identity";
    case Kind::kBucket:
      return "bucket[" + std::to_string(parameter_) + "]";
    case Kind::kTruncate:
      return "truncate[" + std::to_string(parameter_) + "]";
    case Kind::kYear:
      return "year";
    case Kind::kMonth:
      return "month";
    case Kind::kDay:
      return "day";
    case Kind::kHour:
      return "hour";
    case Kind::kVoid:
      return "void";
  }
  return "void";
}

Result<Type> Transform::ResultType(const Type& source) const {
  auto refuse = [&] { return Invalid("transform " + ToString() + " does not apply to " + source.Name()); };
  Type int_type;
  int_type.id = TypeId::kInt;
  switch (kind_) {
    case Kind::kIdentity:
      if (!source.is_primitive() || source.id == TypeId::kVariant || source.id == TypeId::kGeometry ||
          source.id == TypeId::kGeography) {
        return refuse();
      }
      return source;
    case Kind::kVoid:
      return source;
    case Kind::kBucket:
      switch (source.id) {
        case TypeId::kInt:
        case TypeId::kLong:
        case TypeId::kDecimal:
        case TypeId::kDate:
        case TypeId::kTime:
        case TypeId::kTimestamp:
        case TypeId::kTimestampTz:
        case TypeId::kTimestampNs:
        case TypeId::kTimestampTzNs:
        case TypeId::kString:
        case TypeId::kUuid:
        case TypeId::kFixed:
        case TypeId::kBinary:
          return int_type;
        default:
          return refuse();
      }
    case Kind::kTruncate:
      if (source.id == TypeId::kInt || source.id == TypeId::kLong || source.id == TypeId::kDecimal ||
          source.id == TypeId::kString || source.id == TypeId::kBinary) {
        return source;
      }
      return refuse();
    case Kind::kYear:
    case Kind::kMonth:
      if (source.id == TypeId::kDate || IsTimestamp(source.id)) return int_type;
      return refuse();
    case Kind::kDay:
      if (source.id == TypeId::kDate || IsTimestamp(source.id)) {
        Type date;
        date.id = TypeId::kDate;
        return date;
      }
      return refuse();
    case Kind::kHour:
      if (IsTimestamp(source.id)) return int_type;
      return refuse();
  }
  return refuse();
}

Result<Datum> Transform::Apply(const Type& source, const Datum& value) const {
  if (kind_ == Kind::kVoid || IsNull(value)) return Datum{};
  SERAC_RETURN_IF_ERROR(ResultType(source).status());
  switch (kind_) {
    case Kind::kIdentity:
      return value;
    case Kind::kBucket: {
      SERAC_ASSIGN_OR_RETURN(int32_t hash, HashDatum(source, value));
      return Datum(static_cast<int32_t>((hash & 0x7FFFFFFF) % parameter_));
    }
    case Kind::kTruncate: {
      const int64_t width = parameter_;
      if (const auto* i = std::get_if<int32_t>(&value)) {
        return Datum(static_cast<int32_t>(*i - FloorMod(*i, width)));
      }
      if (const auto* l = std::get_if<int64_t>(&value)) {
        return Datum(static_cast<int64_t>(*l - FloorMod(*l, width)));
      }
      const auto* bytes = std::get_if<std::string>(&value);
      if (bytes == nullptr) return Invalid("a " + source.Name() + " value of the wrong kind");
      if (source.id == TypeId::kString) return TruncateString(*bytes, parameter_);
      if (source.id == TypeId::kBinary)
        return Datum(bytes->substr(0, std::min<size_t>(bytes->size(), width)));
      SERAC_ASSIGN_OR_RETURN(Int128 unscaled, UnscaledFromBytes(*bytes));
      Int128 remainder = unscaled % width;
      if (remainder < 0) remainder += width;
      const std::string truncated = MinimalBytes(unscaled - remainder);
      return Datum(truncated);
    }
    case Kind::kYear:
    case Kind::kMonth: {
      int64_t days;
      if (source.id == TypeId::kDate) {
        days = std::get<int32_t>(value);
      } else {
        SERAC_ASSIGN_OR_RETURN(int64_t micros, EpochMicros(source, value));
        days = FloorDiv(micros, kMicrosPerDay);
      }
      int64_t year;
      unsigned month, day;
      CivilFromDays(days, year, month, day);
      if (kind_ == Kind::kYear) return Datum(static_cast<int32_t>(year - 1970));
      return Datum(static_cast<int32_t>((year - 1970) * 12 + (month - 1)));
    }
    case Kind::kDay: {
      if (source.id == TypeId::kDate) return value;
      SERAC_ASSIGN_OR_RETURN(int64_t micros, EpochMicros(source, value));
      return Datum(static_cast<int32_t>(FloorDiv(micros, kMicrosPerDay)));
    }
    case Kind::kHour: {
      SERAC_ASSIGN_OR_RETURN(int64_t micros, EpochMicros(source, value));
      return Datum(static_cast<int32_t>(FloorDiv(micros, kMicrosPerHour)));
    }
    case Kind::kVoid:
      break;
  }
  return Datum{};
}

Result<Type> PartitionType(const PartitionSpec& spec, const Schema& schema) {
  Type partition;
  partition.id = TypeId::kStruct;
  for (const PartitionField& field : spec.fields) {
    SERAC_ASSIGN_OR_RETURN(Transform transform, Transform::Parse(field.transform));
    const NestedField* source =
        field.source_ids.size() == 1 ? schema.FindField(field.source_ids[0]) : nullptr;
    NestedField out;
    out.id = field.field_id;
    out.name = field.name;
    out.required = false;
    if (source != nullptr) {
      SERAC_ASSIGN_OR_RETURN(out.type, transform.ResultType(source->type));
    } else if (transform.kind() == Transform::Kind::kVoid) {
      out.type.id = TypeId::kInt;  // a dropped column's void field: the spec's "or int"
    } else {
      return Invalid(
          "partition field " + field.name + ": source column " +
          (field.source_ids.empty() ? std::string("(none)") : std::to_string(field.source_ids[0])) +
          " is not in the schema");
    }
    partition.fields.push_back(std::move(out));
  }
  return partition;
}

// ---- Single-value serialisation ----

Result<std::string> ToSingleValue(const Type& type, const Datum& value) {
  auto wrong = [&] { return Invalid("a " + type.Name() + " value of the wrong kind"); };
  switch (type.id) {
    case TypeId::kBoolean:
      if (const auto* b = std::get_if<bool>(&value)) return std::string(1, *b ? '\1' : '\0');
      return wrong();
    case TypeId::kInt:
    case TypeId::kDate:
      if (const auto* v = std::get_if<int32_t>(&value)) return LittleEndian64(*v).substr(0, 4);
      return wrong();
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      if (const auto* v = std::get_if<int64_t>(&value)) return LittleEndian64(*v);
      return wrong();
    case TypeId::kFloat:
      if (const auto* v = std::get_if<float>(&value)) {
        uint32_t bits;
        std::memcpy(&bits, v, 4);
        return LittleEndian64(bits).substr(0, 4);
      }
      return wrong();
    case TypeId::kDouble:
      if (const auto* v = std::get_if<double>(&value)) {
        int64_t bits;
        std::memcpy(&bits, v, 8);
        return LittleEndian64(bits);
      }
      return wrong();
    case TypeId::kDecimal:
      if (const auto* v = std::get_if<std::string>(&value)) {
        SERAC_ASSIGN_OR_RETURN(Int128 unscaled, UnscaledFromBytes(*v));
        return MinimalBytes(unscaled);
      }
      return wrong();
    case TypeId::kUuid:
      if (const auto* v = std::get_if<std::string>(&value); v != nullptr && v->size() == 16) return *v;
      return wrong();
    case TypeId::kFixed:
      if (const auto* v = std::get_if<std::string>(&value);
          v != nullptr && v->size() == static_cast<size_t>(type.length)) {
        return *v;
      }
      return wrong();
    case TypeId::kString:
    case TypeId::kBinary:
      if (const auto* v = std::get_if<std::string>(&value)) return *v;
      return wrong();
    default:
      return Invalid(type.Name() + " has no single-value form");
  }
}

Result<Datum> FromSingleValue(const Type& type, std::string_view bytes) {
  auto read_le = [&](size_t size) -> Result<uint64_t> {
    if (bytes.size() != size) {
      return Invalid("a " + type.Name() + " bound of " + std::to_string(bytes.size()) + " bytes");
    }
    uint64_t v = 0;
    for (size_t i = 0; i < size; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
    return v;
  };
  switch (type.id) {
    case TypeId::kBoolean: {
      SERAC_ASSIGN_OR_RETURN(uint64_t v, read_le(1));
      return Datum(v != 0);
    }
    case TypeId::kInt:
    case TypeId::kDate: {
      SERAC_ASSIGN_OR_RETURN(uint64_t v, read_le(4));
      return Datum(static_cast<int32_t>(static_cast<uint32_t>(v)));
    }
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      // Java reads a 4-byte bound of a long column written before the column was promoted from int.
      if (bytes.size() == 4) {
        SERAC_ASSIGN_OR_RETURN(uint64_t v, read_le(4));
        return Datum(static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(v))));
      }
      SERAC_ASSIGN_OR_RETURN(uint64_t v, read_le(8));
      return Datum(static_cast<int64_t>(v));
    }
    case TypeId::kFloat: {
      SERAC_ASSIGN_OR_RETURN(uint64_t v, read_le(4));
      const auto bits = static_cast<uint32_t>(v);
      float f;
      std::memcpy(&f, &bits, 4);
      return Datum(f);
    }
    case TypeId::kDouble: {
      if (bytes.size() == 4) {  // promoted from float
        SERAC_ASSIGN_OR_RETURN(uint64_t v, read_le(4));
        const auto bits = static_cast<uint32_t>(v);
        float f;
        std::memcpy(&f, &bits, 4);
        return Datum(static_cast<double>(f));
      }
      SERAC_ASSIGN_OR_RETURN(uint64_t v, read_le(8));
      double d;
      std::memcpy(&d, &v, 8);
      return Datum(d);
    }
    case TypeId::kDecimal: {
      SERAC_ASSIGN_OR_RETURN(Int128 unscaled, UnscaledFromBytes(bytes));
      return Datum(MinimalBytes(unscaled));
    }
    case TypeId::kUuid:
      if (bytes.size() != 16) return Invalid("a uuid bound of " + std::to_string(bytes.size()) + " bytes");
      return Datum(std::string(bytes));
    case TypeId::kFixed:
    case TypeId::kString:
    case TypeId::kBinary:
      return Datum(std::string(bytes));
    default:
      return Invalid(type.Name() + " has no single-value form");
  }
}

std::string DatumToText(const Type& type, const Datum& value) { return HumanValue(type, value); }

std::string_view TrimTwosComplement(std::string_view bytes) {
  size_t start = 0;
  while (start + 1 < bytes.size() &&
         ((bytes[start] == '\0' && (static_cast<uint8_t>(bytes[start + 1]) & 0x80) == 0) ||
          (bytes[start] == '\xFF' && (static_cast<uint8_t>(bytes[start + 1]) & 0x80) != 0))) {
    ++start;
  }
  return bytes.substr(start);
}

int64_t DaysFromCivil(int64_t year, int64_t month, int64_t day) {
  year -= month <= 2;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t year_of_era = year - era * 400;
  const int64_t day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  return era * 146097 + year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year - 719468;
}

std::string PartitionGroupKey(int32_t spec_id, const PartitionTuple& partition) {
  std::string key(reinterpret_cast<const char*>(&spec_id), sizeof(spec_id));
  for (const Datum& value : partition) {
    key.push_back(static_cast<char>(value.index()));
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, std::string>) {
            const uint32_t size = static_cast<uint32_t>(v.size());
            key.append(reinterpret_cast<const char*>(&size), sizeof(size));
            key.append(v);
          } else if constexpr (!std::is_same_v<V, std::monostate>) {
            key.append(reinterpret_cast<const char*>(&v), sizeof(v));
          }
        },
        value);
  }
  return key;
}

bool IsNaN(const Datum& value) {
  if (const auto* f = std::get_if<float>(&value)) return std::isnan(*f);
  if (const auto* d = std::get_if<double>(&value)) return std::isnan(*d);
  return false;
}

int CompareDatums(const Type& type, const Datum& a, const Datum& b) {
  auto three_way = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  // Float.compare / Double.compare: -0.0 below 0.0, NaN above everything.
  auto floating = [&](double x, double y) {
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) ? (std::isnan(y) ? 0 : 1) : -1;
    if (x == y && x == 0) return three_way(std::signbit(y), std::signbit(x));
    return three_way(x, y);
  };
  if (a.index() != b.index()) return three_way(a.index(), b.index());
  if (type.id == TypeId::kDecimal) {
    auto x = UnscaledFromBytes(std::get<std::string>(a));
    auto y = UnscaledFromBytes(std::get<std::string>(b));
    if (x.ok() && y.ok()) return three_way(*x, *y);
  }
  return std::visit(
      [&](const auto& x) -> int {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b);
        if constexpr (std::is_same_v<T, std::monostate>) {
          return 0;
        } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
          return floating(x, y);
        } else if constexpr (std::is_same_v<T, std::string>) {
          const int c = std::memcmp(x.data(), y.data(), std::min(x.size(), y.size()));
          return c != 0 ? (c < 0 ? -1 : 1) : three_way(x.size(), y.size());
        } else {
          return three_way(x, y);
        }
      },
      a);
}

namespace {

// name=value/name=value with each name and value passed through `encode`.
template <typename Encode>
std::string JoinPartition(const PartitionSpec& spec, const Type& partition_type, const PartitionTuple& tuple,
                          Encode encode) {
  std::string path;
  for (size_t i = 0; i < spec.fields.size() && i < tuple.size() && i < partition_type.fields.size(); ++i) {
    auto transform = Transform::Parse(spec.fields[i].transform);
    if (!path.empty()) path.push_back('/');
    const std::string value = transform.ok()
                                  ? HumanPartitionValue(*transform, partition_type.fields[i].type, tuple[i])
                                  : HumanValue(partition_type.fields[i].type, tuple[i]);
    path += encode(spec.fields[i].name) + "=" + encode(value);
  }
  return path;
}

}  // namespace

std::string PartitionPath(const PartitionSpec& spec, const Type& partition_type,
                          const PartitionTuple& tuple) {
  return JoinPartition(spec, partition_type, tuple,
                       [](std::string_view text) { return UrlEncodeForm(text); });
}

std::string PartitionText(const PartitionSpec& spec, const Type& partition_type,
                          const PartitionTuple& tuple) {
  return JoinPartition(spec, partition_type, tuple, [](std::string_view text) { return std::string(text); });
}

Result<PartitionField> MakePartitionField(const Schema& schema, const std::string& column,
                                          std::string transform, int32_t field_id) {
  for (const char* plural : {"years", "months", "days", "hours"}) {
    if (transform == plural) transform.pop_back();
  }
  const NestedField* source = nullptr;
  for (const NestedField& field : schema.fields) {
    if (field.name == column) source = &field;
  }
  if (source == nullptr)
    return Error(ErrorCode::kInvalidArgument, "partition by " + column + ": no such column");
  SERAC_ASSIGN_OR_RETURN(Transform parsed, Transform::Parse(transform));
  Result<Type> result = parsed.ResultType(source->type);
  if (!result.ok()) {
    return Error(ErrorCode::kInvalidArgument,
                 "partition by " + transform + "(" + column + "): " + result.status().message());
  }
  std::string suffix;
  if (transform.rfind("bucket[", 0) == 0) {
    suffix = "_bucket";
  } else if (transform.rfind("truncate[", 0) == 0) {
    suffix = "_trunc";
  } else if (transform == "void") {
    suffix = "_null";
  } else if (transform != "identity") {
    suffix = "_" + transform;
  }
  PartitionField field;
  field.source_ids = {source->id};
  field.field_id = field_id;
  field.name = column + suffix;
  field.transform = transform;
  return field;
}

}  // namespace serac::iceberg
