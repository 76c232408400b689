// Partition values and transforms: what a writer computes for each row to choose its data file's
// partition, what a manifest stores per file and summarises per manifest, and the spec's
// single-value binary form in which manifests keep column bounds and partition summaries.
//
// A Datum is one value of a primitive Iceberg type, its type known from context (the column or the
// partition field). Integers of 32 bits (int, date) are int32_t; of 64 bits (long, time, timestamps)
// int64_t; string, binary, fixed and uuid (16 bytes, big-endian) hold their bytes in a std::string,
// and so does a decimal: its unscaled value as big-endian two's complement, as Avro and the
// single-value form store it.
//
// Transforms follow the spec's definitions and Java Iceberg's results: bucket with the 32-bit
// Murmur3 hash of Appendix B, truncate by width (code points for strings), year/month/day/hour
// counted from 1970 with floor division, void always null.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/status.h"
#include "iceberg/metadata/table_metadata.h"
#include "iceberg/schema/schema.h"

namespace serac::iceberg {

using Datum = std::variant<std::monostate, bool, int32_t, int64_t, float, double, std::string>;
inline bool IsNull(const Datum& datum) { return std::holds_alternative<std::monostate>(datum); }

// One value per field of a partition spec, in the spec's order.
using PartitionTuple = std::vector<Datum>;

// The 32-bit Murmur3 hash (x86 variant, seed 0) of `bytes`: Appendix B's hashBytes.
int32_t Murmur3Hash32(std::string_view bytes);
// Appendix B's hash of a value of a primitive type (ints hashed as longs, timestamps in
// nanoseconds converted to microseconds first, decimals by their minimal big-endian bytes);
// kInvalidArgument for a type bucket does not accept.
Result<int32_t> HashDatum(const Type& type, const Datum& value);

class Transform {
 public:
  enum class Kind : uint8_t { kIdentity, kBucket, kTruncate, kYear, kMonth, kDay, kHour, kVoid };

  // "identity", "bucket[16]", "truncate[4]", "year", ..., "void" (case-insensitive, as Java reads
  // them); kNotImplemented for a transform serac cannot compute.
  static Result<Transform> Parse(std::string_view text);

  Kind kind() const { return kind_; }
  int32_t parameter() const { return parameter_; }  // bucket count or truncation width
  std::string ToString() const;                     // the spec's name, as Parse reads it

  // The type of the transformed value for a source column of `source` (identity, truncate and void
  // keep it; bucket, year, month and hour give int; day gives date); kInvalidArgument when the
  // transform does not apply to that type.
  Result<Type> ResultType(const Type& source) const;
  // The transformed value; null stays null.
  Result<Datum> Apply(const Type& source, const Datum& value) const;

 private:
  Transform(Kind kind, int32_t parameter) : kind_(kind), parameter_(parameter) {}
  Kind kind_;
  int32_t parameter_;
};

// The partition tuple's type: a struct with one optional field per partition field (its field id
// and name, the transform's result type for the field's source column in `schema`).
Result<Type> PartitionType(const PartitionSpec& spec, const Schema& schema);

// The spec's single-value binary form (Appendix D): little-endian numbers, UTF-8 strings, decimals as
// their minimal big-endian two's complement, uuids as 16 big-endian bytes. A null has none.
Result<std::string> ToSingleValue(const Type& type, const Datum& value);
Result<Datum> FromSingleValue(const Type& type, std::string_view bytes);

// Orders two non-null values of one type as Java's Comparators do (signed numbers, NaN above every
// other float, strings and binary by unsigned bytes, decimals by value): <0, 0 or >0.
int CompareDatums(const Type& type, const Datum& a, const Datum& b);

// A value as Java's toHumanString writes it: numbers in decimal, dates "2017-11-16", times and
// timestamps in ISO form, decimals with their scale, uuids in their usual form, binary and fixed in
// base64; "null" for null.
std::string DatumToText(const Type& type, const Datum& value);

// A two's-complement big-endian integer without its redundant leading bytes (Java's
// BigInteger.toByteArray): the form a Datum keeps a decimal in. Empty stays empty.
std::string_view TrimTwosComplement(std::string_view big_endian);

// Days since 1970-01-01 of a proleptic Gregorian date (month 1-12); what date values and the
// day transform count.
int64_t DaysFromCivil(int64_t year, int64_t month, int64_t day);

// A byte string equal for two files exactly when their spec ids and partition tuples are equal: the
// key files are grouped or looked up by partition with (not an order anyone reads).
std::string PartitionGroupKey(int32_t spec_id, const PartitionTuple& partition);

// Whether a float or double value is NaN (false for any other).
bool IsNaN(const Datum& value);

// A partition field on the top-level `column` by `transform` ("identity", "year", "month", "day",
// "hour", "bucket[N]", "truncate[W]", "void"; Spark's plural names too), named as Java names it
// ("ts_day", "id_bucket", "name_trunc"); kInvalidArgument naming an unknown transform or column, or
// a transform the column's type does not take.
Result<PartitionField> MakePartitionField(const Schema& schema, const std::string& column,
                                          std::string transform, int32_t field_id);
// The spec as the REST protocol's partition-spec object (written by schema_model.cc).
std::string PartitionSpecToJson(const PartitionSpec& spec);

// The partition as Java's PartitionSpec.partitionToPath writes it into data file paths:
// "name=value/name=value", names and values URL-encoded, dates and hours in their human form.
std::string PartitionPath(const PartitionSpec& spec, const Type& partition_type, const PartitionTuple& tuple);
// The same, not URL-encoded: "name=value/name=value" for people to read.
std::string PartitionText(const PartitionSpec& spec, const Type& partition_type, const PartitionTuple& tuple);

}  // namespace serac::iceberg
