#include "cli/table_access.h"

#include "client/s3_file_io.h"

namespace serac::cli {

Result<std::unique_ptr<client::RestCatalog>> ConnectCatalog(const CommandState& state) {
  client::RestCatalogOptions options;
  std::string endpoint = state.connection.endpoint;
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  options.uri = endpoint + "/_iceberg";
  options.warehouse = state.warehouse;
  options.access_key = state.connection.access_key;
  options.secret_key = state.connection.secret_key;
  options.region = state.connection.region;
  options.ca_file = state.connection.ca_file;
  options.insecure = state.connection.insecure;
  return client::RestCatalog::Connect(std::move(options));
}

Result<std::unique_ptr<iceberg::FileIO>> ConnectStorage(const CommandState& state) {
  client::S3ClientOptions options;
  options.endpoint = state.connection.endpoint;
  options.access_key = state.connection.access_key;
  options.secret_key = state.connection.secret_key;
  options.region = state.connection.region;
  options.ca_file = state.connection.ca_file;
  options.insecure = state.connection.insecure;
  SERAC_ASSIGN_OR_RETURN(client::S3Client s3, client::S3Client::Make(std::move(options)));
  return client::MakeS3FileIO(std::move(s3));
}

Result<parquet::InputFormat> FormatOf(const CommandState& state, const std::string& path) {
  if (!state.input_format.empty()) return parquet::ParseInputFormat(state.input_format);
  return parquet::InputFormatOfPath(path);
}

Result<iceberg::TableMetadata> LoadTableMetadata(client::RestCatalog& catalog,
                                                 const client::TableIdentifier& id) {
  SERAC_ASSIGN_OR_RETURN(client::LoadedTable loaded, catalog.LoadTable(id));
  return iceberg::TableMetadata::Parse(loaded.metadata_json);
}

std::string TableLocation(const iceberg::TableMetadata& table) {
  std::string location = table.location();
  while (!location.empty() && location.back() == '/') location.pop_back();
  return location;
}

}  // namespace serac::cli
