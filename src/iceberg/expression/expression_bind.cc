// Binding an expression to a schema: columns to field ids, literals converted exactly to the
// column's type (as Java's Literal.to conversions, a little more lenient where nothing can be
// lost: a timestamp without an offset for timestamptz is UTC), and NOT pushed down to the
// predicates as Java's RewriteNot does.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "common/encoding.h"
#include "iceberg/expression/expression.h"

namespace serac::iceberg {
namespace {

Status Invalid(const std::string& message) { return Error(ErrorCode::kInvalidArgument, message); }

// The field at `dotted` compared without letter case; nullptr when none or more than one match.
const NestedField* FindFieldIgnoringCase(const std::vector<NestedField>& fields, std::string_view dotted) {
  const NestedField* found = nullptr;
  for (const NestedField& field : fields) {
    const std::string name = AsciiLower(field.name);
    const std::string wanted = AsciiLower(dotted);
    const NestedField* match = nullptr;
    if (wanted == name) {
      match = &field;
    } else if (wanted.size() > name.size() && wanted.compare(0, name.size(), name) == 0 &&
               wanted[name.size()] == '.') {
      match = FindFieldIgnoringCase(field.type.fields, dotted.substr(name.size() + 1));
    }
    if (match) {
      if (found && found != match) return nullptr;  // ambiguous
      found = match;
    }
  }
  return found;
}

bool ParseInt64(std::string_view text, int64_t& out) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

// Parses exactly `count` digits at `pos`.
bool Digits(std::string_view text, size_t& pos, size_t count, int64_t& out) {
  if (text.size() - pos < count) return false;
  out = 0;
  for (size_t i = 0; i < count; ++i) {
    const char c = text[pos + i];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    out = out * 10 + (c - '0');
  }
  pos += count;
  return true;
}

bool ParseDate(std::string_view text, size_t& pos, int64_t& days) {
  int64_t year = 0, month = 0, day = 0;
  if (!Digits(text, pos, 4, year) || pos >= text.size() || text[pos++] != '-' ||
      !Digits(text, pos, 2, month) || pos >= text.size() || text[pos++] != '-' ||
      !Digits(text, pos, 2, day)) {
    return false;
  }
  if (month < 1 || month > 12 || day < 1) return false;
  const int64_t next_month_days =
      month == 12 ? DaysFromCivil(year + 1, 1, 1) : DaysFromCivil(year, month + 1, 1);
  days = DaysFromCivil(year, month, day);
  return days < next_month_days;
}

// HH:MM[:SS[.fraction]] as units of 10^-digits seconds (digits 6: micros, 9: nanos).
bool ParseTime(std::string_view text, size_t& pos, int digits, int64_t& out) {
  int64_t hour = 0, minute = 0, second = 0;
  if (!Digits(text, pos, 2, hour) || pos >= text.size() || text[pos++] != ':' ||
      !Digits(text, pos, 2, minute)) {
    return false;
  }
  int64_t fraction = 0;
  if (pos < text.size() && text[pos] == ':') {
    ++pos;
    if (!Digits(text, pos, 2, second)) return false;
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      int count = 0;
      while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
        if (count == digits) return false;  // more precision than the type keeps
        fraction = fraction * 10 + (text[pos++] - '0');
        ++count;
      }
      if (count == 0) return false;
      for (; count < digits; ++count) fraction *= 10;
    }
  }
  if (hour > 23 || minute > 59 || second > 59) return false;
  int64_t unit = 1;
  for (int i = 0; i < digits; ++i) unit *= 10;
  out = ((hour * 60 + minute) * 60 + second) * unit + fraction;
  return true;
}

// A timestamp in units of 10^-digits seconds; an offset ("Z", "+02:00") only when `with_zone`.
bool ParseTimestamp(std::string_view text, int digits, bool with_zone, int64_t& out) {
  size_t pos = 0;
  int64_t days = 0;
  if (!ParseDate(text, pos, days)) return false;
  int64_t unit = 1;
  for (int i = 0; i < digits; ++i) unit *= 10;
  int64_t time = 0;
  if (pos < text.size() && (text[pos] == 'T' || text[pos] == ' ')) {
    ++pos;
    if (!ParseTime(text, pos, digits, time)) return false;
  }
  int64_t offset_seconds = 0;
  if (pos < text.size()) {
    if (!with_zone) return false;
    if (text[pos] == 'Z' && pos + 1 == text.size()) {
      ++pos;
    } else if (text[pos] == '+' || text[pos] == '-') {
      const int64_t sign = text[pos++] == '-' ? -1 : 1;
      int64_t hours = 0, minutes = 0;
      if (!Digits(text, pos, 2, hours) || pos >= text.size() || text[pos++] != ':' ||
          !Digits(text, pos, 2, minutes)) {
        return false;
      }
      offset_seconds = sign * (hours * 3600 + minutes * 60);
    } else {
      return false;
    }
  }
  if (pos != text.size()) return false;
  __int128 value =
      static_cast<__int128>(days) * 86400 * unit + time - static_cast<__int128>(offset_seconds) * unit;
  if (value > INT64_MAX || value < INT64_MIN) return false;
  out = static_cast<int64_t>(value);
  return true;
}

// A decimal's text ("-12.30", "1e3") as its unscaled value at `scale`, refused when digits would
// be lost or the precision exceeded.
bool ParseDecimal(std::string_view text, int32_t precision, int32_t scale, std::string& big_endian) {
  size_t pos = 0;
  bool negative = false;
  if (pos < text.size() && (text[pos] == '-' || text[pos] == '+')) negative = text[pos++] == '-';
  std::string digits;
  int64_t fraction_digits = 0;
  bool seen_point = false;
  for (; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits += c;
      fraction_digits += seen_point;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (digits.empty()) return false;
  if (pos < text.size()) {
    if (text[pos] != 'e' && text[pos] != 'E') return false;
    int64_t exponent = 0;
    if (!ParseInt64(text.substr(pos + 1), exponent) || exponent > 100 || exponent < -100) return false;
    fraction_digits -= exponent;
  }
  // Rescale to `scale`: drop only zeros, append zeros.
  while (fraction_digits > scale) {
    if (digits.back() != '0') return false;
    digits.pop_back();
    --fraction_digits;
    if (digits.empty()) digits = "0";
  }
  for (; fraction_digits < scale; ++fraction_digits) digits += '0';
  const size_t first = digits.find_first_not_of('0');
  digits = first == std::string::npos ? "0" : digits.substr(first);
  if (static_cast<int64_t>(digits.size()) > precision || digits.size() > 38) return false;
  __int128 unscaled = 0;
  for (char c : digits) unscaled = unscaled * 10 + (c - '0');
  if (negative) unscaled = -unscaled;
  std::string bytes(16, '\0');
  for (int i = 15; i >= 0; --i) {
    bytes[static_cast<size_t>(i)] = static_cast<char>(static_cast<unsigned __int128>(unscaled) & 0xff);
    unscaled >>= 8;
  }
  big_endian = std::string(TrimTwosComplement(bytes));
  return true;
}

bool ParseUuid(std::string_view text, std::string& bytes) {
  if (text.size() != 36) return false;
  std::string hex;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return false;
    } else {
      hex += text[i];
    }
  }
  auto decoded = HexDecode(hex);
  if (!decoded) return false;
  bytes = std::move(*decoded);
  return true;
}

Result<Datum> Convert(const ExprLiteral& literal, const NestedField& field, const std::string& column) {
  using Kind = ExprLiteral::Kind;
  const Type& type = field.type;
  auto refuse = [&]() -> Status {
    const char* what = literal.kind == Kind::kString   ? "string"
                       : literal.kind == Kind::kNumber ? "number"
                                                       : "boolean";
    return Invalid("filter: cannot compare " + column + " (" + type.Name() + ") with the " + what + " " +
                   (literal.kind == Kind::kString ? "'" + literal.text + "'" : literal.text));
  };
  const bool number = literal.kind == Kind::kNumber;
  const bool string = literal.kind == Kind::kString;
  int64_t integer = 0;
  switch (type.id) {
    case TypeId::kBoolean:
      if (literal.kind == Kind::kBoolean ||
          (string && (AsciiLower(literal.text) == "true" || AsciiLower(literal.text) == "false"))) {
        return Datum(AsciiLower(literal.text) == "true");
      }
      return refuse();
    case TypeId::kInt:
      if (number && ParseInt64(literal.text, integer) && integer >= INT32_MIN && integer <= INT32_MAX) {
        return Datum(static_cast<int32_t>(integer));
      }
      return refuse();
    case TypeId::kLong:
      if (number && ParseInt64(literal.text, integer)) return Datum(integer);
      return refuse();
    case TypeId::kFloat:
    case TypeId::kDouble: {
      if (!number) return refuse();
      char* end = nullptr;
      const double value = std::strtod(literal.text.c_str(), &end);
      if (end != literal.text.c_str() + literal.text.size() || !std::isfinite(value)) return refuse();
      if (type.id == TypeId::kFloat) return Datum(static_cast<float>(value));
      return Datum(value);
    }
    case TypeId::kDecimal: {
      std::string unscaled;
      if ((number || string) && ParseDecimal(literal.text, type.precision, type.scale, unscaled)) {
        return Datum(std::move(unscaled));
      }
      return refuse();
    }
    case TypeId::kDate: {
      size_t pos = 0;
      int64_t days = 0;
      if (string && ParseDate(literal.text, pos, days) && pos == literal.text.size()) {
        return Datum(static_cast<int32_t>(days));
      }
      if (number && ParseInt64(literal.text, integer) && integer >= INT32_MIN && integer <= INT32_MAX) {
        return Datum(static_cast<int32_t>(integer));
      }
      return refuse();
    }
    case TypeId::kTime: {
      size_t pos = 0;
      int64_t micros = 0;
      if (string && ParseTime(literal.text, pos, 6, micros) && pos == literal.text.size())
        return Datum(micros);
      if (number && ParseInt64(literal.text, integer)) return Datum(integer);
      return refuse();
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      const bool nanos = type.id == TypeId::kTimestampNs || type.id == TypeId::kTimestampTzNs;
      const bool zoned = type.id == TypeId::kTimestampTz || type.id == TypeId::kTimestampTzNs;
      int64_t value = 0;
      if (string && ParseTimestamp(literal.text, nanos ? 9 : 6, zoned, value)) return Datum(value);
      if (number && ParseInt64(literal.text, integer)) return Datum(integer);
      return refuse();
    }
    case TypeId::kString:
      if (string) return Datum(literal.text);
      return refuse();
    case TypeId::kUuid: {
      std::string bytes;
      if (string && ParseUuid(literal.text, bytes)) return Datum(std::move(bytes));
      return refuse();
    }
    case TypeId::kFixed:
    case TypeId::kBinary: {
      // Hexadecimal, as the REST spec writes binary values.
      auto bytes = string ? HexDecode(literal.text) : std::nullopt;
      if (bytes && (type.id == TypeId::kBinary || static_cast<int32_t>(bytes->size()) == type.length)) {
        return Datum(std::move(*bytes));
      }
      return refuse();
    }
    default:
      return Invalid("filter: cannot filter on " + column + " of type " + type.Name());
  }
}

ExprOp Negated(ExprOp op) {
  switch (op) {
    case ExprOp::kTrue:
      return ExprOp::kFalse;
    case ExprOp::kFalse:
      return ExprOp::kTrue;
    case ExprOp::kAnd:
      return ExprOp::kOr;
    case ExprOp::kOr:
      return ExprOp::kAnd;
    case ExprOp::kIsNull:
      return ExprOp::kNotNull;
    case ExprOp::kNotNull:
      return ExprOp::kIsNull;
    case ExprOp::kIsNan:
      return ExprOp::kNotNan;
    case ExprOp::kNotNan:
      return ExprOp::kIsNan;
    case ExprOp::kLt:
      return ExprOp::kGtEq;
    case ExprOp::kLtEq:
      return ExprOp::kGt;
    case ExprOp::kGt:
      return ExprOp::kLtEq;
    case ExprOp::kGtEq:
      return ExprOp::kLt;
    case ExprOp::kEq:
      return ExprOp::kNotEq;
    case ExprOp::kNotEq:
      return ExprOp::kEq;
    case ExprOp::kStartsWith:
      return ExprOp::kNotStartsWith;
    case ExprOp::kNotStartsWith:
      return ExprOp::kStartsWith;
    case ExprOp::kIn:
      return ExprOp::kNotIn;
    case ExprOp::kNotIn:
      return ExprOp::kIn;
    case ExprOp::kNot:
      return ExprOp::kNot;
  }
  return op;
}

Result<BoundExpression> Bind(const Expression& expression, const Schema& schema, bool case_sensitive,
                             bool negate) {
  BoundExpression out;
  switch (expression.op) {
    case ExprOp::kNot:
      if (expression.children.size() != 1) return Invalid("filter: NOT takes one expression");
      return Bind(expression.children[0], schema, case_sensitive, !negate);
    case ExprOp::kTrue:
    case ExprOp::kFalse:
      out.op = negate ? Negated(expression.op) : expression.op;
      return out;
    case ExprOp::kAnd:
    case ExprOp::kOr:
      if (expression.children.size() != 2) return Invalid("filter: AND and OR take two expressions");
      out.op = negate ? Negated(expression.op) : expression.op;
      for (const Expression& child : expression.children) {
        SERAC_ASSIGN_OR_RETURN(BoundExpression bound, Bind(child, schema, case_sensitive, negate));
        out.children.push_back(std::move(bound));
      }
      return out;
    default:
      break;
  }
  const NestedField* field = FindColumn(schema, expression.column, case_sensitive);
  if (!field) return Invalid("filter: no column " + expression.column + " in the table's schema");
  if (!field->type.is_primitive()) {
    return Invalid("filter: " + expression.column + " is a " + field->type.Name() +
                   ", not a value to compare");
  }
  out.op = negate ? Negated(expression.op) : expression.op;
  out.field_id = field->id;
  out.type = field->type;
  const bool floating = field->type.id == TypeId::kFloat || field->type.id == TypeId::kDouble;
  if ((out.op == ExprOp::kIsNan || out.op == ExprOp::kNotNan) && !floating) {
    return Invalid("filter: IS NAN applies to float and double columns, not to " + expression.column + " (" +
                   field->type.Name() + ")");
  }
  if ((out.op == ExprOp::kStartsWith || out.op == ExprOp::kNotStartsWith) &&
      field->type.id != TypeId::kString) {
    return Invalid("filter: LIKE applies to string columns, not to " + expression.column + " (" +
                   field->type.Name() + ")");
  }
  const bool set = out.op == ExprOp::kIn || out.op == ExprOp::kNotIn;
  const bool unary = out.op == ExprOp::kIsNull || out.op == ExprOp::kNotNull || out.op == ExprOp::kIsNan ||
                     out.op == ExprOp::kNotNan;
  if (unary ? !expression.literals.empty()
      : set ? expression.literals.empty()
            : expression.literals.size() != 1) {
    return Invalid("filter: wrong number of values for " + expression.ToString());
  }
  for (const ExprLiteral& literal : expression.literals) {
    SERAC_ASSIGN_OR_RETURN(Datum value, Convert(literal, *field, expression.column));
    out.values.push_back(std::move(value));
  }
  return out;
}

}  // namespace

Result<Datum> ConvertLiteral(const ExprLiteral& literal, const NestedField& field,
                             const std::string& column) {
  return Convert(literal, field, column);
}

const NestedField* FindColumn(const Schema& schema, std::string_view dotted_name, bool case_sensitive) {
  return case_sensitive ? schema.FindFieldByName(dotted_name)
                        : FindFieldIgnoringCase(schema.fields, dotted_name);
}

Result<BoundExpression> BindExpression(const Expression& expression, const Schema& schema,
                                       bool case_sensitive) {
  return Bind(expression, schema, case_sensitive, false);
}

}  // namespace serac::iceberg
