#include "auth/policy.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>

#include "common/json_nesting.h"
#include "common/limits.h"

namespace serac::auth {
namespace {

// Ordered, so that json() writes the fields in the order we emit them.
using Json = nlohmann::ordered_json;

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = Lower(c);
  return out;
}

bool EqualsFold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

// Does `s` hold `literal` at `pos`?
bool LiteralAt(std::string_view s, size_t pos, std::string_view literal, bool fold) {
  if (s.size() - pos < literal.size()) return false;
  std::string_view window = s.substr(pos, literal.size());
  return fold ? EqualsFold(window, literal) : window == literal;
}

// The index after the UTF-8 code point starting at `pos`: "?" and "*" step over characters, not
// bytes.
size_t NextCodePoint(std::string_view s, size_t pos) {
  ++pos;
  while (pos < s.size() && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) ++pos;
  return pos;
}

Status Invalid(std::string_view path, std::string_view message) {
  std::string text = "policy ";
  text += path;
  text += ": ";
  text += message;
  return Error(ErrorCode::kInvalidArgument, std::move(text));
}

std::string Quote(std::string_view s) {
  std::string out = "\"";
  out += s;
  out += '"';
  return out;
}

// ---------------------------------------------------------------------------------------------
// Patterns: a string split at parse time into literal runs, wildcards and policy variables.

enum class PieceKind : uint8_t {
  kLiteral,   // text must appear as is
  kAnyRun,    // "*": any run of characters, also empty
  kAnyChar,   // "?": exactly one character
  kVariable,  // "${key}" / "${key, 'default'}": the context's value, taken literally
};

struct Piece {
  PieceKind kind;
  std::string text;  // the literal, or the variable's key in lower case
  std::optional<std::string> fallback;
};

struct Pattern {
  std::vector<Piece> pieces;
  bool matches_everything = false;  // exactly "*"
  bool has_variables = false;
};

struct PatternSyntax {
  bool wildcards = true;  // "*" and "?" are wildcards (else plain characters)
  bool variables = true;  // "${...}" are policy variables (else plain text)
  bool lower = false;     // fold literals to lower case (actions)
};

void AppendLiteral(Pattern& pattern, std::string_view text, bool lower) {
  if (pattern.pieces.empty() || pattern.pieces.back().kind != PieceKind::kLiteral) {
    pattern.pieces.push_back(Piece{PieceKind::kLiteral, {}, std::nullopt});
  }
  std::string& literal = pattern.pieces.back().text;
  for (char c : text) literal += lower ? Lower(c) : c;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Parses the inside of "${...}" into `pattern`.
Status AppendVariable(Pattern& pattern, std::string_view inside, std::string_view path, bool lower) {
  if (inside == "*" || inside == "?" || inside == "$") {  // escapes for the literal characters
    AppendLiteral(pattern, inside, lower);
    return Status::Ok();
  }
  Piece piece{PieceKind::kVariable, {}, std::nullopt};
  std::string_view key = inside;
  if (size_t comma = inside.find(','); comma != std::string_view::npos) {
    key = inside.substr(0, comma);
    std::string_view fallback = Trim(inside.substr(comma + 1));
    if (fallback.size() < 2 || fallback.front() != '\'' || fallback.back() != '\'') {
      return Invalid(path, "the default of policy variable ${" + std::string(inside) +
                               "} must be written in single quotes: ${key, 'default'}");
    }
    piece.fallback = std::string(fallback.substr(1, fallback.size() - 2));
  }
  key = Trim(key);
  if (key.empty() || key.find(':') == std::string_view::npos) {
    return Invalid(path, "policy variable ${" + std::string(inside) +
                             "} must name a condition key such as ${aws:username}");
  }
  piece.text = ToLower(key);
  pattern.pieces.push_back(std::move(piece));
  pattern.has_variables = true;
  return Status::Ok();
}

Result<Pattern> CompilePattern(std::string_view text, PatternSyntax syntax, std::string_view path) {
  Pattern pattern;
  pattern.matches_everything = syntax.wildcards && text == "*";
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (syntax.variables && c == '$' && i + 1 < text.size() && text[i + 1] == '{') {
      size_t close = text.find('}', i + 2);
      if (close == std::string_view::npos) {
        return Invalid(path, "unterminated policy variable in " + Quote(text) + " (missing '}')");
      }
      SERAC_RETURN_IF_ERROR(AppendVariable(pattern, text.substr(i + 2, close - i - 2), path, syntax.lower));
      i = close;
    } else if (syntax.wildcards && c == '*') {
      if (pattern.pieces.empty() || pattern.pieces.back().kind != PieceKind::kAnyRun) {
        pattern.pieces.push_back(Piece{PieceKind::kAnyRun, {}, std::nullopt});
      }
    } else if (syntax.wildcards && c == '?') {
      pattern.pieces.push_back(Piece{PieceKind::kAnyChar, {}, std::nullopt});
    } else {
      AppendLiteral(pattern, std::string_view(&text[i], 1), syntax.lower);
    }
  }
  return pattern;
}

// A variable's value: the context's single value for the key, else the default. A key with
// several values cannot stand for one string, so it counts as absent.
std::optional<std::string_view> ResolveVariable(const Piece& piece, const ConditionContext* context) {
  if (context != nullptr) {
    const std::vector<std::string>* values = context->Find(piece.text);
    if (values != nullptr && values->size() == 1) return std::string_view((*values)[0]);
  }
  if (piece.fallback) return std::string_view(*piece.fallback);
  return std::nullopt;
}

// Glob match of the whole of `s` against `pattern`. Classic single-backtrack algorithm: on a
// mismatch, let the most recent "*" swallow one more character and retry from there. Linear in
// practice, never worse than |pattern| * |s|. A pattern naming a variable the request lacks
// matches nothing.
bool Matches(const Pattern& pattern, std::string_view s, bool fold, const ConditionContext* context) {
  if (pattern.matches_everything) return true;
  if (pattern.has_variables) {
    for (const Piece& piece : pattern.pieces) {
      if (piece.kind == PieceKind::kVariable && !ResolveVariable(piece, context)) return false;
    }
  }
  const std::vector<Piece>& pieces = pattern.pieces;
  constexpr size_t kNone = static_cast<size_t>(-1);
  size_t pi = 0;
  size_t si = 0;
  size_t star_pi = kNone;
  size_t star_si = 0;
  while (true) {
    if (pi < pieces.size()) {
      const Piece& piece = pieces[pi];
      switch (piece.kind) {
        case PieceKind::kAnyRun:
          star_pi = pi++;
          star_si = si;
          continue;
        case PieceKind::kAnyChar:
          if (si < s.size()) {
            si = NextCodePoint(s, si);
            ++pi;
            continue;
          }
          break;
        case PieceKind::kLiteral:
        case PieceKind::kVariable: {
          std::string_view literal = piece.kind == PieceKind::kLiteral ? std::string_view(piece.text)
                                                                       : *ResolveVariable(piece, context);
          if (LiteralAt(s, si, literal, fold)) {
            si += literal.size();
            ++pi;
            continue;
          }
          break;
        }
      }
    } else if (si == s.size()) {
      return true;
    }
    if (star_pi == kNone || star_si >= s.size()) return false;
    star_si = NextCodePoint(s, star_si);
    si = star_si;
    pi = star_pi + 1;
  }
}

// ---------------------------------------------------------------------------------------------
// ARNs: arn:partition:service:region:account:resource (the resource may hold more colons).

struct ArnParts {
  std::string_view partition, service, region, account, resource;
};

std::optional<ArnParts> SplitArn(std::string_view arn) {
  std::array<std::string_view, 5> head;
  size_t start = 0;
  for (std::string_view& field : head) {
    size_t colon = arn.find(':', start);
    if (colon == std::string_view::npos) return std::nullopt;
    field = arn.substr(start, colon - start);
    start = colon + 1;
  }
  if (head[0] != "arn") return std::nullopt;
  return ArnParts{head[1], head[2], head[3], head[4], arn.substr(start)};
}

struct ArnPattern {
  bool matches_everything = false;  // "*"
  Pattern partition, service, resource;
};

Result<ArnPattern> CompileArnPattern(std::string_view text, bool variables, std::string_view path) {
  ArnPattern arn;
  if (text == "*") {
    arn.matches_everything = true;
    return arn;
  }
  std::optional<ArnParts> parts = SplitArn(text);
  if (!parts || parts->partition.empty() || parts->service.empty()) {
    return Invalid(path, Quote(text) + " is not \"*\" or an ARN of the form arn:aws:SERVICE:::RESOURCE");
  }
  auto region_or_account_ok = [](std::string_view field) { return field.empty() || field == "*"; };
  if (!region_or_account_ok(parts->region) || !region_or_account_ok(parts->account)) {
    return Invalid(path, Quote(text) +
                             ": serac has no regions or accounts; leave both fields empty or \"*\", as in "
                             "arn:aws:s3:::bucket/*");
  }
  PatternSyntax plain{.wildcards = true, .variables = false, .lower = false};
  SERAC_ASSIGN_OR_RETURN(arn.partition, CompilePattern(parts->partition, plain, path));
  SERAC_ASSIGN_OR_RETURN(arn.service, CompilePattern(parts->service, plain, path));
  PatternSyntax resource{.wildcards = true, .variables = variables, .lower = false};
  SERAC_ASSIGN_OR_RETURN(arn.resource, CompilePattern(parts->resource, resource, path));
  return arn;
}

bool ArnMatches(const ArnPattern& pattern, const std::optional<ArnParts>& request,
                const ConditionContext* context) {
  if (pattern.matches_everything) return true;
  if (!request) return false;
  return Matches(pattern.partition, request->partition, false, nullptr) &&
         Matches(pattern.service, request->service, false, nullptr) &&
         Matches(pattern.resource, request->resource, false, context);
}

// ---------------------------------------------------------------------------------------------
// Conditions.

enum class ValueKind : uint8_t { kString, kNumeric, kBool, kIp, kNull };
enum class NumericTest : uint8_t { kEqual, kLess, kLessEqual, kGreater, kGreaterEqual };

struct OperatorInfo {
  std::string_view name;
  ValueKind kind;
  bool negated = false;      // true when the key is absent; the result of the match is inverted
  bool ignore_case = false;  // String*IgnoreCase
  bool wildcards = false;    // *Like, Arn*
  NumericTest numeric = NumericTest::kEqual;
};

constexpr std::array<OperatorInfo, 20> kOperators = {{
    {"StringEquals", ValueKind::kString},
    {"StringNotEquals", ValueKind::kString, true},
    {"StringEqualsIgnoreCase", ValueKind::kString, false, true},
    {"StringNotEqualsIgnoreCase", ValueKind::kString, true, true},
    {"StringLike", ValueKind::kString, false, false, true},
    {"StringNotLike", ValueKind::kString, true, false, true},
    // As in AWS, ArnEquals and ArnLike both honour wildcards.
    {"ArnEquals", ValueKind::kString, false, false, true},
    {"ArnLike", ValueKind::kString, false, false, true},
    {"ArnNotEquals", ValueKind::kString, true, false, true},
    {"ArnNotLike", ValueKind::kString, true, false, true},
    {"NumericEquals", ValueKind::kNumeric},
    {"NumericNotEquals", ValueKind::kNumeric, true},
    {"NumericLessThan", ValueKind::kNumeric, false, false, false, NumericTest::kLess},
    {"NumericLessThanEquals", ValueKind::kNumeric, false, false, false, NumericTest::kLessEqual},
    {"NumericGreaterThan", ValueKind::kNumeric, false, false, false, NumericTest::kGreater},
    {"NumericGreaterThanEquals", ValueKind::kNumeric, false, false, false, NumericTest::kGreaterEqual},
    {"Bool", ValueKind::kBool},
    {"IpAddress", ValueKind::kIp},
    {"NotIpAddress", ValueKind::kIp, true},
    {"Null", ValueKind::kNull},
}};

enum class SetQualifier : uint8_t { kNone, kForAnyValue, kForAllValues };

struct IpNetwork {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};
  int prefix_bits = 0;
};

struct IpAddress {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};
};

std::optional<IpAddress> ParseIp(std::string_view text) {
  char buffer[64];
  if (text.empty() || text.size() >= sizeof(buffer)) return std::nullopt;
  std::memcpy(buffer, text.data(), text.size());
  buffer[text.size()] = '\0';
  IpAddress ip;
  if (inet_pton(AF_INET, buffer, ip.bytes.data()) == 1) return ip;
  if (inet_pton(AF_INET6, buffer, ip.bytes.data()) != 1) return std::nullopt;
  // An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is the IPv4 address it carries.
  static constexpr std::array<uint8_t, 12> kMappedPrefix = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::equal(kMappedPrefix.begin(), kMappedPrefix.end(), ip.bytes.begin())) {
    std::memmove(ip.bytes.data(), ip.bytes.data() + 12, 4);
    std::fill(ip.bytes.begin() + 4, ip.bytes.end(), 0);
    return ip;
  }
  ip.v6 = true;
  return ip;
}

std::optional<IpNetwork> ParseNetwork(std::string_view text) {
  std::string_view address = text;
  std::optional<int> prefix_bits;
  if (size_t slash = text.find('/'); slash != std::string_view::npos) {
    address = text.substr(0, slash);
    std::string_view digits = text.substr(slash + 1);
    int bits = -1;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), bits);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
    prefix_bits = bits;
  }
  std::optional<IpAddress> ip = ParseIp(address);
  if (!ip) return std::nullopt;
  int width = ip->v6 ? 128 : 32;
  int bits = prefix_bits.value_or(width);
  if (bits < 0 || bits > width) return std::nullopt;
  return IpNetwork{ip->v6, ip->bytes, bits};
}

bool NetworkContains(const IpNetwork& network, const IpAddress& ip) {
  if (network.v6 != ip.v6) return false;
  int full_bytes = network.prefix_bits / 8;
  if (!std::equal(network.bytes.begin(), network.bytes.begin() + full_bytes, ip.bytes.begin())) return false;
  int rest_bits = network.prefix_bits % 8;
  if (rest_bits == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xFF << (8 - rest_bits));
  return (network.bytes[full_bytes] & mask) == (ip.bytes[full_bytes] & mask);
}

std::optional<double> ParseNumber(std::string_view text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<bool> ParseBool(std::string_view text) {
  if (EqualsFold(text, "true")) return true;
  if (EqualsFold(text, "false")) return false;
  return std::nullopt;
}

struct Clause {
  const OperatorInfo* op = nullptr;
  SetQualifier set = SetQualifier::kNone;
  bool if_exists = false;
  std::string key;  // lower case
  // The policy's values, in the form the operator needs; one of these is filled.
  std::vector<Pattern> patterns;
  std::vector<double> numbers;
  std::vector<bool> booleans;
  std::vector<IpNetwork> networks;
};

// Does one value from the request match any of the clause's values (before negation)?
bool ValueMatches(const Clause& clause, std::string_view value, const ConditionContext* context) {
  switch (clause.op->kind) {
    case ValueKind::kString:
      return std::any_of(clause.patterns.begin(), clause.patterns.end(), [&](const Pattern& pattern) {
        return Matches(pattern, value, clause.op->ignore_case, context);
      });
    case ValueKind::kNumeric: {
      std::optional<double> number = ParseNumber(value);
      if (!number) return false;
      return std::any_of(clause.numbers.begin(), clause.numbers.end(), [&](double bound) {
        switch (clause.op->numeric) {
          case NumericTest::kEqual:
            return *number == bound;
          case NumericTest::kLess:
            return *number < bound;
          case NumericTest::kLessEqual:
            return *number <= bound;
          case NumericTest::kGreater:
            return *number > bound;
          case NumericTest::kGreaterEqual:
            return *number >= bound;
        }
        return false;
      });
    }
    case ValueKind::kBool: {
      std::optional<bool> flag = ParseBool(value);
      return flag &&
             std::find(clause.booleans.begin(), clause.booleans.end(), *flag) != clause.booleans.end();
    }
    case ValueKind::kIp: {
      std::optional<IpAddress> ip = ParseIp(value);
      if (!ip) return false;
      return std::any_of(clause.networks.begin(), clause.networks.end(),
                         [&](const IpNetwork& network) { return NetworkContains(network, *ip); });
    }
    case ValueKind::kNull:
      return false;  // handled in ClauseHolds
  }
  return false;
}

// AWS's rules: values of one key OR together; a positive operator needs some request value to
// match, a negated one needs none to; ForAnyValue needs some request value to satisfy the
// operator (false when the key is absent), ForAllValues needs every one to (true when absent);
// IfExists makes an absent key true; an absent key otherwise fails positive operators and
// satisfies negated ones. Null tests only whether the key is absent.
bool ClauseHolds(const Clause& clause, const ConditionContext* context) {
  const std::vector<std::string>* values = context != nullptr ? context->Find(clause.key) : nullptr;
  bool absent = values == nullptr || values->empty();
  if (clause.op->kind == ValueKind::kNull) {
    return std::find(clause.booleans.begin(), clause.booleans.end(), absent) != clause.booleans.end();
  }
  if (absent) {
    if (clause.if_exists) return true;
    switch (clause.set) {
      case SetQualifier::kForAllValues:
        return true;
      case SetQualifier::kForAnyValue:
        return false;
      case SetQualifier::kNone:
        return clause.op->negated;
    }
  }
  auto satisfies = [&](const std::string& value) {
    return ValueMatches(clause, value, context) != clause.op->negated;
  };
  bool every =
      clause.set == SetQualifier::kForAllValues || (clause.set == SetQualifier::kNone && clause.op->negated);
  return every ? std::all_of(values->begin(), values->end(), satisfies)
               : std::any_of(values->begin(), values->end(), satisfies);
}

// ---------------------------------------------------------------------------------------------
// Statements.

struct Statement {
  bool allow = false;
  bool not_action = false;
  std::vector<Pattern> actions;  // lower case
  bool not_resource = false;
  std::vector<ArnPattern> resources;
  std::vector<Clause> conditions;
};

bool StatementApplies(const Statement& statement, std::string_view action,
                      const std::optional<ArnParts>& resource, const ConditionContext* context) {
  bool action_listed =
      std::any_of(statement.actions.begin(), statement.actions.end(),
                  [&](const Pattern& pattern) { return Matches(pattern, action, true, nullptr); });
  if (action_listed == statement.not_action) return false;
  bool resource_listed =
      std::any_of(statement.resources.begin(), statement.resources.end(),
                  [&](const ArnPattern& pattern) { return ArnMatches(pattern, resource, context); });
  if (resource_listed == statement.not_resource) return false;
  return std::all_of(statement.conditions.begin(), statement.conditions.end(),
                     [&](const Clause& clause) { return ClauseHolds(clause, context); });
}

}  // namespace

struct Policy::Compiled {
  std::string json;
  std::vector<Statement> statements;
};

namespace {

PolicyDecision EvaluateCompiled(const Policy::Compiled& compiled, std::string_view action,
                                const std::optional<ArnParts>& resource, const ConditionContext* context) {
  bool allowed = false;
  for (const Statement& statement : compiled.statements) {
    if (!StatementApplies(statement, action, resource, context)) continue;
    if (!statement.allow) return PolicyDecision::kExplicitDeny;
    allowed = true;
  }
  return allowed ? PolicyDecision::kAllow : PolicyDecision::kImplicitDeny;
}

// ---------------------------------------------------------------------------------------------
// Parsing.

// Parses JSON, refusing duplicate object keys: a reader of the document must see what serac sees.
Result<Json> ParseStrictJson(std::string_view text) {
  if (!JsonNestingWithin(text, limits::kJsonNestingDepthMax)) {
    return Invalid("document", "nested deeper than limits::kJsonNestingDepthMax (" +
                                   std::to_string(limits::kJsonNestingDepthMax) + " levels)");
  }
  std::vector<std::set<std::string>> keys_per_object;
  std::string duplicate;
  auto callback = [&](int /*depth*/, nlohmann::json::parse_event_t event, Json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) {
      keys_per_object.emplace_back();
    } else if (event == Event::object_end) {
      if (!keys_per_object.empty()) keys_per_object.pop_back();
    } else if (event == Event::key && !keys_per_object.empty() && parsed.is_string()) {
      if (!keys_per_object.back().insert(parsed.get<std::string>()).second && duplicate.empty()) {
        duplicate = parsed.get<std::string>();
      }
    }
    return true;
  };
  try {
    Json document = Json::parse(text.begin(), text.end(), callback);
    if (!duplicate.empty())
      return Invalid("document", "field " + Quote(duplicate) + " appears twice in one object");
    return document;
  } catch (const Json::exception& e) {
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." -> from "parse error".
    if (size_t bracket = what.find("] "); bracket != std::string::npos) what.erase(0, bracket + 2);
    return Invalid("document", "not valid JSON: " + what);
  }
}

std::string JsonTypeName(const Json& value) { return value.type_name(); }

// A scalar condition value as text: strings as is, booleans and numbers as JSON writes them.
std::optional<std::string> ScalarText(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean() || value.is_number()) return value.dump();
  return std::nullopt;
}

// A string or a non-empty array of strings.
Result<std::vector<std::string>> StringList(const Json& value, const std::string& path) {
  std::vector<std::string> out;
  if (value.is_string()) {
    out.push_back(value.get<std::string>());
    return out;
  }
  if (!value.is_array())
    return Invalid(path, "must be a string or an array of strings, not " + JsonTypeName(value));
  if (value.empty()) return Invalid(path, "must not be an empty array");
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string()) {
      return Invalid(path + "[" + std::to_string(i) + "]", "must be a string, not " + JsonTypeName(value[i]));
    }
    out.push_back(value[i].get<std::string>());
  }
  return out;
}

bool IsActionChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '*' || c == '?';
}

Status ValidateAction(std::string_view action, std::string_view path) {
  if (action == "*") return Status::Ok();
  size_t colon = action.find(':');
  bool well_formed = colon != std::string_view::npos && colon > 0 && colon + 1 < action.size();
  for (size_t i = 0; well_formed && i < action.size(); ++i) {
    well_formed = i == colon || IsActionChar(action[i]);
  }
  if (!well_formed) {
    return Invalid(path,
                   Quote(action) + " is not \"*\" or an action of the form service:Name (e.g. s3:GetObject)");
  }
  return Status::Ok();
}

// Splits an operator name into set qualifier, operator and IfExists suffix.
Status ParseOperatorName(std::string_view name, Clause& clause, std::string_view path) {
  std::string_view base = name;
  if (base.starts_with("ForAnyValue:")) {
    clause.set = SetQualifier::kForAnyValue;
    base.remove_prefix(std::string_view("ForAnyValue:").size());
  } else if (base.starts_with("ForAllValues:")) {
    clause.set = SetQualifier::kForAllValues;
    base.remove_prefix(std::string_view("ForAllValues:").size());
  }
  if (base.ends_with("IfExists")) {
    clause.if_exists = true;
    base.remove_suffix(std::string_view("IfExists").size());
  }
  for (const OperatorInfo& op : kOperators) {
    if (op.name == base) clause.op = &op;
  }
  if (clause.op == nullptr) {
    return Invalid(path, "unknown condition operator " + Quote(name) +
                             " (known: String[Not]Equals[IgnoreCase], String[Not]Like, Arn[Not]Equals, "
                             "Arn[Not]Like, Numeric*, Bool, [Not]IpAddress, Null; prefixes ForAnyValue:/"
                             "ForAllValues:, suffix IfExists)");
  }
  if (clause.op->kind == ValueKind::kNull && (clause.if_exists || clause.set != SetQualifier::kNone)) {
    return Invalid(path, "the Null operator takes no ForAnyValue:/ForAllValues: prefix or IfExists suffix");
  }
  return Status::Ok();
}

Status AddConditionValue(Clause& clause, const std::string& text, bool variables, const std::string& path) {
  switch (clause.op->kind) {
    case ValueKind::kString: {
      PatternSyntax syntax{.wildcards = clause.op->wildcards, .variables = variables, .lower = false};
      SERAC_ASSIGN_OR_RETURN(Pattern pattern, CompilePattern(text, syntax, path));
      clause.patterns.push_back(std::move(pattern));
      return Status::Ok();
    }
    case ValueKind::kNumeric: {
      std::optional<double> number = ParseNumber(text);
      if (!number) return Invalid(path, Quote(text) + " is not a number");
      clause.numbers.push_back(*number);
      return Status::Ok();
    }
    case ValueKind::kBool:
    case ValueKind::kNull: {
      std::optional<bool> flag = ParseBool(text);
      if (!flag) return Invalid(path, Quote(text) + " is not \"true\" or \"false\"");
      clause.booleans.push_back(*flag);
      return Status::Ok();
    }
    case ValueKind::kIp: {
      std::optional<IpNetwork> network = ParseNetwork(text);
      if (!network) return Invalid(path, Quote(text) + " is not an IPv4 or IPv6 address or CIDR block");
      clause.networks.push_back(*network);
      return Status::Ok();
    }
  }
  return Status::Ok();
}

Status ParseCondition(const Json& block, bool variables, const std::string& path, Statement& statement) {
  if (!block.is_object()) return Invalid(path, "must be an object { operator: { key: value } }");
  for (const auto& [op_name, keys] : block.items()) {
    std::string op_path = path + "." + op_name;
    Clause prototype;
    SERAC_RETURN_IF_ERROR(ParseOperatorName(op_name, prototype, op_path));
    if (!keys.is_object() || keys.empty()) {
      return Invalid(op_path, "must be a non-empty object { condition key: value or [values] }");
    }
    for (const auto& [key, values] : keys.items()) {
      std::string key_path = op_path + "." + key;
      size_t colon = key.find(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == key.size()) {
        return Invalid(key_path,
                       "condition key " + Quote(key) + " must have the form prefix:name, e.g. aws:username");
      }
      Clause clause = prototype;
      clause.key = ToLower(key);
      if (values.is_array()) {
        if (values.empty()) return Invalid(key_path, "must not be an empty array");
        for (size_t i = 0; i < values.size(); ++i) {
          std::string value_path = key_path + "[" + std::to_string(i) + "]";
          std::optional<std::string> text = ScalarText(values[i]);
          if (!text)
            return Invalid(value_path, "must be a string, number or boolean, not " + JsonTypeName(values[i]));
          SERAC_RETURN_IF_ERROR(AddConditionValue(clause, *text, variables, value_path));
        }
      } else {
        std::optional<std::string> text = ScalarText(values);
        if (!text) {
          return Invalid(
              key_path, "must be a string, number, boolean or an array of them, not " + JsonTypeName(values));
        }
        SERAC_RETURN_IF_ERROR(AddConditionValue(clause, *text, variables, key_path));
      }
      statement.conditions.push_back(std::move(clause));
    }
  }
  return Status::Ok();
}

// Exactly one of `name` / `not_name` must be present; returns which one and its value.
Result<std::pair<bool, const Json*>> OneOf(const Json& object, const char* name, const char* not_name,
                                           const std::string& path) {
  bool has = object.contains(name);
  bool has_not = object.contains(not_name);
  if (has == has_not) {
    return Invalid(
        path, std::string(has ? "has both " : "needs one of ") + name + (has ? " and " : " or ") + not_name);
  }
  return std::make_pair(has_not, &object[has ? name : not_name]);
}

Result<Statement> ParseStatement(const Json& input, bool variables, const std::string& path, Json& canonical,
                                 std::set<std::string>& sids) {
  if (!input.is_object()) return Invalid(path, "must be an object, not " + JsonTypeName(input));
  for (const auto& [field, value] : input.items()) {
    if (field == "Principal" || field == "NotPrincipal") {
      return Invalid(path + "." + field,
                     "not allowed: this is an identity policy, which applies to the users and groups it is "
                     "attached to");
    }
    static constexpr std::array<std::string_view, 7> kFields = {
        "Sid", "Effect", "Action", "NotAction", "Resource", "NotResource", "Condition"};
    if (std::find(kFields.begin(), kFields.end(), field) == kFields.end()) {
      return Invalid(
          path + "." + field,
          "unknown field (a statement has Sid, Effect, Action or NotAction, Resource or NotResource, "
          "Condition)");
    }
  }
  Statement statement;
  canonical = Json::object();

  if (input.contains("Sid")) {
    const Json& sid = input["Sid"];
    if (!sid.is_string()) return Invalid(path + ".Sid", "must be a string");
    std::string text = sid.get<std::string>();
    if (!text.empty() && !sids.insert(text).second) {
      return Invalid(path + ".Sid", Quote(text) + " is used by another statement; Sids must be unique");
    }
    canonical["Sid"] = sid;
  }

  if (!input.contains("Effect")) return Invalid(path, "needs an Effect (\"Allow\" or \"Deny\")");
  const Json& effect = input["Effect"];
  if (effect != "Allow" && effect != "Deny") {
    return Invalid(path + ".Effect", "must be \"Allow\" or \"Deny\", not " + effect.dump());
  }
  statement.allow = effect == "Allow";
  canonical["Effect"] = effect;

  SERAC_ASSIGN_OR_RETURN(auto action, OneOf(input, "Action", "NotAction", path));
  statement.not_action = action.first;
  std::string action_path = path + (action.first ? ".NotAction" : ".Action");
  SERAC_ASSIGN_OR_RETURN(std::vector<std::string> actions, StringList(*action.second, action_path));
  for (const std::string& text : actions) {
    SERAC_RETURN_IF_ERROR(ValidateAction(text, action_path));
    PatternSyntax syntax{.wildcards = true, .variables = false, .lower = true};
    SERAC_ASSIGN_OR_RETURN(Pattern pattern, CompilePattern(text, syntax, action_path));
    statement.actions.push_back(std::move(pattern));
  }
  canonical[action.first ? "NotAction" : "Action"] = *action.second;

  SERAC_ASSIGN_OR_RETURN(auto resource, OneOf(input, "Resource", "NotResource", path));
  statement.not_resource = resource.first;
  std::string resource_path = path + (resource.first ? ".NotResource" : ".Resource");
  SERAC_ASSIGN_OR_RETURN(std::vector<std::string> resources, StringList(*resource.second, resource_path));
  for (const std::string& text : resources) {
    SERAC_ASSIGN_OR_RETURN(ArnPattern pattern, CompileArnPattern(text, variables, resource_path));
    statement.resources.push_back(std::move(pattern));
  }
  canonical[resource.first ? "NotResource" : "Resource"] = *resource.second;

  if (input.contains("Condition")) {
    SERAC_RETURN_IF_ERROR(ParseCondition(input["Condition"], variables, path + ".Condition", statement));
    canonical["Condition"] = input["Condition"];
  }
  return statement;
}

Result<std::shared_ptr<Policy::Compiled>> ParseDocument(std::string_view text) {
  if (text.size() > limits::kPolicyDocumentBytesMax) {
    return Error(ErrorCode::kLimitExceeded, "policy document is " + std::to_string(text.size()) +
                                                " bytes; the limit (kPolicyDocumentBytesMax) is " +
                                                std::to_string(limits::kPolicyDocumentBytesMax) + " bytes");
  }
  SERAC_ASSIGN_OR_RETURN(Json document, ParseStrictJson(text));
  if (!document.is_object())
    return Invalid("document", "must be a JSON object, not " + JsonTypeName(document));
  for (const auto& [field, value] : document.items()) {
    if (field != "Version" && field != "Id" && field != "Statement") {
      return Invalid(field, "unknown field (a policy has Version, Id and Statement)");
    }
  }
  Json canonical = Json::object();

  if (!document.contains("Version")) return Invalid("Version", "missing; use \"2012-10-17\"");
  const Json& version = document["Version"];
  if (version != "2012-10-17" && version != "2008-10-17") {
    return Invalid("Version", "must be \"2012-10-17\" (or \"2008-10-17\"), not " + version.dump());
  }
  // Policy variables exist since 2012-10-17; in older documents "${...}" is plain text.
  bool variables = version == "2012-10-17";
  canonical["Version"] = version;

  if (document.contains("Id")) {
    if (!document["Id"].is_string()) return Invalid("Id", "must be a string");
    canonical["Id"] = document["Id"];
  }

  if (!document.contains("Statement")) return Invalid("Statement", "missing");
  const Json& input = document["Statement"];
  std::vector<const Json*> inputs;
  if (input.is_object()) {
    inputs.push_back(&input);
  } else if (input.is_array()) {
    for (const Json& element : input) inputs.push_back(&element);
  } else {
    return Invalid("Statement", "must be an object or an array of objects, not " + JsonTypeName(input));
  }
  if (inputs.empty()) return Invalid("Statement", "must hold at least one statement");
  if (inputs.size() > limits::kPolicyStatementsMax) {
    return Error(ErrorCode::kLimitExceeded, "policy Statement: " + std::to_string(inputs.size()) +
                                                " statements; the limit (kPolicyStatementsMax) is " +
                                                std::to_string(limits::kPolicyStatementsMax));
  }

  auto compiled = std::make_shared<Policy::Compiled>();
  Json canonical_statements = Json::array();
  std::set<std::string> sids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string path = input.is_array() ? "Statement[" + std::to_string(i) + "]" : "Statement";
    Json canonical_statement;
    SERAC_ASSIGN_OR_RETURN(Statement statement,
                           ParseStatement(*inputs[i], variables, path, canonical_statement, sids));
    compiled->statements.push_back(std::move(statement));
    canonical_statements.push_back(std::move(canonical_statement));
  }
  canonical["Statement"] =
      input.is_array() ? std::move(canonical_statements) : std::move(canonical_statements[0]);
  compiled->json = canonical.dump();
  return compiled;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public API.

void ConditionContext::Add(std::string_view key, std::string value) {
  for (Entry& entry : entries_) {
    if (EqualsFold(entry.key_lower, key)) {
      entry.values.push_back(std::move(value));
      return;
    }
  }
  entries_.push_back(Entry{ToLower(key), {std::move(value)}});
}

void ConditionContext::Set(std::string_view key, std::string value) {
  for (Entry& entry : entries_) {
    if (EqualsFold(entry.key_lower, key)) {
      entry.values.assign(1, std::move(value));
      return;
    }
  }
  entries_.push_back(Entry{ToLower(key), {std::move(value)}});
}

const std::vector<std::string>* ConditionContext::Find(std::string_view key) const {
  for (const Entry& entry : entries_) {
    if (EqualsFold(entry.key_lower, key)) return &entry.values;
  }
  return nullptr;
}

Result<Policy> Policy::Parse(std::string_view json) {
  try {
    SERAC_ASSIGN_OR_RETURN(std::shared_ptr<Compiled> compiled, ParseDocument(json));
    return Policy(std::move(compiled));
  } catch (const nlohmann::json::exception& e) {
    // Not expected (every access is type-checked first); keep it a value all the same.
    return Error(ErrorCode::kInvalidArgument, std::string("policy document: ") + e.what());
  }
}

const std::string& Policy::json() const { return compiled_->json; }

PolicyDecision Policy::Evaluate(const AccessRequest& request) const {
  return EvaluateCompiled(*compiled_, request.action, SplitArn(request.resource), request.context);
}

PolicyDecision Evaluate(std::span<const Policy* const> policies, const AccessRequest& request) {
  std::optional<ArnParts> resource = SplitArn(request.resource);  // once for all policies
  bool allowed = false;
  for (const Policy* policy : policies) {
    if (policy == nullptr) continue;
    switch (EvaluateCompiled(*policy->compiled_, request.action, resource, request.context)) {
      case PolicyDecision::kExplicitDeny:
        return PolicyDecision::kExplicitDeny;
      case PolicyDecision::kAllow:
        allowed = true;
        break;
      case PolicyDecision::kImplicitDeny:
        break;
    }
  }
  return allowed ? PolicyDecision::kAllow : PolicyDecision::kImplicitDeny;
}

std::string S3BucketArn(std::string_view bucket) { return "arn:aws:s3:::" + std::string(bucket); }

std::string S3ObjectArn(std::string_view bucket, std::string_view key) {
  std::string arn = S3BucketArn(bucket);
  arn += '/';
  arn += key;
  return arn;
}

std::string TablesWarehouseArn(std::string_view warehouse) {
  return "arn:aws:s3tables:::bucket/" + std::string(warehouse);
}

std::string TablesTableArn(std::string_view warehouse, std::string_view table_uuid) {
  return TablesWarehouseArn(warehouse) + "/table/" + std::string(table_uuid);
}

std::string TablesViewArn(std::string_view warehouse, std::string_view view_uuid) {
  return TablesWarehouseArn(warehouse) + "/view/" + std::string(view_uuid);
}

std::string_view S3ServiceArn() { return "arn:aws:s3:::"; }
std::string_view TablesServiceArn() { return "arn:aws:s3tables:::bucket/"; }
std::string_view AdminServiceArn() { return "arn:aws:admin:::"; }
std::string AdminUserArn(std::string_view user) { return "arn:aws:admin:::user/" + std::string(user); }
std::string AdminAccessKeyArn(std::string_view user, std::string_view access_key) {
  return AdminUserArn(user) + "/access-key/" + std::string(access_key);
}
std::string AdminPolicyArn(std::string_view policy) {
  return "arn:aws:admin:::policy/" + std::string(policy);
}

// ---------------------------------------------------------------------------------------------
// Built-in policies.

namespace {

struct BuiltinText {
  std::string_view name;
  std::string_view json;
};

// The s3tables read-only set is "Get*" and "List*": the action names on record for AIStor
// (GetWarehouse, ListWarehouses, GetNamespace, ListNamespaces, GetTable, ListTables, and the view
// equivalents) are incomplete, and by IAM convention every Get/List action only reads.
// The same holds for S3 (GetObject, GetBucketLocation, ListBucket, ListAllMyBuckets, ...).
// writeonly: s3:PutObject also covers CreateMultipartUpload, UploadPart and
// CompleteMultipartUpload, as in AWS.
constexpr std::array<BuiltinText, 4> kBuiltins = {{
    {"readwrite", R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:*","s3tables:*"],)"
                  R"("Resource":["arn:aws:s3:::*","arn:aws:s3tables:::bucket/*"]}]})"},
    {"readonly",
     R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:Get*","s3:List*",)"
     R"("s3tables:Get*","s3tables:List*"],"Resource":["arn:aws:s3:::*","arn:aws:s3tables:::bucket/*"]}]})"},
    {"writeonly", R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:PutObject",)"
                  R"("s3:AbortMultipartUpload"],"Resource":["arn:aws:s3:::*"]}]})"},
    {"consoleAdmin",
     R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["admin:*","s3:*","s3tables:*"],)"
     R"("Resource":["*"]}]})"},
}};

constexpr std::array<std::string_view, kBuiltins.size()> kBuiltinNames = {
    kBuiltins[0].name, kBuiltins[1].name, kBuiltins[2].name, kBuiltins[3].name};

const std::vector<Policy>& BuiltinPolicies() {
  static const std::vector<Policy> policies = [] {
    std::vector<Policy> out;
    for (const BuiltinText& builtin : kBuiltins) {
      Result<Policy> policy = Policy::Parse(builtin.json);
      if (policy.ok()) out.push_back(std::move(policy).value());  // policy_test checks all parse
    }
    return out;
  }();
  return policies;
}

}  // namespace

const Policy* BuiltinPolicy(std::string_view name) {
  const std::vector<Policy>& policies = BuiltinPolicies();
  for (size_t i = 0; i < kBuiltins.size() && i < policies.size(); ++i) {
    if (kBuiltins[i].name == name) return &policies[i];
  }
  return nullptr;
}

std::span<const std::string_view> BuiltinPolicyNames() { return kBuiltinNames; }

}  // namespace serac::auth
