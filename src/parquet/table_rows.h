// The rows of a table's snapshot as a reader sees them, for people to look at (the catalog's table
// preview): the data files the snapshot's manifests list, in their order, each read by field id in
// the snapshot's schema, with every delete applied as Iceberg's rules say (the scan planner decides
// which delete files apply to which data file, as Java's DeleteFileIndex does: a data file's
// deletion vector, position deletes of the same or a later commit, equality deletes of a later
// commit, by partition), and each value rendered as display text. Reading stops as soon as enough
// rows are found: the first rows of a huge table cost its manifest list, one data manifest, the
// delete manifests and the pages of a file or two.
//
// Display text: integers in decimal; floats as the shortest text that reads back the same value,
// NaN, Infinity and -Infinity; decimals exactly, with their scale; dates YYYY-MM-DD; times
// HH:MM:SS.ffffff; timestamps YYYY-MM-DDTHH:MM:SS.ffffff (nanosecond ones with nine digits), those
// with a zone followed by +00:00; uuids in their 8-4-4-4-12 form; booleans true and false; strings
// as they are, cut on a character after CellLimits::text_bytes_max bytes and followed by "…";
// binary and fixed values as lower-case hex of at most CellLimits::binary_bytes_shown bytes, then
// "…". Structs, lists and maps are compact JSON whose values are those texts as JSON strings (or
// null): {"x":"1","y":null}, ["a","b"], {"key":"value"} (a map's keys as text), a list or map
// that grows past text_bytes_max ending with a "…" element. Years outside 0000-9999 are written
// with their sign (+10000-01-01).
//
// Thread-safety: pure functions over the FileIO given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/limits.h"
#include "common/status.h"
#include "iceberg/io/file_io.h"
#include "iceberg/metadata/table_metadata.h"
#include "iceberg/schema/partition.h"
#include "iceberg/schema/schema.h"

namespace serac::parquet {

struct CellLimits {
  uint64_t text_bytes_max = limits::kTablePreviewCellBytesMax;  // strings; the JSON of nested values
  uint64_t binary_bytes_shown = limits::kTablePreviewBinaryBytesShown;
};

// One value of a primitive type as display text; nullopt for null.
std::optional<std::string> CellText(const iceberg::Type& type, const iceberg::Datum& value,
                                    const CellLimits& limits = {});

struct TableRowsOptions {
  uint64_t rows_max = limits::kTablePreviewRowsDefault;
  // The display text of all the rows found together; reading stops once they reach it.
  uint64_t bytes_max = limits::kTablePreviewBytesMax;
  CellLimits cells;
};

// One row: a cell per top-level field of the schema read, nullopt for null. Columns of a type the
// reader does not read (variant, geometry, geography) are null.
using CellRow = std::vector<std::optional<std::string>>;

struct TableRows {
  iceberg::Schema schema;  // the snapshot's (the table's current one when the snapshot names none)
  std::vector<CellRow> rows;
  bool stopped_at_bytes = false;  // reading stopped at bytes_max, before rows_max rows
  // Delete files (each deletion vector counted once) that applied to the data files read.
  int64_t delete_files_applied = 0;
};

// At most options.rows_max rows of snapshot `snapshot_id`, read through `io`. kNotFound for a
// snapshot the table does not have; errors of a data or delete file name it (kNotFound "no such
// file: ..." for one that is gone; kInvalidArgument for one that is not readable Parquet).
Result<TableRows> ReadTableRows(iceberg::FileIO& io, const iceberg::TableMetadata& metadata,
                                int64_t snapshot_id, const TableRowsOptions& options = {});

}  // namespace serac::parquet
