#include "iceberg/schema/partition.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "common/encoding.h"

namespace serac::iceberg {
namespace {

Type T(TypeId id) {
  Type type;
  type.id = id;
  return type;
}

Type Decimal(int32_t precision, int32_t scale) {
  Type type = T(TypeId::kDecimal);
  type.precision = precision;
  type.scale = scale;
  return type;
}

std::string Bytes(std::string_view hex) { return *HexDecode(hex); }

// The test values of the spec's Appendix B.
TEST(PartitionHash, MatchesTheSpecsTestValues) {
  EXPECT_EQ(*HashDatum(T(TypeId::kInt), Datum(int32_t{34})), 2017239379);
  EXPECT_EQ(*HashDatum(T(TypeId::kLong), Datum(int64_t{34})), 2017239379);
  EXPECT_EQ(*HashDatum(Decimal(9, 2), Datum(Bytes("058c"))), -500754589);            // 14.20
  EXPECT_EQ(*HashDatum(T(TypeId::kDate), Datum(int32_t{17486})), -653330422);        // 2017-11-16
  EXPECT_EQ(*HashDatum(T(TypeId::kTime), Datum(int64_t{81068000000})), -662762989);  // 22:31:08
  EXPECT_EQ(*HashDatum(T(TypeId::kTimestamp), Datum(int64_t{1510871468000000})), -2047944441);
  EXPECT_EQ(*HashDatum(T(TypeId::kTimestampTz), Datum(int64_t{1510871468000001})), -1207196810);
  EXPECT_EQ(*HashDatum(T(TypeId::kTimestampNs), Datum(int64_t{1510871468000001001})), -1207196810);
  EXPECT_EQ(*HashDatum(T(TypeId::kString), Datum(std::string("iceberg"))), 1210000089);
  EXPECT_EQ(*HashDatum(T(TypeId::kUuid), Datum(Bytes("f79c3e09677c4bbda4793f349cb785e7"))), 1488055340);
  EXPECT_EQ(*HashDatum(T(TypeId::kBinary), Datum(Bytes("00010203"))), -188683207);
  EXPECT_EQ(HashDatum(T(TypeId::kDouble), Datum(1.0)).status().code(), ErrorCode::kInvalidArgument);
}

TEST(PartitionTransform, BucketAndTruncateFollowTheSpec) {
  auto bucket = Transform::Parse("bucket[16]");
  ASSERT_TRUE(bucket.ok());
  // (2017239379 & INT_MAX) % 16
  EXPECT_EQ(std::get<int32_t>(*bucket->Apply(T(TypeId::kInt), Datum(int32_t{34}))), 2017239379 % 16);
  EXPECT_EQ(bucket->ResultType(T(TypeId::kString))->id, TypeId::kInt);
  EXPECT_FALSE(bucket->ResultType(T(TypeId::kDouble)).ok());

  auto truncate = Transform::Parse("TRUNCATE[10]");
  ASSERT_TRUE(truncate.ok());
  EXPECT_EQ(truncate->ToString(), "truncate[10]");
  EXPECT_EQ(std::get<int32_t>(*truncate->Apply(T(TypeId::kInt), Datum(int32_t{1}))), 0);
  EXPECT_EQ(std::get<int32_t>(*truncate->Apply(T(TypeId::kInt), Datum(int32_t{-1}))), -10);
  EXPECT_EQ(std::get<int64_t>(*truncate->Apply(T(TypeId::kLong), Datum(int64_t{-1}))), -10);
  auto by50 = Transform::Parse("truncate[50]");
  // 10.65 -> 10.50 (unscaled 1065 -> 1050)
  EXPECT_EQ(std::get<std::string>(*by50->Apply(Decimal(9, 2), Datum(Bytes("0429")))), Bytes("041a"));
  auto by3 = Transform::Parse("truncate[3]");
  EXPECT_EQ(std::get<std::string>(*by3->Apply(T(TypeId::kString), Datum(std::string("iceberg")))), "ice");
  // Code points, not bytes.
  EXPECT_EQ(std::get<std::string>(*by3->Apply(T(TypeId::kString), Datum(std::string("\xc3\xa9t\xc3\xa9s")))),
            "\xc3\xa9t\xc3\xa9");
  EXPECT_EQ(std::get<std::string>(*by3->Apply(T(TypeId::kBinary), Datum(Bytes("0102030405")))),
            Bytes("010203"));

  EXPECT_TRUE(IsNull(*bucket->Apply(T(TypeId::kInt), Datum{})));
  EXPECT_EQ(Transform::Parse("bucket[0]").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Transform::Parse("zorder").status().code(), ErrorCode::kNotImplemented);
}

TEST(PartitionTransform, TimeTransformsCountFrom1970WithFloorDivision) {
  const int64_t ts = 1510871468000000;  // 2017-11-16T22:31:08
  auto apply = [](const char* name, const Type& type, Datum value) {
    return *Transform::Parse(name)->Apply(type, value);
  };
  EXPECT_EQ(std::get<int32_t>(apply("year", T(TypeId::kTimestamp), Datum(ts))), 47);
  EXPECT_EQ(std::get<int32_t>(apply("month", T(TypeId::kTimestamp), Datum(ts))), 47 * 12 + 10);
  EXPECT_EQ(std::get<int32_t>(apply("day", T(TypeId::kTimestamp), Datum(ts))), 17486);
  EXPECT_EQ(std::get<int32_t>(apply("hour", T(TypeId::kTimestampTz), Datum(ts))), 17486 * 24 + 22);
  EXPECT_EQ(std::get<int32_t>(apply("hour", T(TypeId::kTimestampNs), Datum(ts * 1000 + 1))), 17486 * 24 + 22);
  EXPECT_EQ(std::get<int32_t>(apply("year", T(TypeId::kDate), Datum(int32_t{17486}))), 47);
  // Before the epoch: 1969-12-31 and one microsecond before midnight.
  EXPECT_EQ(std::get<int32_t>(apply("year", T(TypeId::kDate), Datum(int32_t{-1}))), -1);
  EXPECT_EQ(std::get<int32_t>(apply("month", T(TypeId::kDate), Datum(int32_t{-1}))), -1);
  EXPECT_EQ(std::get<int32_t>(apply("day", T(TypeId::kTimestamp), Datum(int64_t{-1}))), -1);
  EXPECT_EQ(std::get<int32_t>(apply("hour", T(TypeId::kTimestamp), Datum(int64_t{-1}))), -1);
  EXPECT_EQ(Transform::Parse("day")->ResultType(T(TypeId::kTimestamp))->id, TypeId::kDate);
  EXPECT_FALSE(Transform::Parse("hour")->ResultType(T(TypeId::kDate)).ok());
  EXPECT_TRUE(IsNull(apply("void", T(TypeId::kDate), Datum(int32_t{5}))));
}

TEST(PartitionValues, SingleValueFormRoundTripsAndOrders) {
  struct Case {
    Type type;
    Datum value;
    std::string bytes;
  };
  const std::vector<Case> cases = {
      {T(TypeId::kBoolean), Datum(true), Bytes("01")},
      {T(TypeId::kInt), Datum(int32_t{-2}), Bytes("feffffff")},
      {T(TypeId::kLong), Datum(int64_t{1}), Bytes("0100000000000000")},
      {T(TypeId::kDouble), Datum(1.0), Bytes("000000000000f03f")},
      {T(TypeId::kFloat), Datum(1.0f), Bytes("0000803f")},
      {T(TypeId::kString), Datum(std::string("abc")), "abc"},
      {Decimal(9, 2), Datum(Bytes("ff")), Bytes("ff")},
  };
  for (const Case& c : cases) {
    auto bytes = ToSingleValue(c.type, c.value);
    ASSERT_TRUE(bytes.ok()) << c.type.Name();
    EXPECT_EQ(*bytes, c.bytes) << c.type.Name();
    auto back = FromSingleValue(c.type, *bytes);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, c.value) << c.type.Name();
  }
  // A long column's 4-byte bound written before it was promoted from int.
  EXPECT_EQ(std::get<int64_t>(*FromSingleValue(T(TypeId::kLong), Bytes("feffffff"))), -2);
  EXPECT_FALSE(FromSingleValue(T(TypeId::kInt), Bytes("01")).ok());

  EXPECT_LT(CompareDatums(T(TypeId::kString), Datum(std::string("a")), Datum(std::string("\xc3\xa9"))), 0);
  EXPECT_LT(CompareDatums(Decimal(9, 2), Datum(Bytes("ff")), Datum(Bytes("01"))), 0);  // -1 < 1
  EXPECT_LT(CompareDatums(T(TypeId::kDouble), Datum(-0.0), Datum(0.0)), 0);
  EXPECT_TRUE(IsNaN(Datum(std::nan(""))));
}

TEST(PartitionValues, PathsAreJavasHumanStrings) {
  PartitionSpec spec;
  spec.fields = {{{1}, 1000, "event day", "day"}, {{2}, 1001, "hr", "hour"},    {{3}, 1002, "m", "month"},
                 {{4}, 1003, "name", "identity"}, {{5}, 1004, "n", "identity"}, {{6}, 1005, "y", "year"}};
  Type partition = T(TypeId::kStruct);
  for (TypeId id : {TypeId::kDate, TypeId::kInt, TypeId::kInt, TypeId::kString, TypeId::kInt, TypeId::kInt}) {
    NestedField field;
    field.type.id = id;
    partition.fields.push_back(field);
  }
  const PartitionTuple tuple = {Datum(int32_t{17486}),
                                Datum(int32_t{17486 * 24 + 22}),
                                Datum(int32_t{574}),
                                Datum(std::string("a b/c")),
                                Datum{},
                                Datum(int32_t{-1})};
  EXPECT_EQ(PartitionPath(spec, partition, tuple),
            "event+day=2017-11-16/hr=2017-11-16-22/m=2017-11/name=a+b%2Fc/n=null/y=1969");
  // The same for people to read: nothing encoded.
  EXPECT_EQ(PartitionText(spec, partition, tuple),
            "event day=2017-11-16/hr=2017-11-16-22/m=2017-11/name=a b/c/n=null/y=1969");
}

}  // namespace
}  // namespace serac::iceberg
