// COPY's binary rows, per column: the type's binary form decoded into the builder, or its text.
#include "sync/pg_binary.h"

#include <cstring>
#include <limits>

#include "sync/pg_values.h"

namespace serac::sync {
namespace {

using iceberg::TypeId;

constexpr std::string_view kSignature("PGCOPY\n\377\r\n\0", 11);
constexpr int64_t kPostgresEpochDays = 10957;  // 2000-01-01 in days since 1970-01-01
constexpr int64_t kPostgresEpochMicros = 946'684'800'000'000;

uint16_t Be16(const char* p) {
  return static_cast<uint16_t>(static_cast<uint8_t>(p[0]) << 8 | static_cast<uint8_t>(p[1]));
}
uint32_t Be32(const char* p) { return static_cast<uint32_t>(Be16(p)) << 16 | Be16(p + 2); }
uint64_t Be64(const char* p) { return static_cast<uint64_t>(Be32(p)) << 32 | Be32(p + 4); }

Status Short(const std::string& column) {
  return Error(ErrorCode::kInvalidArgument, "column " + column + ": a binary value of the wrong length");
}

// The unscaled value of a numeric's binary form in decimal(precision, scale); kInvalidArgument for
// NaN, infinities and values with more fraction digits than the scale or more integer digits than
// precision - scale. The form is base-10000 groups, the first standing for 10000^weight, so the
// decimal point falls 4 * (weight + 1) digits into them; the last group is padded with zeros on
// the right, which is why the digits are taken one at a time and only up to the scale: the padding
// never enters the value, and no intermediate exceeds the precision.
Result<__int128> NumericUnscaled(std::string_view value, int32_t precision, int32_t scale,
                                 const std::string& column) {
  if (value.size() < 8) return Short(column);
  const uint16_t ndigits = Be16(value.data());
  const auto weight = static_cast<int16_t>(Be16(value.data() + 2));
  const uint16_t sign = Be16(value.data() + 4);
  if (value.size() != 8 + 2 * static_cast<size_t>(ndigits)) return Short(column);
  if (sign == 0xC000 || sign == 0xD000 || sign == 0xF000) {
    return Error(
        ErrorCode::kInvalidArgument,
        "column " + column + ": " + (sign == 0xC000 ? "NaN" : "an infinity") + " has no Iceberg decimal");
  }
  if (sign != 0x0000 && sign != 0x4000) {
    return Error(ErrorCode::kInvalidArgument, "column " + column + ": a numeric of unknown sign");
  }
  const int64_t point = 4 * (static_cast<int64_t>(weight) + 1);  // digits before the decimal point
  const int64_t end = point + scale;                             // digits that make the unscaled value
  const auto too_many_digits = [&] {
    return Error(ErrorCode::kInvalidArgument, "column " + column + ": more integer digits than decimal(" +
                                                  std::to_string(precision) + ", " + std::to_string(scale) +
                                                  ") holds");
  };
  __int128 unscaled = 0;
  int32_t significant = 0;
  const auto append = [&](int digit) {
    if (unscaled == 0 && digit == 0) return true;  // a leading zero
    if (++significant > precision) return false;
    unscaled = unscaled * 10 + digit;
    return true;
  };
  const int64_t digits = 4 * static_cast<int64_t>(ndigits);
  for (int64_t position = 0; position < digits; ++position) {
    const uint16_t group = Be16(value.data() + 8 + 2 * (position / 4));
    if (group > 9999) return Error(ErrorCode::kInvalidArgument, "column " + column + ": a malformed numeric");
    static constexpr int kPlace[4] = {1000, 100, 10, 1};
    const int digit = group / kPlace[position % 4] % 10;
    if (position < end) {
      if (!append(digit)) return too_many_digits();
    } else if (digit != 0) {
      return Error(ErrorCode::kInvalidArgument,
                   "column " + column + ": more fraction digits than the scale " + std::to_string(scale));
    }
  }
  // The zeros between the last group and the scale's last digit (none for a zero value).
  for (int64_t position = std::max<int64_t>(digits, 0); position < end && unscaled != 0; ++position) {
    if (!append(0)) return too_many_digits();
  }
  return sign == 0x4000 ? -unscaled : unscaled;
}

}  // namespace

CopyBinaryRows::CopyBinaryRows(std::vector<LoadColumn> columns) : columns_(std::move(columns)) {
  for (const LoadColumn& column : columns_) {
    const PgType& pg = column.type;
    // A domain over a base type is sent in its base type's form.
    const std::string base = pg.category == 'A'                              ? ""
                             : pg.type_kind == 'd' && pg.element_kind == 'b' ? pg.element_name
                             : pg.type_kind == 'b'                           ? pg.name
                                                                             : "";
    const TypeId to = column.field_type.id;
    Kind kind = Kind::kText;
    if (base == "bool" && to == TypeId::kBoolean) kind = Kind::kBool;
    if (base == "int2" && (to == TypeId::kInt || to == TypeId::kLong)) kind = Kind::kInt2;
    if (base == "int4" && (to == TypeId::kInt || to == TypeId::kLong)) kind = Kind::kInt4;
    if (base == "int8" && to == TypeId::kLong) kind = Kind::kInt8;
    if (base == "float4" && (to == TypeId::kFloat || to == TypeId::kDouble)) kind = Kind::kFloat4;
    if (base == "float8" && to == TypeId::kDouble) kind = Kind::kFloat8;
    if (base == "date" && to == TypeId::kDate) kind = Kind::kDate;
    if (base == "time" && to == TypeId::kTime) kind = Kind::kTime;
    if ((base == "timestamp" && to == TypeId::kTimestamp) ||
        (base == "timestamptz" && to == TypeId::kTimestampTz)) {
      kind = Kind::kTimestamp;
    }
    if (base == "numeric" && to == TypeId::kDecimal) kind = Kind::kNumeric;
    if (base == "money" && to == TypeId::kDecimal) kind = Kind::kMoney;
    if (base == "uuid" && to == TypeId::kUuid) kind = Kind::kUuid;
    if (base == "bytea" && to == TypeId::kBinary) kind = Kind::kBytes;
    if ((base == "text" || base == "varchar" || base == "bpchar" || base == "name") &&
        to == TypeId::kString) {
      kind = Kind::kBytes;
    }
    kinds_.push_back(kind);
  }
}

std::string CopyBinaryRows::SelectList() const {
  std::string list;
  for (size_t i = 0; i < columns_.size(); ++i) {
    std::string quoted = "\"";
    for (char c : columns_[i].name) {
      if (c == '"') quoted += '"';
      quoted += c;
    }
    quoted += '"';
    if (!columns_[i].expression.empty()) quoted = columns_[i].expression;
    // The text of a column read as text is its type's output function's, as COPY's text format and
    // pgoutput send it (format's %s): a ::text cast differs for some types (inet keeps its mask).
    list += (i ? ", " : "") +
            (kinds_[i] == Kind::kText
                 ? "CASE WHEN " + quoted + " IS NULL THEN NULL ELSE format('%s', " + quoted + ") END"
                 : quoted);
  }
  return list;
}

Status CopyBinaryRows::Read(std::string_view buffer, parquet::RowBatchBuilder& rows, bool& row_done) {
  row_done = false;
  if (!header_read_) {
    if (buffer.size() < kSignature.size() + 8 || buffer.substr(0, kSignature.size()) != kSignature) {
      return Error(ErrorCode::kInvalidArgument, "COPY binary: no file header");
    }
    const uint32_t extension = Be32(buffer.data() + kSignature.size() + 4);
    const size_t header = kSignature.size() + 8 + extension;
    if (buffer.size() < header) return Error(ErrorCode::kInvalidArgument, "COPY binary: a cut header");
    buffer.remove_prefix(header);
    header_read_ = true;
    if (buffer.empty()) return Status::Ok();
  }
  if (buffer.size() < 2) return Error(ErrorCode::kInvalidArgument, "COPY binary: a cut row");
  const auto count = static_cast<int16_t>(Be16(buffer.data()));
  if (count == -1) return Status::Ok();  // the trailer
  if (count != static_cast<int16_t>(columns_.size())) {
    return Error(ErrorCode::kInvalidArgument, "COPY binary: a row of " + std::to_string(count) +
                                                  " columns for " + std::to_string(columns_.size()));
  }
  size_t at = 2;
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (buffer.size() < at + 4) return Error(ErrorCode::kInvalidArgument, "COPY binary: a cut row");
    const auto length = static_cast<int32_t>(Be32(buffer.data() + at));
    at += 4;
    if (length < 0) {
      rows.AppendNull(columns_[c].field);
      continue;
    }
    if (buffer.size() < at + static_cast<size_t>(length)) {
      return Error(ErrorCode::kInvalidArgument, "COPY binary: a cut row");
    }
    SERAC_RETURN_IF_ERROR(Decode(c, buffer.substr(at, static_cast<size_t>(length)), rows));
    at += static_cast<size_t>(length);
  }
  rows.EndRow();
  row_done = true;
  return Status::Ok();
}

Status CopyBinaryRows::Decode(size_t column, std::string_view value, parquet::RowBatchBuilder& rows) {
  const LoadColumn& target = columns_[column];
  const size_t field = target.field;
  auto expect = [&](size_t size) { return value.size() == size ? Status::Ok() : Short(target.name); };
  switch (kinds_[column]) {
    case Kind::kBool:
      SERAC_RETURN_IF_ERROR(expect(1));
      rows.AppendBool(field, value[0] != 0);
      return Status::Ok();
    case Kind::kInt2:
      SERAC_RETURN_IF_ERROR(expect(2));
      rows.AppendInt(field, static_cast<int16_t>(Be16(value.data())));
      return Status::Ok();
    case Kind::kInt4:
      SERAC_RETURN_IF_ERROR(expect(4));
      rows.AppendInt(field, static_cast<int32_t>(Be32(value.data())));
      return Status::Ok();
    case Kind::kInt8:
      SERAC_RETURN_IF_ERROR(expect(8));
      rows.AppendLong(field, static_cast<int64_t>(Be64(value.data())));
      return Status::Ok();
    case Kind::kFloat4: {
      SERAC_RETURN_IF_ERROR(expect(4));
      const uint32_t bits = Be32(value.data());
      float number;
      std::memcpy(&number, &bits, sizeof(number));
      rows.AppendFloat(field, number);
      return Status::Ok();
    }
    case Kind::kFloat8: {
      SERAC_RETURN_IF_ERROR(expect(8));
      const uint64_t bits = Be64(value.data());
      double number;
      std::memcpy(&number, &bits, sizeof(number));
      rows.AppendDouble(field, number);
      return Status::Ok();
    }
    case Kind::kDate: {
      SERAC_RETURN_IF_ERROR(expect(4));
      const auto days = static_cast<int32_t>(Be32(value.data()));
      if (days == std::numeric_limits<int32_t>::max() || days == std::numeric_limits<int32_t>::min()) {
        return Error(ErrorCode::kInvalidArgument,
                     "column " + target.name + ": \"infinity\" has no Iceberg date");
      }
      const int64_t unix_days = days + kPostgresEpochDays;
      if (unix_days > std::numeric_limits<int32_t>::max()) {
        return Error(ErrorCode::kInvalidArgument, "column " + target.name + ": a date beyond Iceberg's");
      }
      rows.AppendInt(field, static_cast<int32_t>(unix_days));
      return Status::Ok();
    }
    case Kind::kTime:
      SERAC_RETURN_IF_ERROR(expect(8));
      rows.AppendLong(field, static_cast<int64_t>(Be64(value.data())));
      return Status::Ok();
    case Kind::kTimestamp: {
      SERAC_RETURN_IF_ERROR(expect(8));
      const auto micros = static_cast<int64_t>(Be64(value.data()));
      if (micros == std::numeric_limits<int64_t>::max() || micros == std::numeric_limits<int64_t>::min()) {
        return Error(ErrorCode::kInvalidArgument,
                     "column " + target.name + ": \"infinity\" has no Iceberg timestamp");
      }
      int64_t unix_micros = 0;
      if (__builtin_add_overflow(micros, kPostgresEpochMicros, &unix_micros)) {
        return Error(ErrorCode::kInvalidArgument, "column " + target.name + ": a timestamp beyond Iceberg's");
      }
      rows.AppendLong(field, unix_micros);
      return Status::Ok();
    }
    case Kind::kNumeric: {
      SERAC_ASSIGN_OR_RETURN(__int128 unscaled, NumericUnscaled(value, target.field_type.precision,
                                                                target.field_type.scale, target.name));
      rows.AppendDecimal(field, unscaled);
      return Status::Ok();
    }
    case Kind::kMoney: {
      SERAC_RETURN_IF_ERROR(expect(8));
      __int128 cents = static_cast<int64_t>(Be64(value.data()));
      for (int32_t scale = 2; scale < target.field_type.scale; ++scale) {
        if (__builtin_mul_overflow(cents, __int128{10}, &cents)) {
          return Error(ErrorCode::kInvalidArgument, "column " + target.name + ": over 38 digits");
        }
      }
      for (int32_t scale = 2; scale > target.field_type.scale; --scale) {
        if (cents % 10 != 0)
          return Error(ErrorCode::kInvalidArgument, "column " + target.name + ": cents lost");
        cents /= 10;
      }
      rows.AppendDecimal(field, cents);
      return Status::Ok();
    }
    case Kind::kUuid:
      SERAC_RETURN_IF_ERROR(expect(16));
      rows.AppendBytes(field, value);
      return Status::Ok();
    case Kind::kBytes:
      rows.AppendBytes(field, value);
      return Status::Ok();
    case Kind::kText: {
      Result<parquet::RowValue> read = ValueFromText(value, target.field_type);
      if (!read.ok()) {
        return Error(read.status().code(), "column " + target.name + ": " + read.status().message());
      }
      rows.AppendValue(field, *read);
      return Status::Ok();
    }
  }
  return Status::Ok();
}

}  // namespace serac::sync
