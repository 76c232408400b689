#include "sync/pg_values.h"

#include <gtest/gtest.h>

#include <cmath>

#include "iceberg/schema/partition.h"

namespace serac::sync {
namespace {

iceberg::Type Of(iceberg::TypeId id, int32_t precision = 0, int32_t scale = 0) {
  iceberg::Type type;
  type.id = id;
  type.precision = precision;
  type.scale = scale;
  return type;
}

iceberg::Datum Read(std::string_view text, const iceberg::Type& type) {
  Result<parquet::RowValue> value = ValueFromText(text, type);
  EXPECT_TRUE(value.ok()) << text << ": " << value.status().message();
  return value.ok() ? value->datum : iceberg::Datum();
}

std::string Shown(std::string_view text, const iceberg::Type& type) {
  return iceberg::DatumToText(type, Read(text, type));
}

TEST(PgValuesTest, ReadsEachTypesText) {
  using iceberg::TypeId;
  EXPECT_EQ(std::get<bool>(Read("t", Of(TypeId::kBoolean))), true);
  EXPECT_EQ(std::get<int32_t>(Read("-32768", Of(TypeId::kInt))), -32768);
  EXPECT_EQ(std::get<int64_t>(Read("9223372036854775807", Of(TypeId::kLong))), INT64_MAX);
  EXPECT_EQ(std::get<double>(Read("0.30000000000000004", Of(TypeId::kDouble))), 0.1 + 0.2);
  EXPECT_TRUE(std::isnan(std::get<float>(Read("NaN", Of(TypeId::kFloat)))));
  EXPECT_EQ(std::get<double>(Read("-Infinity", Of(TypeId::kDouble))), -INFINITY);
  EXPECT_EQ(Shown("-123.45", Of(TypeId::kDecimal, 10, 2)), "-123.45");
  EXPECT_EQ(Shown("0.5", Of(TypeId::kDecimal, 10, 3)), "0.500");
  EXPECT_EQ(Shown("99999999999999999999999999999999999999", Of(TypeId::kDecimal, 38, 0)),
            "99999999999999999999999999999999999999");
  EXPECT_EQ(Shown("-$1,234.56", Of(TypeId::kDecimal, 19, 2)), "-1234.56");
  EXPECT_EQ(Shown("2024-02-29", Of(TypeId::kDate)), "2024-02-29");
  EXPECT_EQ(std::get<int32_t>(Read("1970-01-02", Of(TypeId::kDate))), 1);
  EXPECT_EQ(std::get<int32_t>(Read("0001-12-31 BC", Of(TypeId::kDate))), iceberg::DaysFromCivil(0, 12, 31));
  EXPECT_EQ(std::get<int64_t>(Read("13:45:01.5", Of(TypeId::kTime))),
            (13 * 3600 + 45 * 60 + 1) * 1000000LL + 500000);
  EXPECT_EQ(std::get<int64_t>(Read("1970-01-01 00:00:01.000001", Of(TypeId::kTimestamp))), 1000001);
  EXPECT_EQ(std::get<int64_t>(Read("1970-01-01 01:00:00+01", Of(TypeId::kTimestampTz))), 0);
  EXPECT_EQ(std::get<int64_t>(Read("1969-12-31 19:00:00-05", Of(TypeId::kTimestampTz))), 0);
  EXPECT_EQ(std::get<int64_t>(Read("1970-01-01 05:30:00+05:30", Of(TypeId::kTimestampTz))), 0);
  EXPECT_EQ(Shown("f79c3e09-677c-4bbd-a479-3f349cb785e7", Of(TypeId::kUuid)),
            "f79c3e09-677c-4bbd-a479-3f349cb785e7");
  EXPECT_EQ(std::get<std::string>(Read("\\x00ff", Of(TypeId::kBinary))), std::string("\0\xff", 2));
  EXPECT_EQ(std::get<std::string>(Read("{\"a\": 1}", Of(TypeId::kString))), "{\"a\": 1}");
}

TEST(PgValuesTest, ReadsOneDimensionalArrays) {
  iceberg::Type list = Of(iceberg::TypeId::kList);
  iceberg::NestedField element;
  element.name = "element";
  element.type = Of(iceberg::TypeId::kString);
  list.fields.push_back(element);
  Result<parquet::RowValue> value = ValueFromText("{a,NULL,\"b, \\\"c\\\"\",\"NULL\"}", list);
  ASSERT_TRUE(value.ok()) << value.status().message();
  ASSERT_TRUE(value->elements);
  ASSERT_EQ(value->elements->size(), 4u);
  EXPECT_EQ(std::get<std::string>((*value->elements)[0]), "a");
  EXPECT_TRUE(iceberg::IsNull((*value->elements)[1]));
  EXPECT_EQ(std::get<std::string>((*value->elements)[2]), "b, \"c\"");
  EXPECT_EQ(std::get<std::string>((*value->elements)[3]), "NULL");
  Result<parquet::RowValue> empty = ValueFromText("{}", list);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->elements->empty());
  Result<parquet::RowValue> nested = ValueFromText("{{1,2},{3,4}}", list);
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.status().message().find("multi-dimensional"), std::string::npos);
}

TEST(PgValuesTest, RefusesWhatIcebergCannotHold) {
  using iceberg::TypeId;
  for (const auto& [text, type] : std::vector<std::pair<std::string, iceberg::Type>>{
           {"infinity", Of(TypeId::kDate)},
           {"-infinity", Of(TypeId::kTimestamp)},
           {"NaN", Of(TypeId::kDecimal, 10, 2)},
           {"1.234", Of(TypeId::kDecimal, 10, 2)},
           {"123456789", Of(TypeId::kDecimal, 5, 2)},
           {"x", Of(TypeId::kBoolean)},
           {"2147483648", Of(TypeId::kInt)},
           {"12:00", Of(TypeId::kTime)},
           {"not-a-uuid", Of(TypeId::kUuid)},
           {"00ff", Of(TypeId::kBinary)},
           {"-733333333334-01-01", Of(TypeId::kDate)},  // signed years are no PostgreSQL text
       }) {
    Result<parquet::RowValue> value = ValueFromText(text, type);
    EXPECT_FALSE(value.ok()) << text << " as " << type.Name();
    if (!value.ok()) {
      EXPECT_NE(value.status().message().find(text.substr(0, 3)), std::string::npos);
    }
  }
  EXPECT_TRUE(iceberg::IsNull(ValueFromText(std::nullopt, Of(TypeId::kInt))->datum));
}

TEST(PgValuesTest, SplitsCopyLines) {
  std::vector<std::optional<std::string>> fields;
  ASSERT_TRUE(SplitCopyLine("1\t\\N\ta\\tb\\\\c\\nd\t\t\\101\\x41", fields).ok());
  ASSERT_EQ(fields.size(), 5u);
  EXPECT_EQ(*fields[0], "1");
  EXPECT_FALSE(fields[1]);
  EXPECT_EQ(*fields[2], "a\tb\\c\nd");
  EXPECT_EQ(*fields[3], "");
  EXPECT_EQ(*fields[4], "AA");
  EXPECT_FALSE(SplitCopyLine("a\\", fields).ok());
}

}  // namespace
}  // namespace serac::sync
