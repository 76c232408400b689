// PostgreSQL's text of a value as the Iceberg value type_mapping.h chose for its column: what a
// full-load reader gets from COPY ... TO STDOUT and what pgoutput sends for a changed row. The
// connection's settings fix the forms (postgres.cc: TimeZone UTC, DateStyle ISO, bytea in hex,
// extra_float_digits 3, lc_monetary C), so each type has one text to read:
//   boolean "t"/"f"; integers in decimal; floats with NaN and [-]Infinity; numeric(p,s) with
//   exactly s fraction digits; money "$1,234.56" / "-$1,234.56"; date "2024-02-29" ("... BC");
//   time "13:45:00.123456"; timestamp "2024-02-29 13:45:00.123456"; timestamptz with its offset
//   "+00" (any offset is honoured); uuid in its usual form; bytea "\x0a0b"; arrays "{1,NULL,"a b"}"
//   of one dimension, elements read as the element type.
// A value an Iceberg type cannot hold ("infinity" dates and timestamps, a NaN numeric, a
// multi-dimensional array) is kInvalidArgument saying so; the caller names the table, row and
// column. Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "iceberg/schema/schema.h"
#include "parquet/parquet_files.h"

namespace serac::sync {

// `text` (nullopt: SQL NULL) as a value of `type`.
Result<parquet::RowValue> ValueFromText(const std::optional<std::string_view>& text,
                                        const iceberg::Type& type);

// One row of COPY's text format (without its newline) as its fields, unescaped; nullopt for \N.
// kInvalidArgument for an escape that does not end.
Status SplitCopyLine(std::string_view line, std::vector<std::optional<std::string>>& fields);

}  // namespace serac::sync
