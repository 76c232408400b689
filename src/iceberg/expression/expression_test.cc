// Row filters: the JSON and text forms, binding with exact literal conversion and NOT pushed down,
// and what a file's partition and metrics say of its rows (none, some, all), as Java's inclusive
// and strict metrics evaluators and its residuals decide.
#include "iceberg/expression/expression.h"

#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

namespace serac::iceberg {
namespace {

using Json = nlohmann::json;

Expression Text(std::string_view text) {
  auto parsed = ParseFilterText(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.status().ToString();
  return parsed.ok() ? std::move(parsed).value() : Expression{};
}

TableMetadata Table(const std::string& spec_fields = "[]") {
  Json body = {{"name", "t"},
               {"schema", Json::parse(R"J({"type": "struct", "schema-id": 0, "fields": [
                   {"id": 1, "name": "id", "required": true, "type": "long"},
                   {"id": 2, "name": "category", "required": false, "type": "string"},
                   {"id": 3, "name": "ts", "required": false, "type": "timestamptz"},
                   {"id": 4, "name": "price", "required": false, "type": "decimal(10, 2)"},
                   {"id": 5, "name": "score", "required": false, "type": "double"},
                   {"id": 6, "name": "day", "required": false, "type": "date"},
                   {"id": 7, "name": "n", "required": false, "type": "int"},
                   {"id": 8, "name": "point", "required": false, "type": {"type": "struct", "fields": [
                     {"id": 9, "name": "x", "required": false, "type": "float"}]}}]})J")},
               {"partition-spec", Json{{"spec-id", 0}, {"fields", Json::parse(spec_fields)}}},
               {"properties", {{"format-version", "2"}}}};
  auto creation = TableCreation::FromJson(body);
  EXPECT_TRUE(creation.ok()) << creation.status().ToString();
  auto metadata =
      creation->NewMetadata("file:///t", "6f0b6c8c-0000-4000-8000-000000000001", 1'700'000'000'000);
  EXPECT_TRUE(metadata.ok()) << metadata.status().ToString();
  return std::move(metadata).value();
}

BoundExpression Bound(const TableMetadata& table, std::string_view text) {
  auto bound = BindExpression(Text(text), table.CurrentSchema());
  EXPECT_TRUE(bound.ok()) << text << ": " << bound.status().ToString();
  return bound.ok() ? std::move(bound).value() : BoundExpression{};
}

std::string Single(const Type& type, const Datum& value) { return ToSingleValue(type, value).value(); }

// A file of `rows` rows with metrics for `id` (long) in [lower, upper] and no nulls.
DataFile IdFile(int64_t rows, int64_t lower, int64_t upper) {
  DataFile file;
  file.file_path = "file:///t/data/f.parquet";
  file.record_count = rows;
  file.value_counts = {{1, rows}};
  file.null_value_counts = {{1, 0}};
  file.lower_bounds = {{1, Single(Type{TypeId::kLong}, Datum(lower))}};
  file.upper_bounds = {{1, Single(Type{TypeId::kLong}, Datum(upper))}};
  return file;
}

FileMatch Match(const TableMetadata& table, std::string_view text, const DataFile& file) {
  return FileFilter(Bound(table, text), table).Evaluate(file);
}

TEST(ExpressionTest, TextAndJsonFormsReadTheSameExpression) {
  const Expression text =
      Text("id >= 10 and (category in ('a', 'it''s') or not ts is null) and name like 'ab%'");
  EXPECT_EQ(text.ToString(),
            "((id >= 10 AND (category IN ('a', 'it''s') OR NOT ts IS NULL)) AND name LIKE 'ab%')");
  auto json = ParseExpressionJson(R"({"type": "and",
      "left": {"type": "and", "left": {"type": "gt-eq", "term": "id", "value": 10},
               "right": {"type": "or", "left": {"type": "in", "term": {"type": "reference", "term": "category"},
                                                "values": ["a", {"type": "literal", "value": "it's"}]},
                         "right": {"type": "not", "child": {"type": "is-null", "term": "ts"}}}},
      "right": {"type": "starts-with", "term": "name", "value": "ab"}})");
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_EQ(json->ToString(), text.ToString());
  // Constants in each form.
  EXPECT_EQ(ParseExpressionJson("true")->op, ExprOp::kTrue);
  EXPECT_EQ(ParseExpressionJson(R"({"type": "false"})")->op, ExprOp::kFalse);
  EXPECT_EQ(ParseExpressionJson(R"({"type": "literal", "value": true})")->op, ExprOp::kTrue);
  EXPECT_EQ(Text("TRUE").op, ExprOp::kTrue);
  // Operators, keywords in any case, quoted names, escapes in LIKE.
  EXPECT_EQ(Text("a <> 1 OR b != 2.5e3 or c == -4 or \"odd \"\"name\" NOT IN (1) or d is not nan").ToString(),
            "((((a != 1 OR b != 2.5e3) OR c = -4) OR \"odd \"\"name\" NOT IN (1)) OR d IS NOT NAN)");
  EXPECT_EQ(Text(R"(p NOT LIKE '50\%%')").literals[0].text, "50%");
}

TEST(ExpressionTest, MalformedInputIsRefusedWithItsPosition) {
  for (const char* bad : {"", "id", "id =", "id = 'open", "(id = 1", "id = 1 extra", "id in ()",
                          "id like 'a%b%'", "id like 'abc'", "id is maybe", "= 1"}) {
    auto parsed = ParseFilterText(bad);
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_NE(parsed.status().message().find("position"), std::string::npos) << parsed.status().message();
  }
  std::string deep;
  for (int i = 0; i < 2000; ++i) deep += "not ";
  EXPECT_NE(ParseFilterText(deep + "true").status().message().find("limits::kJsonNestingDepthMax"),
            std::string::npos);
  for (const char* bad :
       {R"({"type": "eq", "term": "id"})", R"({"type": "is-null", "term": "id", "value": 1})",
        R"({"type": "in", "term": "id", "values": 3})", R"({"type": "unknown"})", R"([1])",
        R"({"type": "and", "left": true})", R"({"type": "eq", "term": "id", "value": [1]})"}) {
    EXPECT_EQ(ParseExpressionJson(bad).status().code(), ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(
      ParseExpressionJson(R"({"type": "eq", "term": {"type": "transform", "transform": "day", "term": "ts"},
                                    "value": 1})")
          .status()
          .code(),
      ErrorCode::kNotImplemented);
}

TEST(ExpressionTest, BindingConvertsLiteralsExactly) {
  const TableMetadata table = Table();
  const Schema schema = table.CurrentSchema();
  auto value_of = [&](std::string_view text) { return Bound(table, text).values.at(0); };
  EXPECT_EQ(std::get<int64_t>(value_of("id = 9007199254740993")), 9007199254740993);  // no double on the way
  EXPECT_EQ(std::get<int32_t>(value_of("n = -5")), -5);
  EXPECT_EQ(std::get<int32_t>(value_of("day = '2026-03-01'")), 20513);
  EXPECT_EQ(std::get<int64_t>(value_of("ts = '2026-03-01T01:02:03.5+01:00'")), 1772323323500000);
  EXPECT_EQ(std::get<int64_t>(value_of("ts = '1970-01-01 00:00:01'")), 1000000);           // no offset: UTC
  EXPECT_EQ(std::get<std::string>(value_of("price = 12.3")), std::string("\x04\xce", 2));  // 1230
  EXPECT_EQ(std::get<std::string>(value_of("price = '-0.01'")), std::string("\xff", 1));
  EXPECT_EQ(std::get<std::string>(value_of("price = 1.5e1")), std::string("\x05\xdc", 2));  // 1500
  EXPECT_EQ(std::get<float>(value_of("point.x < 1.5")), 1.5f);
  // NOT goes down to the predicates, with Java's negations.
  const BoundExpression negated = Bound(table, "not (id < 5 or category = 'a')");
  EXPECT_EQ(negated.op, ExprOp::kAnd);
  EXPECT_EQ(negated.children[0].op, ExprOp::kGtEq);
  EXPECT_EQ(negated.children[1].op, ExprOp::kNotEq);

  for (const char* bad : {"n = 3000000000", "price = 1.234", "price = 123456789.1", "day = '2026-02-30'",
                          "ts = 'yesterday'", "id = 'one'", "id = 1.5", "category = 5", "missing = 1",
                          "point = 1", "id is nan", "id like 'a%'", "score = 1e999"}) {
    auto bound = BindExpression(Text(bad), schema);
    EXPECT_EQ(bound.status().code(), ErrorCode::kInvalidArgument) << bad;
  }
  // The column named in the message.
  EXPECT_NE(BindExpression(Text("day = 'x'"), schema).status().message().find("day (date)"),
            std::string::npos);
  // Case-insensitive binding when asked.
  EXPECT_FALSE(BindExpression(Text("ID = 1"), schema).ok());
  EXPECT_EQ(BindExpression(Text("ID = 1"), schema, false)->field_id, 1);
}

TEST(ExpressionTest, MetricsDecideNoneSomeOrAll) {
  const TableMetadata table = Table();
  const DataFile file = IdFile(100, 10, 20);
  EXPECT_EQ(Match(table, "id < 10", file), FileMatch::kNone);
  EXPECT_EQ(Match(table, "id <= 10", file), FileMatch::kSome);
  EXPECT_EQ(Match(table, "id < 21", file), FileMatch::kAll);
  EXPECT_EQ(Match(table, "id > 20", file), FileMatch::kNone);
  EXPECT_EQ(Match(table, "id >= 10", file), FileMatch::kAll);
  EXPECT_EQ(Match(table, "id = 15", file), FileMatch::kSome);
  EXPECT_EQ(Match(table, "id = 25", file), FileMatch::kNone);
  EXPECT_EQ(Match(table, "id != 25", file), FileMatch::kAll);
  EXPECT_EQ(Match(table, "id in (1, 2, 30)", file), FileMatch::kNone);
  EXPECT_EQ(Match(table, "id not in (1, 2, 30)", file), FileMatch::kAll);
  EXPECT_EQ(Match(table, "id in (1, 12)", file), FileMatch::kSome);
  EXPECT_EQ(Match(table, "id >= 10 and id <= 20", file), FileMatch::kAll);
  EXPECT_EQ(Match(table, "id < 10 or id > 20", file), FileMatch::kNone);
  EXPECT_EQ(Match(table, "id < 12 or id >= 12", file), FileMatch::kSome);  // not proven per file
  EXPECT_EQ(Match(table, "not id < 10", file), FileMatch::kAll);
  EXPECT_EQ(Match(table, "true", file), FileMatch::kAll);
  EXPECT_EQ(Match(table, "false", file), FileMatch::kNone);
  EXPECT_EQ(Match(table, "id = 10", IdFile(5, 10, 10)), FileMatch::kAll);
  EXPECT_EQ(Match(table, "id != 10", IdFile(5, 10, 10)), FileMatch::kNone);
  EXPECT_EQ(Match(table, "id = 10", IdFile(0, 10, 10)), FileMatch::kNone);  // an empty file

  // Without metrics nothing is proven.
  DataFile bare;
  bare.record_count = 3;
  EXPECT_EQ(Match(table, "id < 10", bare), FileMatch::kSome);
  EXPECT_EQ(Match(table, "category is null", bare), FileMatch::kSome);

  // Nulls: comparisons never match them, not-eq does.
  DataFile nulls;
  nulls.record_count = 4;
  nulls.value_counts = {{2, 4}};
  nulls.null_value_counts = {{2, 4}};
  EXPECT_EQ(Match(table, "category is null", nulls), FileMatch::kAll);
  EXPECT_EQ(Match(table, "category = 'a'", nulls), FileMatch::kNone);
  EXPECT_EQ(Match(table, "category != 'a'", nulls), FileMatch::kAll);
  EXPECT_EQ(Match(table, "category like 'a%'", nulls), FileMatch::kNone);
  DataFile some_nulls = nulls;
  some_nulls.null_value_counts = {{2, 1}};
  const Type string_type{TypeId::kString};
  some_nulls.lower_bounds = {{2, Single(string_type, Datum(std::string("apple")))}};
  some_nulls.upper_bounds = {{2, Single(string_type, Datum(std::string("apricot")))}};
  EXPECT_EQ(Match(table, "category like 'ap%'", some_nulls), FileMatch::kSome);  // the null row
  EXPECT_EQ(Match(table, "category like 'b%'", some_nulls), FileMatch::kNone);
  some_nulls.null_value_counts = {{2, 0}};
  EXPECT_EQ(Match(table, "category like 'ap%'", some_nulls), FileMatch::kAll);
  EXPECT_EQ(Match(table, "category not like 'ap%'", some_nulls), FileMatch::kNone);
  EXPECT_EQ(Match(table, "category >= 'apple' and category <= 'apricot'", some_nulls), FileMatch::kAll);

  // NaN: counted apart; comparisons cannot prove all rows when there may be NaNs.
  DataFile scores;
  scores.record_count = 10;
  scores.value_counts = {{5, 10}};
  scores.null_value_counts = {{5, 0}};
  scores.nan_value_counts = {{5, 2}};
  scores.lower_bounds = {{5, Single(Type{TypeId::kDouble}, Datum(1.0))}};
  scores.upper_bounds = {{5, Single(Type{TypeId::kDouble}, Datum(2.0))}};
  EXPECT_EQ(Match(table, "score < 5", scores), FileMatch::kSome);
  EXPECT_EQ(Match(table, "score is nan", scores), FileMatch::kSome);
  scores.nan_value_counts = {{5, 0}};
  EXPECT_EQ(Match(table, "score < 5", scores), FileMatch::kAll);
  EXPECT_EQ(Match(table, "score is nan", scores), FileMatch::kNone);
  scores.nan_value_counts = {{5, 10}};
  EXPECT_EQ(Match(table, "score is nan", scores), FileMatch::kAll);
  EXPECT_EQ(Match(table, "score > 0", scores), FileMatch::kNone);
}

TEST(ExpressionTest, PartitionsDecideThroughTheirTransforms) {
  const TableMetadata table = Table(R"([
      {"source-id": 2, "field-id": 1000, "name": "category", "transform": "identity"},
      {"source-id": 3, "field-id": 1001, "name": "ts_day", "transform": "day"},
      {"source-id": 1, "field-id": 1002, "name": "id_bucket", "transform": "bucket[8]"},
      {"source-id": 6, "field-id": 1003, "name": "day_month", "transform": "month"},
      {"source-id": 7, "field-id": 1004, "name": "n_trunc", "transform": "truncate[10]"}])");
  auto bucket = Transform::Parse("bucket[8]")->Apply(Type{TypeId::kLong}, Datum(int64_t{42}));
  ASSERT_TRUE(bucket.ok());
  DataFile file;
  file.record_count = 50;
  // category 'a', 2026-03-01, bucket of 42, March 2026, n in [20, 29].
  file.partition = {Datum(std::string("a")), Datum(int32_t{20513}), *bucket,
                    Datum(int32_t{(2026 - 1970) * 12 + 2}), Datum(int32_t{20})};
  EXPECT_EQ(Match(table, "category = 'a'", file), FileMatch::kAll);
  EXPECT_EQ(Match(table, "category = 'b'", file), FileMatch::kNone);
  EXPECT_EQ(Match(table, "category is null", file), FileMatch::kNone);
  EXPECT_EQ(Match(table, "ts >= '2026-03-01T00:00:00Z' and ts < '2026-03-02T00:00:00Z'", file),
            FileMatch::kAll);
  EXPECT_EQ(Match(table, "ts >= '2026-03-01T12:00:00Z'", file), FileMatch::kSome);
  EXPECT_EQ(Match(table, "ts < '2026-03-01T00:00:00Z'", file), FileMatch::kNone);
  EXPECT_EQ(Match(table, "ts > '2026-03-01T23:59:59.999999Z'", file), FileMatch::kNone);
  EXPECT_EQ(Match(table, "id = 42", file), FileMatch::kSome);
  int64_t elsewhere = 0;
  while (Transform::Parse("bucket[8]")->Apply(Type{TypeId::kLong}, Datum(elsewhere)).value() == *bucket)
    ++elsewhere;
  EXPECT_EQ(Match(table, "id = " + std::to_string(elsewhere), file), FileMatch::kNone);
  EXPECT_EQ(Match(table, "day >= '2026-03-01' and day <= '2026-03-31'", file), FileMatch::kAll);
  EXPECT_EQ(Match(table, "day = '2026-04-01'", file), FileMatch::kNone);
  EXPECT_EQ(Match(table, "n >= 20 and n < 30", file), FileMatch::kAll);
  EXPECT_EQ(Match(table, "n = 19", file), FileMatch::kNone);
  EXPECT_EQ(Match(table, "category = 'a' and n < 25", file), FileMatch::kSome);
  // A null partition value: every row is null in its source.
  DataFile null_category = file;
  null_category.partition[0] = Datum();
  EXPECT_EQ(Match(table, "category is null", null_category), FileMatch::kAll);
  EXPECT_EQ(Match(table, "category = 'a'", null_category), FileMatch::kNone);
  // Partition and metrics together: metrics narrow what the partition leaves open.
  DataFile narrowed = file;
  narrowed.value_counts = {{7, 50}};
  narrowed.null_value_counts = {{7, 0}};
  narrowed.lower_bounds = {{7, Single(Type{TypeId::kInt}, Datum(int32_t{21}))}};
  narrowed.upper_bounds = {{7, Single(Type{TypeId::kInt}, Datum(int32_t{23}))}};
  EXPECT_EQ(Match(table, "category = 'a' and n < 25", narrowed), FileMatch::kAll);
}

}  // namespace
}  // namespace serac::iceberg
