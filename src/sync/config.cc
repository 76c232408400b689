// OLake's configuration files read field by field from one table per file (what each field is,
// its type, default and meaning), which also gives `serac sync spec` its JSON Schema, so the
// schema and the reader cannot disagree.
#include "sync/config.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "common/encoding.h"
#include "common/file_io.h"
#include "common/json_reads.h"
#include "common/limits.h"
#include "common/random.h"
#include "sync/connection_params.h"

namespace serac::sync {
namespace {

enum class Kind : uint8_t { kString, kInteger, kBoolean, kObject, kArray, kAny };

struct FieldSpec {
  const char* name;
  Kind kind;
  const char* description;
  const char* default_json = nullptr;  // as JSON text, for the schema
  bool required = false;
  // Non-null: serac reads the field but does not act on it, and says why.
  const char* unused_reason = nullptr;
};

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kString:
      return "string";
    case Kind::kInteger:
      return "integer";
    case Kind::kBoolean:
      return "boolean";
    case Kind::kObject:
      return "object";
    case Kind::kArray:
      return "array";
    case Kind::kAny:
      return "any";
  }
  return "any";
}

constexpr FieldSpec kSourceFields[] = {
    {"host", Kind::kString, "PostgreSQL server host name or address", nullptr, true},
    {"port", Kind::kInteger, "PostgreSQL server port", "5432"},
    {"database", Kind::kString, "database to replicate", nullptr, true},
    {"username", Kind::kString, "user (needs REPLICATION for CDC and SELECT on the tables)", nullptr, true},
    {"password", Kind::kString, "password (never logged)"},
    {"jdbc_url_params", Kind::kObject,
     "extra connection parameters: libpq keywords, the JDBC driver's names (connectTimeout, ...) or server "
     "settings (statement_timeout, ...)"},
    {"ssl", Kind::kObject,
     "TLS: mode disable, require, verify-ca or verify-full; server_ca, client_cert, client_key as PEM text"},
    {"schemas", Kind::kArray, "schemas discover looks in (default: every schema but the system ones)"},
    {"max_threads", Kind::kInteger, "concurrent source queries across every stream", "3"},
    {"retry_count", Kind::kInteger, "attempts of a failed source query", "3"},
    {"update_method", Kind::kObject,
     "CDC: replication_slot (pgoutput), publication, initial_wait_time (seconds)"},
    {"ssh_config", Kind::kObject, "SSH tunnel", nullptr, false,
     "SSH tunnels are not built in; run `ssh -L` and point host and port at it"},
    {"default_mode", Kind::kString, "OLake's default sync mode for discover", nullptr, false,
     "discover chooses cdc when the source supports it, else incremental, else full_refresh"},
};

constexpr FieldSpec kReplicationFields[] = {
    {"replication_slot", Kind::kString, "logical replication slot (pgoutput); created by serac when missing",
     nullptr, true},
    {"publication", Kind::kString, "publication of the replicated tables", nullptr, true},
    {"initial_wait_time", Kind::kInteger, "seconds a run waits for a first change before it ends", "1200"},
    {"type", Kind::kString, "OLake's name of the method", nullptr, false, "CDC is always pgoutput"},
};

constexpr FieldSpec kSslFields[] = {
    {"mode", Kind::kString, "disable, require, verify-ca or verify-full", "\"disable\""},
    {"server_ca", Kind::kString, "the server's CA certificate (PEM)"},
    {"client_cert", Kind::kString, "client certificate (PEM)"},
    {"client_key", Kind::kString, "client key (PEM, never logged)"},
};

constexpr FieldSpec kDestinationFields[] = {
    {"type", Kind::kString, "ICEBERG", nullptr, true},
    {"writer", Kind::kObject, "the Iceberg writer's settings", nullptr, true},
};

constexpr FieldSpec kWriterFields[] = {
    {"catalog_type", Kind::kString, "rest, or one of the REST presets lakekeeper, nessie, s3tables, polaris",
     "\"rest\""},
    {"catalog_name", Kind::kString, "the catalog's name", "\"olake_iceberg\""},
    {"rest_catalog_url", Kind::kString, "the REST catalog's URI (serac's: http://HOST:PORT/_iceberg)",
     nullptr, true},
    {"iceberg_s3_path", Kind::kString, "the warehouse (serac and AIStor: the warehouse name)", nullptr, true},
    {"iceberg_db", Kind::kString, "the namespace of tables whose stream names none"},
    {"rest_auth_type", Kind::kString, "none, oauth2, token or sigv4 (default: sigv4 when rest_signing_v_4)"},
    {"rest_signing_v_4", Kind::kBoolean, "sign catalog requests with SigV4", "false"},
    {"rest_signing_name", Kind::kString, "SigV4 service name", "\"s3tables\""},
    {"rest_signing_region", Kind::kString, "SigV4 region", "\"us-east-1\""},
    {"token", Kind::kString, "a static bearer token (never logged)"},
    {"oauth2_uri", Kind::kString, "the OAuth2 token endpoint (default: the catalog's /v1/oauth/tokens)"},
    {"credential", Kind::kString, "OAuth2 client_id:client_secret (never logged)"},
    {"scope", Kind::kString, "OAuth2 scope", "\"catalog\""},
    {"s3_endpoint", Kind::kString, "S3 endpoint of the data files (serac's: http://HOST:PORT)"},
    {"s3_path_style", Kind::kBoolean, "path-style S3 addressing", "true"},
    {"s3_use_ssl", Kind::kBoolean, "HTTPS to S3 when s3_endpoint has no scheme", "true"},
    {"aws_region", Kind::kString, "S3 region", "\"us-east-1\""},
    {"aws_access_key", Kind::kString, "S3 access key (also signs the catalog's SigV4)"},
    {"aws_secret_key", Kind::kString, "S3 secret key (never logged)"},
    {"aws_session_token", Kind::kString, "S3 session token"},
    {"no_identifier_fields", Kind::kBoolean, "create tables without identifier-field-ids", "false"},
    {"olake_columns", Kind::kBoolean,
     "serac: write OLake's _olake_id, _op_type, _cdc_timestamp and _olake_timestamp columns and keep deleted "
     "rows as rows with _op_type d (soft deletes), for queries written for OLake's tables",
     "false"},
    {"key_index", Kind::kBoolean,
     "serac: keep an index of the data files' keys beside state.json (STATE.keys/), so that position "
     "deletes and DVs find rows without reading a data file twice",
     "true"},
    {"engines", Kind::kArray,
     "serac: the engines that will read the tables (spark, trino, clickhouse, duckdb, pyiceberg): deletes "
     "are written in a kind all of them read, for streams whose update_type and engines are unset"},
    {"aws_profile", Kind::kString, "AWS profile", nullptr, false,
     "credentials come from aws_access_key/aws_secret_key"},
    {"arrow_writes", Kind::kBoolean, "OLake's Arrow writer switch", nullptr, false,
     "serac always writes with Arrow"},
    {"normalization", Kind::kBoolean, "older configs' normalization", nullptr, false,
     "normalization is a per-stream setting in streams.json"},
    {"sink_jar_path", Kind::kString, "OLake's Java writer", nullptr, false, "serac has no Java writer"},
    {"sink_rpc_server_host", Kind::kString, "OLake's Java writer", nullptr, false,
     "serac has no Java writer"},
};

constexpr const char* kRestPresets[] = {"rest", "lakekeeper", "nessie", "s3tables", "polaris"};

Status FieldError(const std::string& file, const std::string& field, const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, file + ": " + field + ": " + message);
}

std::string Path(const std::string& prefix, std::string_view name) {
  return prefix.empty() ? std::string(name) : prefix + "." + std::string(name);
}

bool HasKind(const Json& value, Kind kind) {
  switch (kind) {
    case Kind::kString:
      return value.is_string();
    case Kind::kInteger:
      return value.is_number_integer() ||
             (value.is_string() && !value.get<std::string>().empty() &&
              value.get<std::string>().find_first_not_of("0123456789") == std::string::npos);
    case Kind::kBoolean:
      return value.is_boolean() || (value.is_string() && (value == "true" || value == "false"));
    case Kind::kObject:
      return value.is_object();
    case Kind::kArray:
      return value.is_array();
    case Kind::kAny:
      return true;
  }
  return true;
}

// One object of a file: its members checked against the field table (type, required), unknown
// and unused members reported, and typed reads of the rest.
class Fields {
 public:
  template <size_t N>
  static Result<Fields> Of(const Json& object, const std::string& file, const std::string& prefix,
                           const FieldSpec (&specs)[N], std::vector<ConfigNotice>& notices) {
    if (!object.is_object()) {
      return FieldError(file, prefix.empty() ? "(document)" : prefix, "must be a JSON object");
    }
    for (const auto& [name, value] : object.items()) {
      const FieldSpec* spec = nullptr;
      for (const FieldSpec& candidate : specs) {
        if (name == candidate.name) spec = &candidate;
      }
      if (!spec) {
        notices.push_back({file, Path(prefix, name), "unknown field, ignored"});
        continue;
      }
      if (value.is_null()) continue;
      if (!HasKind(value, spec->kind)) {
        return FieldError(file, Path(prefix, name), std::string("must be ") + KindName(spec->kind));
      }
      if (spec->unused_reason)
        notices.push_back({file, Path(prefix, name), std::string("not used: ") + spec->unused_reason});
    }
    for (const FieldSpec& spec : specs) {
      auto it = object.find(spec.name);
      if (spec.required &&
          (it == object.end() || it->is_null() || (it->is_string() && it->get<std::string>().empty()))) {
        return FieldError(file, Path(prefix, spec.name), "is required");
      }
    }
    return Fields(object, file, prefix);
  }

  bool Has(const char* name) const {
    auto it = object_.find(name);
    return it != object_.end() && !it->is_null();
  }
  std::string String(const char* name, std::string fallback = "") const {
    return Has(name) ? object_.at(name).get<std::string>() : fallback;
  }
  Result<int32_t> Integer(const char* name, int32_t fallback, int64_t min, int64_t max) const {
    if (!Has(name)) return fallback;
    const Json& value = object_.at(name);
    int64_t number = 0;
    if (value.is_string()) {
      const std::string text = value.get<std::string>();
      if (text.size() > 18) return FieldError(file_, Path(prefix_, name), "out of range");
      number = std::stoll(text);
    } else {
      number = value.get<int64_t>();
    }
    if (number < min || number > max) {
      return FieldError(file_, Path(prefix_, name),
                        "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", not " +
                            std::to_string(number));
    }
    return static_cast<int32_t>(number);
  }
  bool Boolean(const char* name, bool fallback) const {
    if (!Has(name)) return fallback;
    const Json& value = object_.at(name);
    return value.is_boolean() ? value.get<bool>() : value == "true";
  }
  const Json* Object(const char* name) const { return Has(name) ? &object_.at(name) : nullptr; }
  Result<std::vector<std::string>> Strings(const char* name) const {
    std::vector<std::string> out;
    if (!Has(name)) return out;
    for (const Json& item : object_.at(name)) {
      if (!item.is_string()) return FieldError(file_, Path(prefix_, name), "must be an array of strings");
      out.push_back(item.get<std::string>());
    }
    return out;
  }
  std::string PathOf(const char* name) const { return Path(prefix_, name); }
  const std::string& file() const { return file_; }

 private:
  Fields(const Json& object, std::string file, std::string prefix)
      : object_(object), file_(std::move(file)), prefix_(std::move(prefix)) {}
  const Json& object_;
  std::string file_;
  std::string prefix_;
};

Result<Json> ParseDocument(std::string_view text, const std::string& file) {
  auto parsed = ParseJson(text);
  if (!parsed.ok()) return Error(ErrorCode::kInvalidArgument, file + ": " + parsed.status().message());
  return std::move(parsed).value();
}

template <size_t N>
std::string SchemaOf(const FieldSpec (&specs)[N], const char* title,
                     const std::map<std::string, Json>& nested = {}) {
  Json properties = Json::object();
  Json required = Json::array();
  for (const FieldSpec& spec : specs) {
    if (spec.unused_reason) continue;
    Json property = {{"description", spec.description}};
    if (spec.kind != Kind::kAny) property["type"] = KindName(spec.kind);
    if (spec.default_json) property["default"] = Json::parse(spec.default_json);
    if (auto it = nested.find(spec.name); it != nested.end()) property.update(it->second);
    properties[spec.name] = property;
    if (spec.required) required.push_back(spec.name);
  }
  Json schema = {{"$schema", "http://json-schema.org/draft-07/schema#"},
                 {"title", title},
                 {"type", "object"},
                 {"properties", properties},
                 {"required", required}};
  return schema.dump(2);
}

}  // namespace

Result<SyncMode> ParseSyncMode(std::string_view text) {
  if (text == "full_refresh") return SyncMode::kFullRefresh;
  if (text == "incremental") return SyncMode::kIncremental;
  if (text == "cdc") return SyncMode::kCdc;
  if (text == "strict_cdc") return SyncMode::kStrictCdc;
  return Error(ErrorCode::kInvalidArgument, "not a sync mode: \"" + std::string(text) +
                                                "\" (full_refresh, incremental, cdc or strict_cdc)");
}

std::string_view SyncModeName(SyncMode mode) {
  switch (mode) {
    case SyncMode::kFullRefresh:
      return "full_refresh";
    case SyncMode::kIncremental:
      return "incremental";
    case SyncMode::kCdc:
      return "cdc";
    case SyncMode::kStrictCdc:
      return "strict_cdc";
  }
  return "cdc";
}

const Stream* StreamCatalog::Find(std::string_view namespace_name, std::string_view name) const {
  for (const Stream& stream : streams) {
    if (stream.namespace_name == namespace_name && stream.name == name) return &stream;
  }
  return nullptr;
}

Result<PostgresSource> ParseSourceConfig(std::string_view json, const std::string& file,
                                         std::vector<ConfigNotice>& notices) {
  SERAC_ASSIGN_OR_RETURN(Json document, ParseDocument(json, file));
  SERAC_ASSIGN_OR_RETURN(Fields fields, Fields::Of(document, file, "", kSourceFields, notices));
  PostgresSource source;
  source.host = fields.String("host");
  SERAC_ASSIGN_OR_RETURN(source.port, fields.Integer("port", 5432, 1, 65535));
  source.database = fields.String("database");
  source.username = fields.String("username");
  source.password = fields.String("password");
  SERAC_ASSIGN_OR_RETURN(source.schemas, fields.Strings("schemas"));
  SERAC_ASSIGN_OR_RETURN(source.max_threads, fields.Integer("max_threads", 3, 1, 256));
  SERAC_ASSIGN_OR_RETURN(source.retry_count, fields.Integer("retry_count", 3, 0, 100));
  if (const Json* params = fields.Object("jdbc_url_params")) {
    for (const auto& [key, value] : params->items()) {
      if (!value.is_string() && !value.is_number() && !value.is_boolean()) {
        return FieldError(file, "jdbc_url_params." + key, "must be a string");
      }
      SERAC_RETURN_IF_ERROR(AddJdbcUrlParam(key, value.is_string() ? value.get<std::string>() : value.dump(),
                                            file, source, notices));
    }
  }
  if (const Json* ssl = fields.Object("ssl")) {
    SERAC_ASSIGN_OR_RETURN(Fields ssl_fields, Fields::Of(*ssl, file, "ssl", kSslFields, notices));
    source.ssl_mode = ssl_fields.String("mode", "disable");
    static const std::set<std::string> kModes = {"disable", "require", "verify-ca", "verify-full"};
    if (!kModes.count(source.ssl_mode)) {
      return FieldError(
          file, "ssl.mode",
          "must be disable, require, verify-ca or verify-full, not \"" + source.ssl_mode + "\"");
    }
    source.ssl_root_cert = ssl_fields.String("server_ca");
    source.ssl_client_cert = ssl_fields.String("client_cert");
    source.ssl_client_key = ssl_fields.String("client_key");
  }
  if (const Json* method = fields.Object("update_method")) {
    SERAC_ASSIGN_OR_RETURN(Fields cdc,
                           Fields::Of(*method, file, "update_method", kReplicationFields, notices));
    PostgresSource::Replication replication;
    replication.slot = cdc.String("replication_slot");
    replication.publication = cdc.String("publication");
    // OLake accepts [120, 2400) seconds.
    SERAC_ASSIGN_OR_RETURN(replication.initial_wait_time_seconds,
                           cdc.Integer("initial_wait_time", 1200, 120, 2399));
    source.replication = std::move(replication);
  }
  return source;
}

Result<IcebergDestination> ParseDestinationConfig(std::string_view json, const std::string& file,
                                                  std::vector<ConfigNotice>& notices) {
  SERAC_ASSIGN_OR_RETURN(Json document, ParseDocument(json, file));
  SERAC_ASSIGN_OR_RETURN(Fields top, Fields::Of(document, file, "", kDestinationFields, notices));
  if (AsciiLower(top.String("type")) != "iceberg") {
    return FieldError(file, "type",
                      "serac sync writes Iceberg tables: \"ICEBERG\", not \"" + top.String("type") + "\"");
  }
  SERAC_ASSIGN_OR_RETURN(Fields writer,
                         Fields::Of(*top.Object("writer"), file, "writer", kWriterFields, notices));
  IcebergDestination destination;
  destination.file = file;
  const std::string catalog_type = AsciiLower(writer.String("catalog_type", "rest"));
  if (std::find(std::begin(kRestPresets), std::end(kRestPresets), catalog_type) == std::end(kRestPresets)) {
    return FieldError(file, "writer.catalog_type",
                      "\"" + catalog_type +
                          "\" catalogs are not supported: serac sync commits through an Iceberg REST catalog "
                          "(rest, lakekeeper, nessie, s3tables or polaris)");
  }
  destination.catalog_type = catalog_type;
  destination.catalog_name = writer.String("catalog_name", "olake_iceberg");
  destination.catalog_uri = writer.String("rest_catalog_url");
  if (destination.catalog_uri.rfind("http://", 0) != 0 && destination.catalog_uri.rfind("https://", 0) != 0) {
    return FieldError(file, "writer.rest_catalog_url", "must be an http:// or https:// URL");
  }
  while (!destination.catalog_uri.empty() && destination.catalog_uri.back() == '/')
    destination.catalog_uri.pop_back();
  destination.warehouse = writer.String("iceberg_s3_path");
  destination.default_namespace = writer.String("iceberg_db");
  destination.signing_name = writer.String("rest_signing_name", "s3tables");
  destination.signing_region = writer.String("rest_signing_region", writer.String("aws_region", "us-east-1"));
  destination.token = writer.String("token");
  destination.oauth2_uri = writer.String("oauth2_uri");
  destination.credential = writer.String("credential");
  destination.oauth2_scope = writer.String("scope", "catalog");
  destination.s3_endpoint = writer.String("s3_endpoint");
  destination.s3_path_style = writer.Boolean("s3_path_style", true);
  destination.s3_use_ssl = writer.Boolean("s3_use_ssl", true);
  destination.s3_region = writer.String("aws_region", "us-east-1");
  destination.access_key = writer.String("aws_access_key");
  destination.secret_key = writer.String("aws_secret_key");
  destination.session_token = writer.String("aws_session_token");
  destination.no_identifier_fields = writer.Boolean("no_identifier_fields", false);
  destination.olake_columns = writer.Boolean("olake_columns", false);
  destination.key_index = writer.Boolean("key_index", true);
  SERAC_ASSIGN_OR_RETURN(std::vector<std::string> engines, writer.Strings("engines"));
  SERAC_ASSIGN_OR_RETURN(destination.engines, ParseEngines(engines, file, "writer.engines"));
  if (!destination.s3_endpoint.empty() && destination.s3_endpoint.find("://") == std::string::npos) {
    destination.s3_endpoint = (destination.s3_use_ssl ? "https://" : "http://") + destination.s3_endpoint;
  }
  // The catalog's authentication, as OLake chooses it: an explicit rest_auth_type, else SigV4 when
  // asked, else OAuth2 with a credential, else a token, else none.
  std::string auth = AsciiLower(writer.String("rest_auth_type"));
  if (auth.empty()) {
    auth = writer.Boolean("rest_signing_v_4", false) || catalog_type == "s3tables" ? "sigv4"
           : !destination.credential.empty()                                       ? "oauth2"
           : !destination.token.empty()                                            ? "token"
                                                                                   : "none";
  }
  if (auth == "sigv4") {
    destination.auth = IcebergDestination::Auth::kSigV4;
    if (destination.access_key.empty() || destination.secret_key.empty()) {
      return FieldError(file, "writer.aws_access_key",
                        "SigV4 signs with aws_access_key and aws_secret_key: both are required");
    }
  } else if (auth == "oauth2") {
    destination.auth = IcebergDestination::Auth::kOAuth2;
    if (destination.credential.find(':') == std::string::npos) {
      return FieldError(file, "writer.credential", "OAuth2 needs the credential \"client_id:client_secret\"");
    }
  } else if (auth == "token" || auth == "bearer") {
    destination.auth = IcebergDestination::Auth::kToken;
    if (destination.token.empty())
      return FieldError(file, "writer.token", "is required by rest_auth_type token");
  } else if (auth == "none") {
    destination.auth = IcebergDestination::Auth::kNone;
  } else {
    return FieldError(file, "writer.rest_auth_type",
                      "must be none, sigv4, oauth2 or token, not \"" + auth + "\"");
  }
  return destination;
}

Result<std::string> ReadConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(ErrorCode::kNotFound, path + ": cannot be opened");
  std::string bytes;
  char buffer[64 * 1024];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    bytes.append(buffer, static_cast<size_t>(in.gcount()));
    if (bytes.size() > limits::kSyncConfigFileBytesMax) {
      return Error(ErrorCode::kLimitExceeded, path + ": larger than limits::kSyncConfigFileBytesMax (" +
                                                  std::to_string(limits::kSyncConfigFileBytesMax) +
                                                  " bytes)");
    }
  }
  return bytes;
}

Status WriteConfigFile(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp-" + RandomHexId(4);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return file_io::ErrnoError("open", temporary);
  Status written = file_io::WriteAll(fd, text, temporary);
  if (written.ok() && ::fsync(fd) != 0) written = file_io::ErrnoError("fsync", temporary);
  ::close(fd);
  if (written.ok() && ::rename(temporary.c_str(), path.c_str()) != 0)
    written = file_io::ErrnoError("rename", path);
  if (!written.ok()) {
    ::unlink(temporary.c_str());
    return written;
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return file_io::FsyncDirectory(dir.empty() ? "." : dir);
}

std::string SourceSpecJson() {
  return SchemaOf(kSourceFields, "serac sync source (PostgreSQL), OLake's source.json");
}

std::string DestinationSpecJson() {
  Json writer = Json::parse(SchemaOf(kWriterFields, "writer"));
  writer.erase("$schema");
  return SchemaOf(kDestinationFields,
                  "serac sync destination (Iceberg on a REST catalog), OLake's destination.json",
                  {{"writer", writer}, {"type", Json{{"enum", Json::array({"ICEBERG"})}}}});
}

// ---- engines and delete kinds ----

namespace {

// Which delete files each engine applies when it reads a table (the README's table, each cell
// tested against the engine's release in the suite).
struct EngineReads {
  const char* engine;
  bool dv;   // deletion vectors (format v3)
  bool pos;  // position delete files (format v2)
  bool eq;   // equality delete files
};
constexpr EngineReads kEngineReads[] = {
    {"spark", true, true, true},  {"trino", false, true, true},     {"clickhouse", false, true, true},
    {"duckdb", true, true, true}, {"pyiceberg", true, true, false},
};

bool Reads(const EngineReads& engine, const std::string& update_type) {
  return update_type == "dv" ? engine.dv : update_type == "pos" ? engine.pos : engine.eq;
}

const EngineReads* FindEngine(const std::string& name) {
  for (const EngineReads& engine : kEngineReads) {
    if (name == engine.engine) return &engine;
  }
  return nullptr;
}

}  // namespace

Result<std::vector<std::string>> ParseEngines(const std::vector<std::string>& names, const std::string& file,
                                              const std::string& field) {
  std::vector<std::string> engines;
  for (const std::string& name : names) {
    std::string engine = AsciiLower(name);
    if (FindEngine(engine) == nullptr) {
      return FieldError(
          file, field,
          "\"" + name + "\" is not an engine serac knows: spark, trino, clickhouse, duckdb or pyiceberg");
    }
    if (std::find(engines.begin(), engines.end(), engine) == engines.end())
      engines.push_back(std::move(engine));
  }
  return engines;
}

std::vector<std::string> DeleteKindsReadBy(const std::vector<std::string>& engines) {
  std::vector<std::string> kinds;
  for (const char* kind : {"dv", "pos", "eq"}) {
    if (!EngineNotReading(engines, kind)) kinds.emplace_back(kind);
  }
  return kinds;
}

std::optional<std::string> EngineNotReading(const std::vector<std::string>& engines,
                                            const std::string& update_type) {
  for (const std::string& name : engines) {
    const EngineReads* engine = FindEngine(name);
    if (engine != nullptr && !Reads(*engine, update_type)) return name;
  }
  return std::nullopt;
}

}  // namespace serac::sync
