// Expressions read from the REST spec's JSON form (as Java's ExpressionParser reads it) and from the
// text form users type, and written back as text for messages.
#include <cctype>

#include "common/encoding.h"
#include "common/json_reads.h"
#include "common/limits.h"
#include "iceberg/expression/expression.h"

namespace serac::iceberg {
namespace {

struct OpName {
  ExprOp op;
  const char* json;  // the REST spec's "type"
  const char* text;  // the text form's operator or keyword
};

constexpr OpName kOpNames[] = {
    {ExprOp::kTrue, "true", "TRUE"},
    {ExprOp::kFalse, "false", "FALSE"},
    {ExprOp::kNot, "not", "NOT"},
    {ExprOp::kAnd, "and", "AND"},
    {ExprOp::kOr, "or", "OR"},
    {ExprOp::kIsNull, "is-null", "IS NULL"},
    {ExprOp::kNotNull, "not-null", "IS NOT NULL"},
    {ExprOp::kIsNan, "is-nan", "IS NAN"},
    {ExprOp::kNotNan, "not-nan", "IS NOT NAN"},
    {ExprOp::kLt, "lt", "<"},
    {ExprOp::kLtEq, "lt-eq", "<="},
    {ExprOp::kGt, "gt", ">"},
    {ExprOp::kGtEq, "gt-eq", ">="},
    {ExprOp::kEq, "eq", "="},
    {ExprOp::kNotEq, "not-eq", "!="},
    {ExprOp::kStartsWith, "starts-with", "LIKE"},
    {ExprOp::kNotStartsWith, "not-starts-with", "NOT LIKE"},
    {ExprOp::kIn, "in", "IN"},
    {ExprOp::kNotIn, "not-in", "NOT IN"},
};

const OpName& NameOf(ExprOp op) {
  for (const OpName& name : kOpNames) {
    if (name.op == op) return name;
  }
  return kOpNames[0];
}

bool IsUnary(ExprOp op) {
  return op == ExprOp::kIsNull || op == ExprOp::kNotNull || op == ExprOp::kIsNan || op == ExprOp::kNotNan;
}
bool IsSet(ExprOp op) { return op == ExprOp::kIn || op == ExprOp::kNotIn; }

std::string QuotedColumn(const std::string& name) {
  bool plain = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.');
  if (plain) return name;
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string LiteralText(const ExprLiteral& literal) {
  if (literal.kind != ExprLiteral::Kind::kString) return literal.text;
  std::string out = "'";
  for (char c : literal.text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

// ---- JSON ----

Status Invalid(const std::string& message) { return Error(ErrorCode::kInvalidArgument, message); }

Result<ExprLiteral> LiteralFromJson(const Json& json) {
  const Json* value = &json;
  if (json.is_object()) {
    auto type = json.find("type");
    if (type == json.end() || !type->is_string() || AsciiLower(type->get<std::string>()) != "literal") {
      return Invalid("Cannot parse type as a literal: " + json.dump());
    }
    auto inner = json.find("value");
    if (inner == json.end()) return Invalid("Cannot parse literal: missing value: " + json.dump());
    value = &*inner;
  }
  if (value->is_boolean())
    return ExprLiteral{ExprLiteral::Kind::kBoolean, value->get<bool>() ? "true" : "false"};
  if (value->is_number()) return ExprLiteral{ExprLiteral::Kind::kNumber, value->dump()};
  if (value->is_string()) return ExprLiteral{ExprLiteral::Kind::kString, value->get<std::string>()};
  return Invalid("Cannot convert JSON to literal: " + value->dump());
}

Result<std::string> TermFromJson(const Json& json) {
  if (json.is_string()) return json.get<std::string>();
  if (json.is_object()) {
    SERAC_ASSIGN_OR_RETURN(std::string type, RequiredString(json, "type"));
    if (type == "reference") return RequiredString(json, "term");
    if (type == "transform") {
      return Error(ErrorCode::kNotImplemented,
                   "transform terms in filters are not supported: " + json.dump());
    }
    return Invalid("Cannot parse type as a reference: " + type);
  }
  return Invalid("Cannot parse reference (requires string or object): " + json.dump());
}

Result<Expression> FromJson(const Json& json) {
  if (json.is_boolean()) return Expression{json.get<bool>() ? ExprOp::kTrue : ExprOp::kFalse, {}, {}, {}};
  if (!json.is_object()) return Invalid("Cannot parse expression from non-object: " + json.dump());
  SERAC_ASSIGN_OR_RETURN(std::string type, RequiredString(json, "type"));
  const std::string lowered = AsciiLower(type);
  if (lowered == "literal") {
    auto value = json.find("value");
    if (value == json.end() || !value->is_boolean())
      return Invalid("Cannot parse literal expression: " + json.dump());
    return Expression{value->get<bool>() ? ExprOp::kTrue : ExprOp::kFalse, {}, {}, {}};
  }
  const OpName* name = nullptr;
  for (const OpName& candidate : kOpNames) {
    if (lowered == candidate.json) name = &candidate;
  }
  if (!name) return Invalid("Unsupported expression type: " + type);
  Expression out;
  out.op = name->op;
  switch (out.op) {
    case ExprOp::kTrue:
    case ExprOp::kFalse:
      return out;
    case ExprOp::kNot: {
      auto child = json.find("child");
      if (child == json.end()) return Invalid("Cannot parse not expression: missing child");
      SERAC_ASSIGN_OR_RETURN(Expression parsed, FromJson(*child));
      out.children.push_back(std::move(parsed));
      return out;
    }
    case ExprOp::kAnd:
    case ExprOp::kOr:
      for (const char* side : {"left", "right"}) {
        auto member = json.find(side);
        if (member == json.end()) return Invalid("Cannot parse " + type + " expression: missing " + side);
        SERAC_ASSIGN_OR_RETURN(Expression parsed, FromJson(*member));
        out.children.push_back(std::move(parsed));
      }
      return out;
    default:
      break;
  }
  auto term = json.find("term");
  if (term == json.end()) return Invalid("Cannot parse " + type + " predicate: missing term");
  SERAC_ASSIGN_OR_RETURN(out.column, TermFromJson(*term));
  const bool has_value = json.contains("value");
  const bool has_values = json.contains("values");
  if (IsUnary(out.op)) {
    if (has_value || has_values)
      return Invalid("Cannot parse " + type + " predicate: has invalid value field");
    return out;
  }
  if (IsSet(out.op)) {
    if (!has_values || has_value) return Invalid("Cannot parse " + type + " predicate: missing values");
    const Json& values = json.at("values");
    if (!values.is_array()) return Invalid("Cannot parse literals from non-array: " + values.dump());
    for (const Json& value : values) {
      SERAC_ASSIGN_OR_RETURN(ExprLiteral literal, LiteralFromJson(value));
      out.literals.push_back(std::move(literal));
    }
    return out;
  }
  if (!has_value || has_values) return Invalid("Cannot parse " + type + " predicate: missing value");
  SERAC_ASSIGN_OR_RETURN(ExprLiteral literal, LiteralFromJson(json.at("value")));
  out.literals.push_back(std::move(literal));
  return out;
}

// ---- Text ----

class TextParser {
 public:
  explicit TextParser(std::string_view text) : text_(text) {}

  Result<Expression> Parse() {
    SERAC_ASSIGN_OR_RETURN(Expression expression, ParseOr(0));
    SkipSpace();
    if (pos_ != text_.size()) return Fail("unexpected text");
    return expression;
  }

 private:
  Status Fail(const std::string& what) const {
    std::string near(text_.substr(pos_, 20));
    return Invalid("filter: " + what + " at position " + std::to_string(pos_ + 1) +
                   (near.empty() ? " (the end)" : " ('" + near + "')"));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  // Consumes the keyword (any letter case, not followed by a name character).
  bool Keyword(std::string_view word) {
    SkipSpace();
    if (text_.size() - pos_ < word.size()) return false;
    for (size_t i = 0; i < word.size(); ++i) {
      if (std::toupper(static_cast<unsigned char>(text_[pos_ + i])) != word[i]) return false;
    }
    const size_t end = pos_ + word.size();
    if (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_')) {
      return false;
    }
    pos_ = end;
    return true;
  }

  bool Symbol(std::string_view symbol) {
    SkipSpace();
    if (text_.substr(pos_, symbol.size()) != symbol) return false;
    pos_ += symbol.size();
    return true;
  }

  Result<Expression> ParseOr(uint32_t depth) {
    SERAC_ASSIGN_OR_RETURN(Expression left, ParseAnd(depth));
    while (Keyword("OR")) {
      SERAC_ASSIGN_OR_RETURN(Expression right, ParseAnd(depth));
      left = Expression{ExprOp::kOr, {std::move(left), std::move(right)}, {}, {}};
    }
    return left;
  }

  Result<Expression> ParseAnd(uint32_t depth) {
    SERAC_ASSIGN_OR_RETURN(Expression left, ParseNot(depth));
    while (Keyword("AND")) {
      SERAC_ASSIGN_OR_RETURN(Expression right, ParseNot(depth));
      left = Expression{ExprOp::kAnd, {std::move(left), std::move(right)}, {}, {}};
    }
    return left;
  }

  Result<Expression> ParseNot(uint32_t depth) {
    if (depth >= limits::kJsonNestingDepthMax) {
      return Fail("nested deeper than limits::kJsonNestingDepthMax (" +
                  std::to_string(limits::kJsonNestingDepthMax) + ", as the JSON form)");
    }
    if (Keyword("NOT")) {
      SERAC_ASSIGN_OR_RETURN(Expression child, ParseNot(depth + 1));
      return Expression{ExprOp::kNot, {std::move(child)}, {}, {}};
    }
    if (Symbol("(")) {
      SERAC_ASSIGN_OR_RETURN(Expression inner, ParseOr(depth + 1));
      if (!Symbol(")")) return Fail("expected ')'");
      return inner;
    }
    if (Keyword("TRUE")) return Expression{ExprOp::kTrue, {}, {}, {}};
    if (Keyword("FALSE")) return Expression{ExprOp::kFalse, {}, {}, {}};
    return ParsePredicate();
  }

  Result<std::string> ParseColumn() {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '"') {
      std::string name;
      for (++pos_; pos_ < text_.size(); ++pos_) {
        if (text_[pos_] == '"') {
          if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {
            name += '"';
            ++pos_;
            continue;
          }
          ++pos_;
          return name;
        }
        name += text_[pos_];
      }
      return Fail("unterminated quoted column name");
    }
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '_' || text_[pos_] == '.')) {
      ++pos_;
    }
    if (pos_ == start) return Fail("expected a column name");
    return std::string(text_.substr(start, pos_ - start));
  }

  Result<ExprLiteral> ParseLiteral() {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '\'') {
      std::string value;
      for (++pos_; pos_ < text_.size(); ++pos_) {
        if (text_[pos_] == '\'') {
          if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '\'') {
            value += '\'';
            ++pos_;
            continue;
          }
          ++pos_;
          return ExprLiteral{ExprLiteral::Kind::kString, std::move(value)};
        }
        value += text_[pos_];
      }
      return Fail("unterminated string");
    }
    if (Keyword("TRUE")) return ExprLiteral{ExprLiteral::Kind::kBoolean, "true"};
    if (Keyword("FALSE")) return ExprLiteral{ExprLiteral::Kind::kBoolean, "false"};
    const size_t start = pos_;
    if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) ++pos_;
    bool digits = false;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (std::isdigit(static_cast<unsigned char>(c))) {
        digits = true;
      } else if (c == '.' || c == 'e' || c == 'E' ||
                 ((c == '-' || c == '+') && (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E'))) {
      } else {
        break;
      }
      ++pos_;
    }
    if (!digits) {
      pos_ = start;
      return Fail("expected a value (a number, 'string', true or false)");
    }
    return ExprLiteral{ExprLiteral::Kind::kNumber, std::string(text_.substr(start, pos_ - start))};
  }

  Result<Expression> ParsePredicate() {
    Expression out;
    SERAC_ASSIGN_OR_RETURN(out.column, ParseColumn());
    if (Keyword("IS")) {
      const bool negated = Keyword("NOT");
      if (Keyword("NULL")) {
        out.op = negated ? ExprOp::kNotNull : ExprOp::kIsNull;
      } else if (Keyword("NAN")) {
        out.op = negated ? ExprOp::kNotNan : ExprOp::kIsNan;
      } else {
        return Fail("expected NULL or NAN");
      }
      return out;
    }
    const bool negated = Keyword("NOT");
    if (Keyword("IN")) {
      out.op = negated ? ExprOp::kNotIn : ExprOp::kIn;
      if (!Symbol("(")) return Fail("expected '('");
      do {
        SERAC_ASSIGN_OR_RETURN(ExprLiteral literal, ParseLiteral());
        out.literals.push_back(std::move(literal));
      } while (Symbol(","));
      if (!Symbol(")")) return Fail("expected ',' or ')'");
      return out;
    }
    if (Keyword("LIKE")) {
      out.op = negated ? ExprOp::kNotStartsWith : ExprOp::kStartsWith;
      const size_t at = pos_;
      SERAC_ASSIGN_OR_RETURN(ExprLiteral pattern, ParseLiteral());
      // Only a prefix: 'abc%' with no other wildcard ('\' escapes one).
      std::string prefix;
      bool ends_with_percent = false;
      const std::string& text = pattern.text;
      for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) {
          prefix += text[++i];
        } else if (text[i] == '%' && i + 1 == text.size()) {
          ends_with_percent = true;
        } else if (text[i] == '%' || text[i] == '_') {
          pos_ = at;
          return Fail("LIKE takes a prefix pattern 'abc%' only");
        } else {
          prefix += text[i];
        }
      }
      if (pattern.kind != ExprLiteral::Kind::kString || !ends_with_percent) {
        pos_ = at;
        return Fail("LIKE takes a prefix pattern 'abc%' only");
      }
      out.literals.push_back(ExprLiteral{ExprLiteral::Kind::kString, std::move(prefix)});
      return out;
    }
    if (negated) return Fail("expected IN or LIKE after NOT");
    struct Comparison {
      const char* symbol;
      ExprOp op;
    };
    // Longest symbols first.
    constexpr Comparison kComparisons[] = {
        {"<=", ExprOp::kLtEq}, {">=", ExprOp::kGtEq}, {"!=", ExprOp::kNotEq}, {"<>", ExprOp::kNotEq},
        {"==", ExprOp::kEq},   {"<", ExprOp::kLt},    {">", ExprOp::kGt},     {"=", ExprOp::kEq}};
    for (const Comparison& comparison : kComparisons) {
      if (Symbol(comparison.symbol)) {
        out.op = comparison.op;
        SERAC_ASSIGN_OR_RETURN(ExprLiteral literal, ParseLiteral());
        out.literals.push_back(std::move(literal));
        return out;
      }
    }
    return Fail("expected a comparison, IN, LIKE or IS after the column " + out.column);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

std::string Expression::ToString() const {
  switch (op) {
    case ExprOp::kTrue:
    case ExprOp::kFalse:
      return NameOf(op).text;
    case ExprOp::kNot:
      return "NOT " + children[0].ToString();
    case ExprOp::kAnd:
    case ExprOp::kOr:
      return "(" + children[0].ToString() + " " + NameOf(op).text + " " + children[1].ToString() + ")";
    default:
      break;
  }
  std::string out = QuotedColumn(column) + " " + NameOf(op).text;
  if (IsUnary(op)) return out;
  if (IsSet(op)) {
    out += " (";
    for (size_t i = 0; i < literals.size(); ++i) out += (i ? ", " : "") + LiteralText(literals[i]);
    return out + ")";
  }
  if (op == ExprOp::kStartsWith || op == ExprOp::kNotStartsWith) {
    std::string pattern;
    for (char c : literals[0].text) {
      if (c == '%' || c == '_' || c == '\\') pattern += '\\';
      pattern += c;
    }
    return out + " " + LiteralText(ExprLiteral{ExprLiteral::Kind::kString, pattern + "%"});
  }
  return out + " " + LiteralText(literals[0]);
}

Result<Expression> ParseExpressionJson(std::string_view json) {
  SERAC_ASSIGN_OR_RETURN(Json parsed, ParseJson(json));
  return FromJson(parsed);
}

Result<Expression> ParseFilterText(std::string_view text) { return TextParser(text).Parse(); }

Result<Datum> DefaultValue(const NestedField& field, std::string_view json) {
  auto invalid = [&](const std::string& why) {
    return Invalid("the default of column " + field.name + " (" + field.type.Name() +
                   ") is not a value of its type: " + why);
  };
  if (!field.type.is_primitive()) return invalid("defaults of nested columns are not supported");
  Result<Json> parsed = ParseJson(json);
  if (!parsed.ok()) return invalid(parsed.status().message());
  if (parsed->is_null()) return Datum{};
  if (parsed->is_object()) return invalid(std::string(json));
  Result<ExprLiteral> literal = LiteralFromJson(*parsed);
  if (!literal.ok()) return invalid(literal.status().message());
  Result<Datum> value = ConvertLiteral(*literal, field, field.name);
  if (!value.ok()) return invalid(std::string(json));
  return value;
}

}  // namespace serac::iceberg
