// What the commands that write tables (`table load`, `table delete`) share: the catalog and the
// S3 storage of the server the connection flags name, and the input format of a file.
#pragma once

#include <memory>
#include <string>

#include "cli/client_commands_internal.h"
#include "client/rest_catalog.h"
#include "common/status.h"
#include "iceberg/io/file_io.h"
#include "iceberg/metadata/table_metadata.h"
#include "parquet/parquet_files.h"

namespace serac::cli {

Result<std::unique_ptr<client::RestCatalog>> ConnectCatalog(const CommandState& state);
Result<std::unique_ptr<iceberg::FileIO>> ConnectStorage(const CommandState& state);
// --format when given, else from the file's extension.
Result<parquet::InputFormat> FormatOf(const CommandState& state, const std::string& path);
Result<iceberg::TableMetadata> LoadTableMetadata(client::RestCatalog& catalog,
                                                 const client::TableIdentifier& id);
// The table's location without a trailing slash.
std::string TableLocation(const iceberg::TableMetadata& table);

}  // namespace serac::cli
