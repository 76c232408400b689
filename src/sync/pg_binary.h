// A full load's rows in COPY's binary format, appended straight into the data file writer's
// builders: integers, floats, booleans, dates, times, timestamps, uuids, bytea and text as
// PostgreSQL sends them, numeric(p,s) and money as exact unscaled decimals. A column whose type has
// no binary form read here (arrays, enums, json, intervals, ...) is selected as its output
// function's text and read by pg_values.h, so every column reads the same value as COPY's text
// format and pgoutput give. PostgreSQL's binary
// formats: the send/recv functions of each type (timestamps are microseconds since 2000-01-01,
// dates days since then, numeric base-10000 digits with a weight and a display scale).
// Thread-safety: a CopyBinaryRows is used by one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "iceberg/schema/schema.h"
#include "parquet/parquet_files.h"
#include "sync/type_mapping.h"

namespace serac::sync {

// One column a full load reads: its source type and the table field it goes to.
struct LoadColumn {
  std::string name;
  PgType type;
  size_t field = 0;  // index in the table schema's top-level fields
  iceberg::Type field_type;
  std::string expression;  // what the query selects instead of the column (a computed value)
};

class CopyBinaryRows {
 public:
  explicit CopyBinaryRows(std::vector<LoadColumn> columns);

  // The SELECT list: each column as itself, or as its text where it is read from text.
  std::string SelectList() const;
  // One buffer of PQgetCopyData (one row; the first also carries the file header, the last is the
  // trailer). Appends the row's values and ends the row; `row_done` is false for the trailer.
  // kInvalidArgument naming the column for a value that does not fit (an "infinity" date, ...).
  Status Read(std::string_view buffer, parquet::RowBatchBuilder& rows, bool& row_done);

 private:
  enum class Kind : uint8_t {
    kBool,
    kInt2,
    kInt4,
    kInt8,
    kFloat4,
    kFloat8,
    kDate,
    kTime,
    kTimestamp,
    kNumeric,
    kMoney,
    kUuid,
    kBytes,
    kText,  // its text, read by pg_values.h
  };
  Status Decode(size_t column, std::string_view value, parquet::RowBatchBuilder& rows);

  std::vector<LoadColumn> columns_;
  std::vector<Kind> kinds_;
  bool header_read_ = false;
};

}  // namespace serac::sync
