// A TableCatalog of one table kept in memory, its commits applied by CommitTable as the catalog
// applies them (requirements checked, updates applied, last-updated-ms and the snapshot log kept):
// for tests of writers and table maintenance that need no server, and for dry runs of maintenance on
// a copy of a table's metadata (the catalog's table health runs snapshot expiry so).
// Thread-safety: none; one thread at a time.
#pragma once

#include <string>
#include <utility>

#include "common/clock.h"
#include "iceberg/iceberg.h"
#include "iceberg/write/table_catalog.h"

namespace serac::iceberg {

class MemoryTableCatalog final : public TableCatalog {
 public:
  explicit MemoryTableCatalog(TableMetadata metadata) : metadata_(std::move(metadata)) {}
  Result<TableMetadata> LoadTable(const TableRef&) override { return metadata_; }
  Status CommitTable(const TableRef&, const TableChanges& changes) override {
    CommitOptions options;
    // Strictly increasing, and never before now: commits check snapshot times against it.
    options.now_ms = ToUnixMillis(Now()) + ++clock_ms_;
    options.previous_metadata_location = "file:///previous.metadata.json";
    SERAC_ASSIGN_OR_RETURN(TableCommitResult result, iceberg::CommitTable(&metadata_, changes, options));
    metadata_ = std::move(result.metadata);
    ++commits_;
    return Status::Ok();
  }
  const TableMetadata& metadata() const { return metadata_; }
  int commits() const { return commits_; }

 private:
  TableMetadata metadata_;
  int64_t clock_ms_ = 0;
  int commits_ = 0;
};

}  // namespace serac::iceberg
