// The configuration files of `serac sync`, which are OLake's: source.json (a PostgreSQL source),
// destination.json (an Iceberg writer on a REST catalog), streams.json (the tables found by
// discover and those selected, with their modes and settings). A user points serac at files that
// work with OLake and they work. Every field is checked for its type and range, and an error names
// the file and the field ("source.json: update_method.initial_wait_time: ..."); a field serac does
// not use is never silently dropped but reported once, with the reason, as a ConfigNotice.
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sync/stream_filter.h"

namespace serac::sync {

// A field serac reads but does not act on, or does not know.
struct ConfigNotice {
  std::string file;
  std::string field;  // dotted path: "writer.arrow_writes"
  std::string message;
  std::string ToString() const { return file + ": " + field + ": " + message; }
};

// ---- source.json ----

struct PostgresSource {
  std::string host;
  int32_t port = 5432;
  std::string database;
  std::string username;
  std::string password;  // never logged or printed
  // jdbc_url_params (connection_params.h): libpq keywords, settings sent to the server, and a
  // given libpq `options` value.
  std::map<std::string, std::string> connection_params;
  std::vector<std::pair<std::string, std::string>> server_settings;
  std::string connection_options;
  // ssl.mode: disable, require, verify-ca or verify-full (libpq's sslmode); certificates as files.
  std::string ssl_mode = "disable";
  std::string ssl_root_cert;  // ssl.server_ca: PEM text, written to a private file for libpq
  std::string ssl_client_cert;
  std::string ssl_client_key;
  std::vector<std::string> schemas;  // what discover looks in; empty: every user schema
  int32_t max_threads = 3;           // concurrent source queries across every stream
  int32_t retry_count = 3;
  // update_method: CDC through a logical replication slot (pgoutput) and a publication.
  struct Replication {
    std::string slot;
    std::string publication;
    int32_t initial_wait_time_seconds = 1200;  // no change for this long ends a run that waits
  };
  std::optional<Replication> replication;
};

// ---- destination.json ----

struct IcebergDestination {
  std::string file;  // the file it was read from, for messages
  // The REST catalog (catalog_type rest, or one of OLake's REST presets).
  std::string catalog_type = "rest";
  std::string catalog_name = "olake_iceberg";
  std::string catalog_uri;        // rest_catalog_url
  std::string warehouse;          // iceberg_s3_path
  std::string default_namespace;  // iceberg_db
  enum class Auth : uint8_t { kNone, kSigV4, kOAuth2, kToken } auth = Auth::kNone;
  std::string signing_name = "s3tables";
  std::string signing_region = "us-east-1";
  std::string token;       // never logged
  std::string oauth2_uri;  // empty: the catalog's /v1/oauth/tokens
  std::string credential;  // "client_id:client_secret", never logged
  std::string oauth2_scope = "catalog";
  // S3 for the data files.
  std::string s3_endpoint;  // empty: AWS
  bool s3_path_style = true;
  bool s3_use_ssl = true;
  std::string s3_region = "us-east-1";
  std::string access_key;
  std::string secret_key;  // never logged
  std::string session_token;
  bool no_identifier_fields = false;
  // serac's own: OLake's metadata columns and soft deletes (table_sink.h).
  bool olake_columns = false;
  // serac's own: the data files' keys indexed beside state.json (parquet/key_index.h).
  bool key_index = true;
  // serac's own: the engines that will read the tables (ParseEngines), for streams that name none;
  // each stream's deletes are then of a kind all of them read (DeleteKindsReadBy).
  std::vector<std::string> engines;
};

// ---- streams.json ----

enum class SyncMode : uint8_t { kFullRefresh, kIncremental, kCdc, kStrictCdc };
Result<SyncMode> ParseSyncMode(std::string_view text);  // "full_refresh", "incremental", "cdc", "strict_cdc"
std::string_view SyncModeName(SyncMode mode);

// One source column as discover describes it: OLake's type names ("integer", "integer_small",
// "number", "number_small", "string", "boolean", "timestamp", "timestamp_micro", ..., "array",
// "object") with "null" when it may be null.
struct StreamColumn {
  std::string name;
  std::vector<std::string> types;
  std::string destination_name;  // destination_column_name; empty: the column's own name
};

struct Stream {
  std::string name;
  std::string namespace_name;
  std::vector<StreamColumn> columns;
  std::vector<SyncMode> supported_sync_modes;
  std::vector<std::string> primary_key;
  std::vector<std::string> cursor_fields;  // available_cursor_fields
  std::string cursor_field;                // "primary[:secondary]"
  SyncMode sync_mode = SyncMode::kCdc;
  std::string destination_database;
  std::string destination_table;
  std::string Id() const { return namespace_name + "." + name; }
};

// A stream chosen for sync, with its settings (selected_streams).
struct StreamSelection {
  std::string namespace_name;
  std::string stream_name;
  std::string partition_regex;  // "/{created_at, day}/{user_id, bucket[32]}"
  bool normalization = true;    // OLake's default for relational sources: typed columns
  bool append_mode = false;
  std::string chunk_column;
  std::string filter;  // as written, for streams.json
  // `filter` or `filter_config` as OLake reads them (filter_config wins, as in OLake); nullopt: none.
  std::optional<StreamFilter> row_filter;
  std::string row_filter_origin;  // "streams.json: stream public.items: filter", for messages
  std::optional<std::vector<std::string>> selected_columns;  // nullopt: every column
  bool sync_new_columns = false;
  std::string update_type;  // eq, pos or dv; empty: chosen from `engines`, else the table's format version
  // serac's own: the engines that will read the table (ParseEngines); empty: destination.json's.
  std::vector<std::string> engines;
};

// Checks an `engines` list: every name one of the engines whose reading of delete files serac knows
// (the README's table of who reads what, each cell tested): spark, trino, clickhouse, duckdb,
// pyiceberg, in any case. Returns them lowercased, each once.
Result<std::vector<std::string>> ParseEngines(const std::vector<std::string>& names, const std::string& file,
                                              const std::string& field);
// The update_types (delete kinds) every one of `engines` reads, best first: dv (a bitmap per data
// file, fastest to read), pos, eq (cheapest to write, slowest to read). No engines: all three.
std::vector<std::string> DeleteKindsReadBy(const std::vector<std::string>& engines);
// The first of `engines` that does not read `update_type`, if any.
std::optional<std::string> EngineNotReading(const std::vector<std::string>& engines,
                                            const std::string& update_type);

struct StreamCatalog {
  std::vector<Stream> streams;
  std::vector<StreamSelection> selected;
  const Stream* Find(std::string_view namespace_name, std::string_view name) const;
};

// Readers of the files' text; `file` names the file in errors and notices. Unused and unknown
// fields are appended to `notices`.
Result<PostgresSource> ParseSourceConfig(std::string_view json, const std::string& file,
                                         std::vector<ConfigNotice>& notices);
Result<IcebergDestination> ParseDestinationConfig(std::string_view json, const std::string& file,
                                                  std::vector<ConfigNotice>& notices);
Result<StreamCatalog> ParseStreams(std::string_view json, const std::string& file,
                                   std::vector<ConfigNotice>& notices);
// streams.json as OLake writes it (streams with their type schemas; selected_streams).
std::string StreamsToJson(const StreamCatalog& catalog);

// The file's bytes, refused past limits::kSyncConfigFileBytesMax; kNotFound naming the file.
Result<std::string> ReadConfigFile(const std::string& path);

// Replaces the file at `path` with `text` as a whole: written beside it, fsynced, renamed over it
// (a crash leaves the old file or the new one, never a part).
Status WriteConfigFile(const std::string& path, const std::string& text);

// JSON Schema (draft-07) of source.json, or of destination.json: every field serac reads, its type,
// default and meaning (`serac sync spec`).
std::string SourceSpecJson();
std::string DestinationSpecJson();

}  // namespace serac::sync
