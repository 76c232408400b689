// OLake's filter text, read as OLake's regular expression reads it (types/stream_configured.go):
// a column (a word, or anything but a quote inside double quotes), an operator, a value (a
// double-quoted text, a number, or a word), and optionally `and`/`or` (any case) and a second such
// condition; nothing else. Rendered to SQL as OLake's jdbc.SQLFilter renders it for PostgreSQL.
#include "sync/stream_filter.h"

#include <cctype>

#include "common/encoding.h"
#include "sync/postgres.h"

namespace serac::sync {
namespace {

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// A number as Go's strconv.ParseFloat takes what OLake's grammar lets through: 20, -9.5, .5, 1e5.
bool IsNumber(std::string_view text) {
  size_t i = 0;
  if (i < text.size() && text[i] == '-') ++i;
  size_t digits = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    size_t exponent = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++exponent;
    if (exponent == 0) return false;
  }
  return i == text.size();
}

class TextReader {
 public:
  TextReader(std::string_view text, const std::string& where) : text_(text), where_(where) {}

  Result<StreamFilter> Read() {
    StreamFilter filter;
    SkipSpace();
    SERAC_ASSIGN_OR_RETURN(FilterCondition first, Condition());
    filter.conditions.push_back(std::move(first));
    SkipSpace();
    if (pos_ < text_.size()) {
      const size_t start = pos_;
      std::string word;
      while (pos_ < text_.size() && std::isalpha(static_cast<unsigned char>(text_[pos_])))
        word += text_[pos_++];
      word = AsciiLower(word);
      if (word != "and" && word != "or") {
        pos_ = start;
        return Fail("expected and, or or the end");
      }
      filter.connective = word == "and" ? "AND" : "OR";
      SkipSpace();
      SERAC_ASSIGN_OR_RETURN(FilterCondition second, Condition());
      filter.conditions.push_back(std::move(second));
      SkipSpace();
      if (pos_ < text_.size()) return Fail("a filter has at most two conditions, joined by and or or");
    }
    return filter;
  }

 private:
  Result<FilterCondition> Condition() {
    FilterCondition condition;
    if (pos_ < text_.size() && text_[pos_] == '"') {
      SERAC_ASSIGN_OR_RETURN(condition.column, Quoted("column name"));
    } else {
      condition.column = Word();
      if (condition.column.empty()) return Fail("expected a column name (a word, or \"in double quotes\")");
    }
    SkipSpace();
    for (const char* op : {">=", "<=", "!=", ">", "<", "="}) {
      if (text_.substr(pos_).starts_with(op)) {
        condition.op = op;
        pos_ += condition.op.size();
        break;
      }
    }
    if (condition.op.empty()) return Fail("expected one of the operators =, !=, <, >, <=, >=");
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '\'') {
      return Fail(
          "strings are written in double quotes in OLake's filters (city = \"London\"), not single ones");
    }
    if (pos_ < text_.size() && text_[pos_] == '"') {
      condition.kind = FilterCondition::Value::kString;
      SERAC_ASSIGN_OR_RETURN(condition.value, Quoted("string"));
      return condition;
    }
    const size_t start = pos_;
    if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '.')) ++pos_;
    while (pos_ < text_.size() && (IsWordChar(text_[pos_]) || text_[pos_] == '.')) ++pos_;
    condition.value = std::string(text_.substr(start, pos_ - start));
    const std::string lower = AsciiLower(condition.value);
    if (IsNumber(condition.value)) {
      condition.kind = FilterCondition::Value::kNumber;
    } else if (!condition.value.empty() &&
               std::all_of(condition.value.begin(), condition.value.end(), IsWordChar)) {
      condition.kind = lower == "true" || lower == "false" ? FilterCondition::Value::kBoolean
                       : lower == "null"                   ? FilterCondition::Value::kNull
                                                           : FilterCondition::Value::kBareWord;
    } else {
      pos_ = start;
      return Fail("expected a value: \"a string\", a number, true, false, null or a word");
    }
    if (condition.kind == FilterCondition::Value::kNull && condition.op != "=" && condition.op != "!=") {
      return Fail("null is compared with = or != only");
    }
    return condition;
  }

  std::string Word() {
    const size_t start = pos_;
    while (pos_ < text_.size() && IsWordChar(text_[pos_])) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  Result<std::string> Quoted(const char* what) {
    const size_t close = text_.find('"', pos_ + 1);
    if (close == std::string_view::npos)
      return Fail(std::string("a ") + what + " whose double quote is not closed");
    std::string inside(text_.substr(pos_ + 1, close - pos_ - 1));
    pos_ = close + 1;
    return inside;
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  Status Fail(const std::string& why) const {
    return Error(ErrorCode::kInvalidArgument, where_ + ": " + std::string(text_) + ": at character " +
                                                  std::to_string(pos_ + 1) + ": " + why);
  }

  std::string_view text_;
  const std::string& where_;
  size_t pos_ = 0;
};

}  // namespace

std::string StreamFilter::Sql() const {
  std::string sql;
  for (const FilterCondition& condition : conditions) {
    if (!sql.empty()) sql += " " + connective + " ";
    const std::string column = QuoteIdentifier(condition.column);
    switch (condition.kind) {
      case FilterCondition::Value::kNull:
        sql += column + (condition.op == "=" ? " IS NULL" : " IS NOT NULL");
        break;
      case FilterCondition::Value::kNumber:
        sql += column + " " + condition.op + " " + condition.value;
        break;
      case FilterCondition::Value::kBoolean:
        sql += column + " " + condition.op + " " + (AsciiLower(condition.value) == "true" ? "TRUE" : "FALSE");
        break;
      case FilterCondition::Value::kString:
      case FilterCondition::Value::kBareWord:
        sql += column + " " + condition.op + " " + QuoteLiteral(condition.value);
        break;
    }
  }
  return sql;
}

Result<StreamFilter> ParseFilterText(std::string_view text, const std::string& where) {
  return TextReader(text, where).Read();
}

Status CheckFilterConditions(const StreamFilter& filter, const std::string& where) {
  if (filter.conditions.empty() || filter.conditions.size() > 2) {
    return Error(ErrorCode::kInvalidArgument, where + ".conditions: one or two conditions, not " +
                                                  std::to_string(filter.conditions.size()));
  }
  for (size_t i = 0; i < filter.conditions.size(); ++i) {
    const FilterCondition& condition = filter.conditions[i];
    const std::string at = where + ".conditions[" + std::to_string(i) + "]";
    if (condition.column.empty()) return Error(ErrorCode::kInvalidArgument, at + ".column: is required");
    static const char* kOperators[] = {"=", "!=", "<", ">", "<=", ">="};
    if (std::find(std::begin(kOperators), std::end(kOperators), condition.op) == std::end(kOperators)) {
      return Error(ErrorCode::kInvalidArgument,
                   at + ".operator: must be one of =, !=, <, >, <=, >=, not \"" + condition.op + "\"");
    }
    if (condition.kind == FilterCondition::Value::kNull && condition.op != "=" && condition.op != "!=") {
      return Error(ErrorCode::kInvalidArgument, at + ": null is compared with = or != only");
    }
  }
  return Status::Ok();
}

}  // namespace serac::sync
