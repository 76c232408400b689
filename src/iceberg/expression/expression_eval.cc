// Whether none, some or all rows of a file match a bound expression. What is known of a column in
// one file is gathered from its partition (under the file's own spec) and its metrics into
// ColumnFacts; each predicate is then decided on those facts the way Java's inclusive metrics
// evaluator rules rows out (kNone) and its strict one rules them all in (kAll), and AND/OR combine
// the three-valued answers.
#include <algorithm>
#include <optional>

#include "iceberg/expression/expression.h"

namespace serac::iceberg {
namespace {

// What every row of one file is known to satisfy for one column.
struct ColumnFacts {
  bool all_null = false;
  bool no_null = false;
  bool all_nan = false;
  bool no_nan = false;
  // Bounds of the non-null, non-NaN values (inclusive; an upper bound may lie above the largest value).
  std::optional<Datum> lower;
  std::optional<Datum> upper;
  std::optional<std::string> prefix;  // every non-null value starts with it (truncate of a string)
  std::vector<std::pair<Transform, int32_t>> buckets;  // every non-null value hashes to the bucket
};

void RaiseLower(const Type& type, ColumnFacts& facts, Datum value) {
  if (!facts.lower || CompareDatums(type, value, *facts.lower) > 0) facts.lower = std::move(value);
}
void LowerUpper(const Type& type, ColumnFacts& facts, Datum value) {
  if (!facts.upper || CompareDatums(type, value, *facts.upper) < 0) facts.upper = std::move(value);
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// The source values a year, month, day or hour partition value stands for, as a closed range in
// the source's own unit (days for dates, micro- or nanoseconds for timestamps); nullopt when the
// range does not fit.
std::optional<std::pair<int64_t, int64_t>> TemporalRange(Transform::Kind kind, TypeId source, int64_t p) {
  if (p < -1'000'000 || p > 1'000'000 * 24) return std::nullopt;  // far beyond any real date
  int64_t first_day = 0, end_day = 0;                             // [first_day, end_day)
  switch (kind) {
    case Transform::Kind::kYear:
      first_day = DaysFromCivil(1970 + p, 1, 1);
      end_day = DaysFromCivil(1971 + p, 1, 1);
      break;
    case Transform::Kind::kMonth: {
      const int64_t year = 1970 + FloorDiv(p, 12);
      const int64_t month = p - FloorDiv(p, 12) * 12 + 1;
      first_day = DaysFromCivil(year, month, 1);
      end_day = month == 12 ? DaysFromCivil(year + 1, 1, 1) : DaysFromCivil(year, month + 1, 1);
      break;
    }
    case Transform::Kind::kDay:
      first_day = p;
      end_day = p + 1;
      break;
    case Transform::Kind::kHour:
      break;
    default:
      return std::nullopt;
  }
  if (source == TypeId::kDate) {
    if (kind == Transform::Kind::kHour) return std::nullopt;
    return std::make_pair(first_day, end_day - 1);
  }
  int64_t per_second = 0;
  if (source == TypeId::kTimestamp || source == TypeId::kTimestampTz) per_second = 1'000'000;
  if (source == TypeId::kTimestampNs || source == TypeId::kTimestampTzNs) per_second = 1'000'000'000;
  if (per_second == 0) return std::nullopt;
  if (kind == Transform::Kind::kHour)
    return std::make_pair(p * 3600 * per_second, (p + 1) * 3600 * per_second - 1);
  const __int128 first = static_cast<__int128>(first_day) * 86400 * per_second;
  const __int128 last = static_cast<__int128>(end_day) * 86400 * per_second - 1;
  if (first < INT64_MIN || last > INT64_MAX) return std::nullopt;
  return std::make_pair(static_cast<int64_t>(first), static_cast<int64_t>(last));
}

int64_t AsInt64(const Datum& value) {
  if (std::holds_alternative<int32_t>(value)) return std::get<int32_t>(value);
  if (std::holds_alternative<int64_t>(value)) return std::get<int64_t>(value);
  return 0;
}

Datum OfSourceType(TypeId source, int64_t value) {
  if (source == TypeId::kDate || source == TypeId::kInt) return Datum(static_cast<int32_t>(value));
  return Datum(value);
}

// What the partition value of one field says of its source column.
void AddPartitionFacts(const Type& type, const Transform& transform, const Datum& value, ColumnFacts& facts) {
  if (transform.kind() == Transform::Kind::kVoid) return;  // always null: says nothing
  if (IsNull(value)) {                                     // only a null source value transforms to null
    facts.all_null = true;
    return;
  }
  facts.no_null = true;
  switch (transform.kind()) {
    case Transform::Kind::kIdentity:
      if (IsNaN(value)) {
        facts.all_nan = true;
        return;
      }
      facts.no_nan = true;
      RaiseLower(type, facts, value);
      LowerUpper(type, facts, value);
      return;
    case Transform::Kind::kYear:
    case Transform::Kind::kMonth:
    case Transform::Kind::kDay:
    case Transform::Kind::kHour:
      if (auto range = TemporalRange(transform.kind(), type.id, AsInt64(value))) {
        RaiseLower(type, facts, OfSourceType(type.id, range->first));
        LowerUpper(type, facts, OfSourceType(type.id, range->second));
      }
      return;
    case Transform::Kind::kTruncate:
      if (type.id == TypeId::kInt || type.id == TypeId::kLong) {
        const int64_t start = AsInt64(value);
        const __int128 last = static_cast<__int128>(start) + transform.parameter() - 1;
        const __int128 type_max = type.id == TypeId::kInt ? INT32_MAX : INT64_MAX;
        RaiseLower(type, facts, OfSourceType(type.id, start));
        LowerUpper(type, facts, OfSourceType(type.id, static_cast<int64_t>(std::min(last, type_max))));
      } else if ((type.id == TypeId::kString || type.id == TypeId::kBinary) &&
                 std::holds_alternative<std::string>(value)) {
        const std::string& prefix = std::get<std::string>(value);
        if (!facts.prefix || prefix.size() > facts.prefix->size()) facts.prefix = prefix;
        RaiseLower(type, facts, value);
      }
      return;
    case Transform::Kind::kBucket:
      if (std::holds_alternative<int32_t>(value))
        facts.buckets.emplace_back(transform, std::get<int32_t>(value));
      return;
    default:
      return;
  }
}

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

FileMatch Not(FileMatch match) {
  return match == FileMatch::kAll    ? FileMatch::kNone
         : match == FileMatch::kNone ? FileMatch::kAll
                                     : FileMatch::kSome;
}

// Whether `value` may be among the file's non-null, non-NaN values.
bool MayHold(const Type& type, const ColumnFacts& facts, const Datum& value) {
  if (facts.lower && CompareDatums(type, value, *facts.lower) < 0) return false;
  if (facts.upper && CompareDatums(type, value, *facts.upper) > 0) return false;
  if (facts.prefix && std::holds_alternative<std::string>(value) &&
      !StartsWith(std::get<std::string>(value), *facts.prefix)) {
    return false;
  }
  for (const auto& [transform, bucket] : facts.buckets) {
    auto hashed = transform.Apply(type, value);
    if (hashed.ok() && std::holds_alternative<int32_t>(*hashed) && std::get<int32_t>(*hashed) != bucket) {
      return false;
    }
  }
  return true;
}

// Every row holds exactly `value`: no nulls or NaNs, and the bounds meet at it.
bool AllEqual(const Type& type, const ColumnFacts& facts, const Datum& value) {
  return facts.no_null && facts.no_nan && facts.lower && facts.upper &&
         CompareDatums(type, *facts.lower, value) == 0 && CompareDatums(type, *facts.upper, value) == 0;
}

FileMatch EvaluatePredicate(const BoundExpression& predicate, const ColumnFacts& facts) {
  const Type& type = predicate.type;
  // Rows with nulls or NaNs never match a comparison, starts-with, eq or in.
  const bool none_comparable = facts.all_null || facts.all_nan;
  const bool all_comparable = facts.no_null && facts.no_nan;
  auto compare = [&](auto rules_out, auto rules_in) {
    if (none_comparable || rules_out()) return FileMatch::kNone;
    if (all_comparable && rules_in()) return FileMatch::kAll;
    return FileMatch::kSome;
  };
  const Datum* literal = predicate.values.empty() ? nullptr : &predicate.values[0];
  auto below = [&](const std::optional<Datum>& bound, bool inclusive) {  // bound < literal (or <=)
    if (!bound) return false;
    const int c = CompareDatums(type, *bound, *literal);
    return inclusive ? c <= 0 : c < 0;
  };
  auto above = [&](const std::optional<Datum>& bound, bool inclusive) {  // bound > literal (or >=)
    if (!bound) return false;
    const int c = CompareDatums(type, *bound, *literal);
    return inclusive ? c >= 0 : c > 0;
  };
  switch (predicate.op) {
    case ExprOp::kIsNull:
      if (facts.all_null) return FileMatch::kAll;
      if (facts.no_null) return FileMatch::kNone;
      return FileMatch::kSome;
    case ExprOp::kNotNull:
      return Not(
          EvaluatePredicate(BoundExpression{ExprOp::kIsNull, {}, predicate.field_id, type, {}}, facts));
    case ExprOp::kIsNan:
      if (facts.all_nan) return FileMatch::kAll;
      if (facts.no_nan || facts.all_null) return FileMatch::kNone;
      return FileMatch::kSome;
    case ExprOp::kNotNan:
      return Not(EvaluatePredicate(BoundExpression{ExprOp::kIsNan, {}, predicate.field_id, type, {}}, facts));
    case ExprOp::kLt:
      return compare([&] { return above(facts.lower, true); }, [&] { return below(facts.upper, false); });
    case ExprOp::kLtEq:
      return compare([&] { return above(facts.lower, false); }, [&] { return below(facts.upper, true); });
    case ExprOp::kGt:
      return compare([&] { return below(facts.upper, true); }, [&] { return above(facts.lower, false); });
    case ExprOp::kGtEq:
      return compare([&] { return below(facts.upper, false); }, [&] { return above(facts.lower, true); });
    case ExprOp::kEq:
      return compare([&] { return !MayHold(type, facts, *literal); },
                     [&] { return AllEqual(type, facts, *literal); });
    case ExprOp::kIn:
      return compare(
          [&] {
            return std::none_of(predicate.values.begin(), predicate.values.end(),
                                [&](const Datum& value) { return MayHold(type, facts, value); });
          },
          [&] {
            return std::any_of(predicate.values.begin(), predicate.values.end(),
                               [&](const Datum& value) { return AllEqual(type, facts, value); });
          });
    case ExprOp::kStartsWith: {
      const std::string& prefix = std::get<std::string>(*literal);
      auto head = [&](const Datum& bound) {
        const std::string& text = std::get<std::string>(bound);
        return text.substr(0, std::min(text.size(), prefix.size()));
      };
      return compare(
          [&] {
            if (facts.prefix && !StartsWith(*facts.prefix, prefix) && !StartsWith(prefix, *facts.prefix))
              return true;
            if (facts.lower && head(*facts.lower) > prefix) return true;
            return facts.upper && head(*facts.upper) < prefix;
          },
          [&] {
            if (facts.prefix && StartsWith(*facts.prefix, prefix)) return true;
            return facts.lower && facts.upper && StartsWith(std::get<std::string>(*facts.lower), prefix) &&
                   StartsWith(std::get<std::string>(*facts.upper), prefix);
          });
    }
    case ExprOp::kNotEq:
    case ExprOp::kNotIn:
    case ExprOp::kNotStartsWith: {
      BoundExpression positive = predicate;
      positive.op = predicate.op == ExprOp::kNotEq   ? ExprOp::kEq
                    : predicate.op == ExprOp::kNotIn ? ExprOp::kIn
                                                     : ExprOp::kStartsWith;
      return Not(EvaluatePredicate(positive, facts));
    }
    default:
      return FileMatch::kSome;
  }
}

// What one file's partition (under `spec`, when known) and, with `use_metrics`, its column metrics
// say about the column of `predicate`.
ColumnFacts FactsOf(const BoundExpression& predicate, const DataFile& file, const PartitionSpec* spec,
                    bool use_metrics) {
  ColumnFacts facts;
  const int32_t id = predicate.field_id;
  const Type& type = predicate.type;
  const bool floating = type.id == TypeId::kFloat || type.id == TypeId::kDouble;
  if (!floating) facts.no_nan = true;
  if (use_metrics) {
    const std::optional<int64_t> values = FindCount(file.value_counts, id);
    const std::optional<int64_t> nulls = FindCount(file.null_value_counts, id);
    const std::optional<int64_t> nans = FindCount(file.nan_value_counts, id);
    if (nulls) {
      facts.no_null = *nulls == 0;
      facts.all_null = values && *values == *nulls;
    }
    if (floating && nans) {
      facts.no_nan = *nans == 0;
      facts.all_nan = values && *values == *nans && *nans > 0;
    }
    for (const auto& [bounds, is_lower] :
         {std::make_pair(&file.lower_bounds, true), std::make_pair(&file.upper_bounds, false)}) {
      const std::string* bytes = FindBound(*bounds, id);
      if (!bytes) continue;
      Result<Datum> bound = FromSingleValue(type, *bytes);
      if (!bound.ok() || IsNull(*bound) || IsNaN(*bound)) continue;  // a NaN bound says nothing
      if (is_lower) {
        RaiseLower(type, facts, std::move(bound).value());
      } else {
        LowerUpper(type, facts, std::move(bound).value());
      }
    }
  }
  if (spec) {
    for (size_t i = 0; i < spec->fields.size() && i < file.partition.size(); ++i) {
      const PartitionField& field = spec->fields[i];
      if (field.source_ids.size() != 1 || field.source_ids[0] != id) continue;
      auto transform = Transform::Parse(field.transform);
      if (transform.ok()) AddPartitionFacts(type, *transform, file.partition[i], facts);
    }
  }
  return facts;
}

BoundExpression Constant(bool value) {
  BoundExpression constant;
  constant.op = value ? ExprOp::kTrue : ExprOp::kFalse;
  return constant;
}

}  // namespace

FileFilter::FileFilter(BoundExpression expression, const TableMetadata& metadata)
    : expression_(std::move(expression)), specs_(metadata.Specs()) {}

const PartitionSpec* FileFilter::SpecOf(const DataFile& file) const {
  for (const PartitionSpec& candidate : specs_) {
    if (candidate.spec_id == file.spec_id) return &candidate;
  }
  return nullptr;
}

FileMatch FileFilter::Evaluate(const DataFile& file) const {
  if (file.record_count <= 0) return FileMatch::kNone;
  const PartitionSpec* spec = SpecOf(file);
  auto evaluate = [&](const auto& self, const BoundExpression& expression) -> FileMatch {
    switch (expression.op) {
      case ExprOp::kTrue:
        return FileMatch::kAll;
      case ExprOp::kFalse:
        return FileMatch::kNone;
      case ExprOp::kAnd: {
        const FileMatch left = self(self, expression.children[0]);
        if (left == FileMatch::kNone) return left;
        const FileMatch right = self(self, expression.children[1]);
        if (right == FileMatch::kNone) return right;
        return left == FileMatch::kAll && right == FileMatch::kAll ? FileMatch::kAll : FileMatch::kSome;
      }
      case ExprOp::kOr: {
        const FileMatch left = self(self, expression.children[0]);
        if (left == FileMatch::kAll) return left;
        const FileMatch right = self(self, expression.children[1]);
        if (right == FileMatch::kAll) return right;
        return left == FileMatch::kNone && right == FileMatch::kNone ? FileMatch::kNone : FileMatch::kSome;
      }
      default:
        return EvaluatePredicate(expression, FactsOf(expression, file, spec, /*use_metrics=*/true));
    }
  };
  return evaluate(evaluate, expression_);
}

BoundExpression FileFilter::Residual(const DataFile& file) const {
  const PartitionSpec* spec = SpecOf(file);
  auto residual = [&](const auto& self, const BoundExpression& expression) -> BoundExpression {
    switch (expression.op) {
      case ExprOp::kTrue:
      case ExprOp::kFalse:
        return expression;
      case ExprOp::kAnd:
      case ExprOp::kOr: {
        const bool is_and = expression.op == ExprOp::kAnd;
        BoundExpression left = self(self, expression.children[0]);
        BoundExpression right = self(self, expression.children[1]);
        // and: false wins, true drops out; or: true wins, false drops out.
        const ExprOp absorbing = is_and ? ExprOp::kFalse : ExprOp::kTrue;
        const ExprOp neutral = is_and ? ExprOp::kTrue : ExprOp::kFalse;
        if (left.op == absorbing || right.op == absorbing) return Constant(!is_and);
        if (left.op == neutral) return right;
        if (right.op == neutral) return left;
        BoundExpression combined;
        combined.op = expression.op;
        combined.children = {std::move(left), std::move(right)};
        return combined;
      }
      default:
        switch (EvaluatePredicate(expression, FactsOf(expression, file, spec, /*use_metrics=*/false))) {
          case FileMatch::kAll:
            return Constant(true);
          case FileMatch::kNone:
            return Constant(false);
          case FileMatch::kSome:
            break;
        }
        return expression;
    }
  };
  return residual(residual, expression_);
}

}  // namespace serac::iceberg
