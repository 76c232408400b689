// A stream's filter as OLake reads it, and the SQL condition it becomes. OLake has two forms:
// `filter`, a text of one or two conditions (`city = "London"`, `age > 20 and name = "x"`) whose
// grammar is one regular expression in OLake's code, and `filter_config`, the same conditions as
// JSON ({"logical_operator": "and", "conditions": [{"column", "operator", "value"}]}, at most two).
// Both narrow the rows a full load (and an incremental run) reads; changes are not filtered.
// Thread-safety: plain values and pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace serac::sync {

struct FilterCondition {
  enum class Value : uint8_t {
    kString,    // "text" in the filter text, a JSON string in filter_config
    kNumber,    // 20, -9.5, .5, 1e5
    kBoolean,   // true / false, any case
    kNull,      // null, any case: only with = and !=
    kBareWord,  // any other \w+ word: compared as text, as OLake does
  };
  std::string column;
  std::string op;  // =, !=, <, >, <=, >=
  Value kind = Value::kString;
  std::string value;  // without quotes
};

struct StreamFilter {
  std::vector<FilterCondition> conditions;  // one or two
  std::string connective = "AND";           // between two: AND or OR

  // The condition for PostgreSQL: columns quoted (so case-sensitive, as OLake quotes them), texts
  // as literals, numbers and booleans as they are, null as IS [NOT] NULL.
  std::string Sql() const;
};

// The filter text, read by OLake's grammar. kInvalidArgument starting with `where` ("streams.json:
// stream public.items: filter") and saying what is wrong, single-quoted strings named as such.
Result<StreamFilter> ParseFilterText(std::string_view text, const std::string& where);

// Checks a filter_config's conditions (already read from JSON): at most two, each column named and
// each operator one of OLake's; kInvalidArgument starting with `where` otherwise.
Status CheckFilterConditions(const StreamFilter& filter, const std::string& where);

}  // namespace serac::sync
