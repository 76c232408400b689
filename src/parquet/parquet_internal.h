// Inside parquet/: the Arrow side of the module (Arrow's headers are included here and in the
// module's .cc files only).
#pragma once

#include <arrow/api.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <memory>
#include <string>

#include "common/status.h"
#include "iceberg/partition.h"
#include "iceberg/schema.h"
#include "parquet/parquet_files.h"

namespace serac::parquet {

// An Arrow status as serac's (kInvalidArgument unless Arrow says it is I/O or memory).
Status FromArrow(const arrow::Status& status, std::string_view context);

// The Arrow type of an Iceberg type, with `PARQUET:field_id` on every field (nested ones too).
// Iceberg's `unknown` has no Arrow column (Java writes none); kNotImplemented for variant and the
// geospatial types.
Result<std::shared_ptr<arrow::DataType>> ToArrowType(const iceberg::Type& type);
Result<std::shared_ptr<arrow::Field>> ToArrowField(const iceberg::NestedField& field);
// The table's columns as an Arrow schema (unknown columns left out), with the table schema's JSON
// as the "iceberg.schema" metadata Java writes into the footer.
Result<std::shared_ptr<arrow::Schema>> ToArrowSchema(const iceberg::Schema& schema);

// The value at `row` of a primitive column as a Datum of `type` (partition source values).
Result<iceberg::Datum> DatumAt(const arrow::Array& array, int64_t row, const iceberg::Type& type);

// The manifest metrics of a written file from its footer. `nan_counts` (per field id) come from
// the writer, which saw the values.
iceberg::DataFile MetricsFromFooter(const ::parquet::FileMetaData& footer, const iceberg::Schema& schema,
                                    const WriteOptions& options, const iceberg::ColumnCounts& nan_counts);

// A local input file's batches, as Arrow reads it: Parquet as written, CSV and JSON lines with the
// columns `arrow_schema` has read as its types. `input_bytes` (optional) grows by the file's size.
Result<std::shared_ptr<arrow::RecordBatchReader>> OpenInputBatches(const std::string& path,
                                                                   InputFormat format,
                                                                   const arrow::Schema& arrow_schema,
                                                                   uint64_t* input_bytes);

// The batch with `arrow_schema`'s columns (the table's, from ToArrowSchema(schema)), in its order
// and types; kInvalidArgument naming the file, row (`first_row` is the batch's first, 1-based) and
// column of a value that does not fit, or a column the table lacks.
Result<std::shared_ptr<arrow::RecordBatch>> ConformBatch(const arrow::RecordBatch& input,
                                                         const std::shared_ptr<arrow::Schema>& arrow_schema,
                                                         const iceberg::Schema& schema,
                                                         const std::string& path, int64_t first_row);

}  // namespace serac::parquet
