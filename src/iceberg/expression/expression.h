// Row filters: Iceberg's expressions, read from the REST spec's JSON form (what a scan plan request
// or a client sends) or from a SQL-like text (what a user types: `--where "day >= '2026-01-01' and
// kind in ('a', 'b')"`), bound to a table's schema, and evaluated against one data or delete file:
// whether none, some or all of its rows may match, decided from its partition and its column
// metrics as Java Iceberg's ResidualEvaluator with its inclusive and strict metrics evaluators
// decide it. An overwrite by row filter (snapshot_producer.h) removes the files all of whose rows
// match and refuses files only some of whose rows do; scan planning keeps the files some of whose
// rows may match.
//
// Semantics are Java's: comparisons never match null or NaN values; not-eq, not-in and
// not-starts-with are the negations of eq, in and starts-with and so match nulls; NOT is pushed
// down to the predicates (not(a < 1) is a >= 1), as Java rewrites it before evaluation.
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "iceberg/manifest/manifest.h"
#include "iceberg/metadata/table_metadata.h"
#include "iceberg/schema/partition.h"
#include "iceberg/schema/schema.h"

namespace serac::iceberg {

enum class ExprOp : uint8_t {
  kTrue,
  kFalse,
  kNot,
  kAnd,
  kOr,
  kIsNull,
  kNotNull,
  kIsNan,
  kNotNan,
  kLt,
  kLtEq,
  kGt,
  kGtEq,
  kEq,
  kNotEq,
  kStartsWith,
  kNotStartsWith,
  kIn,
  kNotIn,
};

// A value as written, before the column's type is known: numbers keep every digit (a decimal or a
// long converts exactly), strings are converted by the column's type (dates, timestamps, uuids,
// decimals, hexadecimal binary).
struct ExprLiteral {
  enum class Kind : uint8_t { kBoolean, kNumber, kString };
  Kind kind = Kind::kString;
  std::string text;  // "true"/"false", the number's digits, or the string
};

// An unbound expression: predicates name their column by its dotted name.
struct Expression {
  ExprOp op = ExprOp::kTrue;
  std::vector<Expression> children;   // kNot: one; kAnd, kOr: two
  std::string column;                 // predicates
  std::vector<ExprLiteral> literals;  // comparisons and starts-with: one; in and not-in: one or more

  // As the text form reads it: "(id < 5 AND category = 'a')".
  std::string ToString() const;
};

// The REST spec's JSON expression (true/false, {"type": "and"|"or", "left", "right"}, {"type":
// "not", "child"}, {"type": "eq", "term", "value"}, {"type": "in", "term", "values"}, ...; a term is
// a column name or {"type": "reference", "term"}; values plain or {"type": "literal", "value"}), as
// Java's ExpressionParser reads it. Transform terms are kNotImplemented; the rest kInvalidArgument
// naming what is wrong. Nesting is bounded by limits::kExpressionDepthMax.
Result<Expression> ParseExpressionJson(std::string_view json);

// The text form: predicates `col = v` (also ==, !=, <>, <, <=, >, >=), `col IN (v, ...)`, `col NOT
// IN (...)`, `col IS [NOT] NULL`, `col IS [NOT] NAN`, `col [NOT] LIKE 'prefix%'` (starts-with), TRUE
// and FALSE, combined with AND, OR, NOT and parentheses (keywords in any letter case). Columns are
// names, dotted for nested fields, or "double quoted"; values are numbers, 'single quoted' strings
// ('' for a quote) and true/false. kInvalidArgument naming the position of what is wrong.
Result<Expression> ParseFilterText(std::string_view text);

// An expression bound to a schema: NOT pushed down, predicates on a field id with literals of the
// field's type.
struct BoundExpression {
  ExprOp op = ExprOp::kTrue;  // never kNot
  std::vector<BoundExpression> children;
  int32_t field_id = 0;
  Type type;                  // the field's primitive type
  std::vector<Datum> values;  // as ExprLiteral, converted to `type`
};

// Binds to `schema`: every column must name a primitive field (case-insensitively when asked),
// every literal convert exactly to its type (kInvalidArgument naming the column and the value
// otherwise: an int out of range, a decimal with more digits than its scale, a malformed date);
// NaN is not a value to compare with (is-nan is), and starts-with applies to strings only.
Result<BoundExpression> BindExpression(const Expression& expression, const Schema& schema,
                                       bool case_sensitive = true);

// A literal as a value of `field`'s primitive type, converted as BindExpression converts it;
// kInvalidArgument naming `column` and the value when it does not convert exactly.
Result<Datum> ConvertLiteral(const ExprLiteral& literal, const NestedField& field, const std::string& column);

// A primitive field's default value (its initial-default or write-default: `json` in the spec's
// single-value JSON form, as the schema keeps it) as a Datum (null for JSON null);
// kInvalidArgument naming the field when it is not a value of the field's type.
Result<Datum> DefaultValue(const NestedField& field, std::string_view json);

// The field at a dotted name, with or without letter case (nullptr when none, or, without case, when
// more than one matches): how a filter's and a scan's column names are found.
const NestedField* FindColumn(const Schema& schema, std::string_view dotted_name, bool case_sensitive);

// How many rows of a file may match: none, possibly some (unknown), all.
enum class FileMatch : uint8_t { kNone, kSome, kAll };

// Evaluates a bound expression against files of one table: from a file's partition under its own
// spec (identity values exactly; year, month, day, hour and truncate as the range of source values
// they stand for; bucket to rule out values that hash elsewhere) and its column metrics (value,
// null and NaN counts, lower and upper bounds).
class FileFilter {
 public:
  // `metadata` gives the schema of the expression and every partition spec a file may have.
  FileFilter(BoundExpression expression, const TableMetadata& metadata);
  FileMatch Evaluate(const DataFile& file) const;
  // What is left of the expression for the rows of `file` once its partition is known, as Java's
  // ResidualEvaluator leaves it: predicates the partition decides become true or false (metrics
  // are not used, so the answer is the same for every file of a partition), and AND/OR simplify.
  BoundExpression Residual(const DataFile& file) const;
  const BoundExpression& expression() const { return expression_; }

 private:
  const PartitionSpec* SpecOf(const DataFile& file) const;
  BoundExpression expression_;
  std::vector<PartitionSpec> specs_;
};

}  // namespace serac::iceberg
