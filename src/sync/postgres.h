// The PostgreSQL source over libpq (whose header stays in postgres.cc): connections made from
// source.json, queries with text parameters, what `serac sync check` verifies of a source, and
// what `serac sync discover` finds in it (tables, columns with their types, primary keys, cursor
// candidates), in OLake's streams.json shape.
// Thread-safety: a PgConnection is used by one thread; the free functions open their own.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "sync/config.h"

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
  int server_version() const;  // e.g. 150018

 private:
  struct Impl;
  explicit PgConnection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// What `check` says of a source: one line per fact; kInvalidArgument (naming the setting) for a
// source that cannot be replicated as configured.
Result<std::vector<std::string>> CheckSource(const PostgresSource& source);

// The source's tables as streams, with the sync modes it supports (cdc and strict_cdc when
// update_method is configured; incremental when a column can be a cursor). Merged with `previous`
// (an edited streams.json): its selections, sync modes, cursors and destinations are kept for
// streams that still exist; without one, every stream found is selected.
Result<StreamCatalog> DiscoverStreams(const PostgresSource& source, const StreamCatalog* previous);

}  // namespace serac::sync
