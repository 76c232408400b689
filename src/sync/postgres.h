// The PostgreSQL source over libpq (whose header stays in postgres.cc): connections made from
// source.json, queries with text parameters, what `serac sync check` verifies of a source, and
// what `serac sync discover` finds in it (tables, columns with their types, primary keys, cursor
// candidates), in OLake's streams.json shape.
// Thread-safety: a PgConnection is used by one thread; the free functions open their own.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sync/config.h"
#include "sync/type_mapping.h"

namespace serac::sync {

// A query's rows as text (nullopt: NULL).
struct PgRows {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
};

class PgConnection {
 public:
  // kUnavailable when the server cannot be reached or refuses the login (the message is libpq's,
  // never the password).
  static Result<PgConnection> Connect(const PostgresSource& source);
  PgConnection(PgConnection&&) noexcept;
  PgConnection& operator=(PgConnection&&) noexcept;
  ~PgConnection();

  // One statement with $1, $2, ... parameters given as text.
  Result<PgRows> Query(const std::string& sql, const std::vector<std::optional<std::string>>& params = {});
  // COPY (query) TO STDOUT: `on_row` gets each row as it arrives (memory holds one row): in text
  // format its line without the newline, in binary format (`binary`) the bytes as sent (the first
  // with the file header, the last the trailer). An error from `on_row` ends the copy and is returned.
  Status CopyOut(const std::string& copy_statement, const std::function<Status(std::string_view)>& on_row,
                 bool binary = false);
  int server_version() const;  // e.g. 150018

 private:
  struct Impl;
  explicit PgConnection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// "name" with its quotes doubled, as an SQL identifier.
std::string QuoteIdentifier(const std::string& name);
// `text` as a SQL string literal ('it''s'; the connection's standard_conforming_strings is on).
std::string QuoteLiteral(const std::string& text);

// A table of the source as a stream reads it: its columns in attribute order and its primary key.
struct SourceColumn {
  std::string name;
  PgType type;
  bool not_null = false;
  int32_t attnum = 0;  // pg_attribute.attnum: a renamed column keeps it (0: not known)
  // A default (pg_attribute.atthasdef or atthasmissing): rows older than the column may hold a
  // value no change carried (ADD COLUMN ... DEFAULT writes none to the WAL).
  bool filled_when_added = false;
};
struct SourceTable {
  std::string namespace_name;
  std::string name;
  uint32_t oid = 0;
  std::vector<SourceColumn> columns;
  std::vector<std::string> primary_key;  // in the key's order; empty without one
  int64_t pages = 0;                     // pg_class.relpages: how a full load cuts it into chunks
  int64_t estimated_rows = 0;            // pg_class.reltuples (-1, never analysed, becomes 0)
  std::string QualifiedName() const;     // "schema"."table", quoted
};
// kNotFound naming the table when it does not exist.
Result<SourceTable> DescribeTable(PgConnection& connection, const std::string& namespace_name,
                                  const std::string& name);

// A type by its oid (a Relation message's), with the column's type modifier.
Result<PgType> DescribeType(PgConnection& connection, uint32_t oid, int32_t type_modifier);
// The attribute numbers of a table's columns now, by name.
struct ColumnNumber {
  int32_t attnum = 0;
  bool filled_when_added = false;  // as SourceColumn's
};
Result<std::map<std::string, ColumnNumber>> ColumnNumbers(PgConnection& connection, uint32_t table_oid);

// What `check` says of a source: one line per fact; kInvalidArgument (naming the setting) for a
// source that cannot be replicated as configured.
Result<std::vector<std::string>> CheckSource(const PostgresSource& source);

// The source's tables as streams, with the sync modes it supports (cdc and strict_cdc when
// update_method is configured; incremental when a column can be a cursor). Merged with `previous`
// (an edited streams.json): its selections, sync modes, cursors and destinations are kept for
// streams that still exist; without one, every stream found is selected.
Result<StreamCatalog> DiscoverStreams(const PostgresSource& source, const StreamCatalog* previous);

}  // namespace serac::sync
