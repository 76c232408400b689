// libpq connections, `check` and `discover`. Connection parameters go to PQconnectdbParams as
// keyword/value pairs (no conninfo string to quote, and no password in any message); PEM texts of
// the ssl block go to private files for the connection's start and are removed after it.
#include "sync/postgres.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "sync/connection_params.h"
#include "sync/postgres_internal.h"

namespace serac::sync {
namespace {

// Files holding the ssl block's certificates while a connection starts.
class CertificateFiles {
 public:
  ~CertificateFiles() {
    if (!dir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
    }
  }
  Result<std::string> Write(const std::string& name, const std::string& pem) {
    if (dir_.empty()) {
      std::string pattern = (std::filesystem::temp_directory_path() / "serac-pg-XXXXXX").string();
      if (::mkdtemp(pattern.data()) == nullptr)
        return Error(ErrorCode::kIoError, "cannot create a temporary directory");
      dir_ = pattern;  // mkdtemp makes it 0700
    }
    const std::string path = dir_ + "/" + name;
    std::ofstream out(path, std::ios::binary);
    out << pem;
    if (!out) return Error(ErrorCode::kIoError, "cannot write " + path);
    std::filesystem::permissions(path,
                                 std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    return path;
  }

 private:
  std::string dir_;
};

}  // namespace

namespace {

// `text` between two `quote`s, each quote inside doubled: SQL's rule for identifiers and literals.
std::string Quoted(const std::string& text, char quote) {
  std::string out(1, quote);
  for (char c : text) {
    if (c == quote) out += quote;
    out += c;
  }
  return out + quote;
}

}  // namespace

std::string QuoteIdentifier(const std::string& name) { return Quoted(name, '"'); }

std::string QuoteLiteral(const std::string& text) { return Quoted(text, '\''); }

namespace {

// OLake's type name of a PostgreSQL type (types/data_types.go), for streams.json.
std::string OlakeType(const std::string& type_name, const std::string& category) {
  static const std::map<std::string, std::string> kTypes = {{"int2", "integer_small"},
                                                            {"int4", "integer_small"},
                                                            {"int8", "integer"},
                                                            {"float4", "number_small"},
                                                            {"float8", "number"},
                                                            {"numeric", "number"},
                                                            {"bool", "boolean"},
                                                            {"timestamp", "timestamp_micro"},
                                                            {"timestamptz", "timestamp_micro"},
                                                            {"date", "timestamp"},
                                                            {"oid", "integer"},
                                                            {"money", "number"}};
  if (category == "A") return "array";
  auto it = kTypes.find(type_name);
  return it != kTypes.end() ? it->second : "string";
}

bool CursorCandidate(const std::string& type_name) {
  static const std::set<std::string> kOrdered = {"int2",    "int4", "int8",      "float4",      "float8",
                                                 "numeric", "date", "timestamp", "timestamptz", "oid"};
  return kOrdered.count(type_name) > 0;
}

}  // namespace

struct PgConnection::Impl {
  PGconn* connection = nullptr;
  ~Impl() {
    if (connection) PQfinish(connection);
  }
};

PgConnection::PgConnection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PgConnection::PgConnection(PgConnection&&) noexcept = default;
PgConnection& PgConnection::operator=(PgConnection&&) noexcept = default;
PgConnection::~PgConnection() = default;

std::string TrimmedMessage(const char* message) {
  std::string text = message ? message : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

Result<pg_conn*> OpenLibpqConnection(const PostgresSource& source, bool replication) {
  std::vector<std::pair<std::string, std::string>> params = {
      {"host", source.host},
      {"port", std::to_string(source.port)},
      {"dbname", source.database},
      {"user", source.username},
      {"sslmode", source.ssl_mode},
      {"application_name", "serac-sync"},
      {"connect_timeout", "30"},
      {"client_encoding", "UTF8"},
      // Values as pg_values.h reads them, whatever the server's or the role's defaults: timestamps
      // in UTC and ISO form, floats with every digit, bytea in hex, money without a locale's marks.
      {"options",
       "-c TimeZone=UTC -c DateStyle=ISO,YMD -c IntervalStyle=postgres -c extra_float_digits=3 "
       "-c bytea_output=hex -c lc_monetary=C -c standard_conforming_strings=on"}};
  if (replication) params.emplace_back("replication", "database");
  if (!source.password.empty()) params.emplace_back("password", source.password);
  CertificateFiles certificates;
  for (const auto& [keyword, pem, file] : {std::tuple<const char*, const std::string&, const char*>{
                                               "sslrootcert", source.ssl_root_cert, "ca.pem"},
                                           {"sslcert", source.ssl_client_cert, "client.pem"},
                                           {"sslkey", source.ssl_client_key, "client.key"}}) {
    if (pem.empty()) continue;
    SERAC_ASSIGN_OR_RETURN(std::string path, certificates.Write(file, pem));
    params.emplace_back(keyword, path);
  }
  // jdbc_url_params' settings and options after serac's own settings (a later -c wins, but no
  // value serac reads depends on what they set).
  std::string& options =
      std::find_if(params.begin(), params.end(), [](const auto& p) { return p.first == "options"; })->second;
  if (!source.server_settings.empty()) options += " " + ServerSettingOptions(source.server_settings);
  if (!source.connection_options.empty()) options += " " + source.connection_options;
  for (const auto& [key, value] : source.connection_params) {
    // A parameter given twice keeps the one of jdbc_url_params.
    auto existing = std::find_if(params.begin(), params.end(), [&](const auto& p) { return p.first == key; });
    if (existing != params.end()) {
      existing->second = value;
    } else {
      params.emplace_back(key, value);
    }
  }
  std::vector<const char*> keywords;
  std::vector<const char*> values;
  for (const auto& [key, value] : params) {
    keywords.push_back(key.c_str());
    values.push_back(value.c_str());
  }
  keywords.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* connection = PQconnectdbParams(keywords.data(), values.data(), 0);
  if (connection == nullptr) return Error(ErrorCode::kUnavailable, "libpq could not allocate a connection");
  if (PQstatus(connection) != CONNECTION_OK) {
    std::string message = TrimmedMessage(PQerrorMessage(connection));
    for (const auto& [name, value] : source.server_settings) {
      if (message.find("unrecognized configuration parameter \"" + name + "\"") != std::string::npos) {
        message += " (jdbc_url_params." + name +
                   " in the source configuration: neither a libpq parameter, a JDBC driver parameter serac "
                   "translates, nor a setting of this server)";
      }
    }
    Status failed = Error(ErrorCode::kUnavailable, "cannot connect to PostgreSQL at " + source.host + ":" +
                                                       std::to_string(source.port) + "/" + source.database +
                                                       ": " + message);
    PQfinish(connection);
    return failed;
  }
  return connection;
}

Result<PgConnection> PgConnection::Connect(const PostgresSource& source) {
  auto impl = std::make_unique<Impl>();
  SERAC_ASSIGN_OR_RETURN(impl->connection, OpenLibpqConnection(source, false));
  return PgConnection(std::move(impl));
}

int PgConnection::server_version() const { return PQserverVersion(impl_->connection); }

Result<PgRows> PgConnection::Query(const std::string& sql,
                                   const std::vector<std::optional<std::string>>& params) {
  std::vector<const char*> values;
  for (const auto& param : params) values.push_back(param ? param->c_str() : nullptr);
  PGresult* result = PQexecParams(impl_->connection, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                  values.data(), nullptr, nullptr, 0);
  const ExecStatusType status = PQresultStatus(result);
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    std::string message = TrimmedMessage(PQresultErrorMessage(result));
    PQclear(result);
    if (PQstatus(impl_->connection) != CONNECTION_OK) return Error(ErrorCode::kUnavailable, message);
    return Error(ErrorCode::kInvalidArgument, message);
  }
  PgRows rows;
  const int fields = PQnfields(result);
  for (int f = 0; f < fields; ++f) rows.columns.emplace_back(PQfname(result, f));
  const int count = PQntuples(result);
  rows.rows.reserve(static_cast<size_t>(count));
  for (int r = 0; r < count; ++r) {
    auto& row = rows.rows.emplace_back();
    for (int f = 0; f < fields; ++f) {
      if (PQgetisnull(result, r, f)) {
        row.emplace_back(std::nullopt);
      } else {
        row.emplace_back(
            std::string(PQgetvalue(result, r, f), static_cast<size_t>(PQgetlength(result, r, f))));
      }
    }
  }
  PQclear(result);
  return rows;
}

Status PgConnection::CopyOut(const std::string& copy_statement,
                             const std::function<Status(std::string_view)>& on_row, bool binary) {
  PGconn* connection = impl_->connection;
  PGresult* started = PQexec(connection, copy_statement.c_str());
  if (PQresultStatus(started) != PGRES_COPY_OUT) {
    std::string message = TrimmedMessage(PQresultErrorMessage(started));
    PQclear(started);
    if (PQstatus(connection) != CONNECTION_OK) return Error(ErrorCode::kUnavailable, message);
    return Error(ErrorCode::kInvalidArgument, message);
  }
  PQclear(started);
  Status outcome = Status::Ok();
  while (true) {
    char* buffer = nullptr;
    const int length = PQgetCopyData(connection, &buffer, 0);
    if (length == -1) break;  // the copy is done; its result follows
    if (length < 0) {
      return Error(ErrorCode::kUnavailable, "COPY: " + TrimmedMessage(PQerrorMessage(connection)));
    }
    if (outcome.ok()) {
      std::string_view line(buffer, static_cast<size_t>(length));
      if (!binary && !line.empty() && line.back() == '\n') line.remove_suffix(1);
      outcome = on_row(line);
      // The rest of the copy is read and dropped: the connection stays usable.
    }
    PQfreemem(buffer);
  }
  PGresult* finished = PQgetResult(connection);
  const bool copied = PQresultStatus(finished) == PGRES_COMMAND_OK;
  std::string message = copied ? "" : TrimmedMessage(PQresultErrorMessage(finished));
  PQclear(finished);
  while ((finished = PQgetResult(connection)) != nullptr) PQclear(finished);
  SERAC_RETURN_IF_ERROR(outcome);
  if (!copied) return Error(ErrorCode::kUnavailable, "COPY: " + message);
  return Status::Ok();
}

Result<std::vector<std::string>> CheckSource(const PostgresSource& source) {
  SERAC_ASSIGN_OR_RETURN(PgConnection connection, PgConnection::Connect(source));
  std::vector<std::string> facts;
  const int version = connection.server_version();
  facts.push_back("PostgreSQL " + std::to_string(version / 10000) + "." + std::to_string(version % 10000) +
                  " at " + source.host + ":" + std::to_string(source.port) + "/" + source.database + " as " +
                  source.username);
  if (version < 100000) {
    return Error(ErrorCode::kInvalidArgument,
                 "PostgreSQL " + std::to_string(version / 10000) +
                     " has no pgoutput logical replication: version 10 or later is needed");
  }
  if (!source.replication) {
    facts.push_back("no update_method: full_refresh and incremental streams only");
    return facts;
  }
  const PostgresSource::Replication& replication = *source.replication;
  SERAC_ASSIGN_OR_RETURN(PgRows wal, connection.Query("SELECT current_setting('wal_level')"));
  const std::string wal_level = wal.rows.at(0).at(0).value_or("");
  if (wal_level != "logical") {
    return Error(
        ErrorCode::kInvalidArgument,
        "wal_level is " + wal_level + ": CDC needs wal_level = logical (postgresql.conf, then a restart)");
  }
  facts.push_back("wal_level = logical");
  SERAC_ASSIGN_OR_RETURN(
      PgRows role,
      connection.Query("SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user"));
  if (role.rows.empty() || role.rows[0][0].value_or("f") != "t") {
    return Error(
        ErrorCode::kInvalidArgument,
        "user " + source.username + " may not replicate: ALTER ROLE ... REPLICATION (or use a superuser)");
  }
  facts.push_back("user " + source.username + " may replicate");
  SERAC_ASSIGN_OR_RETURN(PgRows slot,
                         connection.Query("SELECT plugin, database, confirmed_flush_lsn::text FROM "
                                          "pg_replication_slots WHERE slot_name = $1",
                                          {replication.slot}));
  if (slot.rows.empty()) {
    facts.push_back("replication slot " + replication.slot + ": absent, created by the first sync");
  } else {
    const std::string plugin = slot.rows[0][0].value_or("");
    if (plugin != "pgoutput") {
      return Error(ErrorCode::kInvalidArgument,
                   "replication slot " + replication.slot + " uses the " + plugin +
                       " plugin: serac decodes pgoutput (drop it or name another slot)");
    }
    if (slot.rows[0][1].value_or("") != source.database) {
      return Error(ErrorCode::kInvalidArgument, "replication slot " + replication.slot +
                                                    " belongs to database " + slot.rows[0][1].value_or("?") +
                                                    ", not " + source.database);
    }
    facts.push_back("replication slot " + replication.slot + " (pgoutput) at " +
                    slot.rows[0][2].value_or("?"));
  }
  SERAC_ASSIGN_OR_RETURN(
      PgRows publication,
      connection.Query("SELECT p.puballtables, (SELECT count(*) FROM pg_publication_tables t WHERE "
                       "t.pubname = p.pubname) FROM pg_publication p WHERE p.pubname = $1",
                       {replication.publication}));
  if (publication.rows.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 "publication " + replication.publication + " does not exist: CREATE PUBLICATION " +
                     QuoteIdentifier(replication.publication) + " FOR TABLE ...");
  }
  facts.push_back("publication " + replication.publication + ": " +
                  (publication.rows[0][0].value_or("f") == "t"
                       ? std::string("all tables")
                       : publication.rows[0][1].value_or("0") + " tables"));
  return facts;
}

Result<StreamCatalog> DiscoverStreams(const PostgresSource& source, const StreamCatalog* previous) {
  SERAC_ASSIGN_OR_RETURN(PgConnection connection, PgConnection::Connect(source));
  // The schemas of source.json (none: every user schema) as a text array literal.
  std::string schemas = "{";
  for (size_t i = 0; i < source.schemas.size(); ++i) {
    schemas += i ? ",\"" : "\"";
    for (char c : source.schemas[i]) {
      if (c == '"' || c == '\\') schemas += '\\';
      schemas += c;
    }
    schemas += '"';
  }
  schemas += "}";
  SERAC_ASSIGN_OR_RETURN(
      PgRows columns,
      connection.Query(
          "SELECT n.nspname, c.relname, a.attname, t.typname, t.typcategory, a.attnotnull "
          "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
          "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
          "JOIN pg_type t ON t.oid = a.atttypid "
          "WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition "
          "AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%' "
          "AND (cardinality($1::text[]) = 0 OR n.nspname = ANY($1::text[])) "
          "ORDER BY n.nspname, c.relname, a.attnum",
          {schemas}));
  SERAC_ASSIGN_OR_RETURN(
      PgRows keys,
      connection.Query("SELECT n.nspname, c.relname, a.attname FROM pg_index i "
                       "JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                       "JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, position) ON true "
                       "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum "
                       "WHERE i.indisprimary ORDER BY n.nspname, c.relname, k.position"));
  StreamCatalog catalog;
  std::map<std::string, size_t> index;
  for (const auto& row : columns.rows) {
    const std::string ns = row[0].value_or("");
    const std::string table = row[1].value_or("");
    const std::string id = ns + "." + table;
    auto it = index.find(id);
    if (it == index.end()) {
      Stream stream;
      stream.name = table;
      stream.namespace_name = ns;
      stream.supported_sync_modes = {SyncMode::kFullRefresh};
      it = index.emplace(id, catalog.streams.size()).first;
      catalog.streams.push_back(std::move(stream));
    }
    Stream& stream = catalog.streams[it->second];
    StreamColumn column;
    column.name = row[2].value_or("");
    const std::string type_name = row[3].value_or("");
    column.types = {OlakeType(type_name, row[4].value_or(""))};
    if (row[5].value_or("f") != "t") column.types.push_back("null");
    if (CursorCandidate(type_name)) stream.cursor_fields.push_back(column.name);
    stream.columns.push_back(std::move(column));
  }
  for (const auto& row : keys.rows) {
    auto it = index.find(row[0].value_or("") + "." + row[1].value_or(""));
    if (it != index.end()) catalog.streams[it->second].primary_key.push_back(row[2].value_or(""));
  }
  for (Stream& stream : catalog.streams) {
    if (!stream.cursor_fields.empty()) stream.supported_sync_modes.push_back(SyncMode::kIncremental);
    if (source.replication) {
      stream.supported_sync_modes.push_back(SyncMode::kCdc);
      stream.supported_sync_modes.push_back(SyncMode::kStrictCdc);
    }
    // OLake's default: CDC when supported, else incremental needs a cursor chosen: full refresh.
    stream.sync_mode = source.replication ? SyncMode::kCdc : SyncMode::kFullRefresh;
  }
  if (previous == nullptr) {
    for (const Stream& stream : catalog.streams) {
      StreamSelection selection;
      selection.namespace_name = stream.namespace_name;
      selection.stream_name = stream.name;
      selection.normalization = true;
      catalog.selected.push_back(std::move(selection));
    }
    return catalog;
  }
  for (Stream& stream : catalog.streams) {
    if (const Stream* old = previous->Find(stream.namespace_name, stream.name)) {
      stream.sync_mode = old->sync_mode;
      stream.cursor_field = old->cursor_field;
      stream.destination_database = old->destination_database;
      stream.destination_table = old->destination_table;
    }
  }
  for (const StreamSelection& selection : previous->selected) {
    if (catalog.Find(selection.namespace_name, selection.stream_name)) catalog.selected.push_back(selection);
  }
  return catalog;
}

std::string SourceTable::QualifiedName() const {
  return QuoteIdentifier(namespace_name) + "." + QuoteIdentifier(name);
}

Result<SourceTable> DescribeTable(PgConnection& connection, const std::string& namespace_name,
                                  const std::string& name) {
  SERAC_ASSIGN_OR_RETURN(
      PgRows found, connection.Query("SELECT c.oid, c.relpages, c.reltuples::bigint FROM pg_class c JOIN "
                                     "pg_namespace n ON n.oid = c.relnamespace "
                                     "WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p')",
                                     {namespace_name, name}));
  if (found.rows.empty()) {
    return Error(ErrorCode::kNotFound,
                 "table " + namespace_name + "." + name + " does not exist in the source");
  }
  SourceTable table;
  table.namespace_name = namespace_name;
  table.name = name;
  table.oid = static_cast<uint32_t>(std::stoul(found.rows[0][0].value_or("0")));
  table.pages = std::stoll(found.rows[0][1].value_or("0"));
  table.estimated_rows = std::max<int64_t>(0, std::stoll(found.rows[0][2].value_or("0")));
  // A domain's or an array's element type comes with it: what type_mapping.h needs.
  SERAC_ASSIGN_OR_RETURN(
      PgRows columns,
      connection.Query("SELECT a.attname, t.typname, t.typtype, t.typcategory, a.atttypmod, a.attnotnull, "
                       "coalesce(e.typname, b.typname, ''), coalesce(e.typtype, b.typtype, 'b'), a.attnum, "
                       "a.atthasdef OR a.atthasmissing "
                       "FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
                       "LEFT JOIN pg_type e ON e.oid = t.typelem AND t.typcategory = 'A' "
                       "LEFT JOIN pg_type b ON b.oid = t.typbasetype AND t.typtype = 'd' "
                       "WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
                       {std::to_string(table.oid)}));
  for (const auto& row : columns.rows) {
    SourceColumn column;
    column.name = row[0].value_or("");
    column.type.name = row[1].value_or("");
    column.type.type_kind = row[2].value_or("b").front();
    column.type.category = row[3].value_or("U").front();
    column.type.type_modifier = std::stoi(row[4].value_or("-1"));
    column.not_null = row[5].value_or("f") == "t";
    column.type.element_name = row[6].value_or("");
    column.type.element_kind = row[7].value_or("b").empty() ? 'b' : row[7]->front();
    column.attnum = std::stoi(row[8].value_or("0"));
    column.filled_when_added = row[9].value_or("f") == "t";
    table.columns.push_back(std::move(column));
  }
  SERAC_ASSIGN_OR_RETURN(
      PgRows key,
      connection.Query("SELECT a.attname FROM pg_index i, unnest(i.indkey) WITH ORDINALITY AS k(attnum, n) "
                       "JOIN pg_attribute a ON a.attnum = k.attnum "
                       "WHERE i.indrelid = $1 AND i.indisprimary AND a.attrelid = $1 ORDER BY k.n",
                       {std::to_string(table.oid)}));
  for (const auto& row : key.rows) table.primary_key.push_back(row[0].value_or(""));
  return table;
}

Result<PgType> DescribeType(PgConnection& connection, uint32_t oid, int32_t type_modifier) {
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows,
      connection.Query("SELECT t.typname, t.typtype, t.typcategory, coalesce(e.typname, b.typname, ''), "
                       "coalesce(e.typtype, b.typtype, 'b') FROM pg_type t "
                       "LEFT JOIN pg_type e ON e.oid = t.typelem AND t.typcategory = 'A' "
                       "LEFT JOIN pg_type b ON b.oid = t.typbasetype AND t.typtype = 'd' WHERE t.oid = $1",
                       {std::to_string(oid)}));
  if (rows.rows.empty()) return Error(ErrorCode::kNotFound, "no type with oid " + std::to_string(oid));
  const auto& row = rows.rows[0];
  PgType type;
  type.name = row[0].value_or("");
  type.type_kind = row[1].value_or("b").front();
  type.category = row[2].value_or("U").front();
  type.type_modifier = type_modifier;
  type.element_name = row[3].value_or("");
  type.element_kind = row[4].value_or("b").empty() ? 'b' : row[4]->front();
  return type;
}

Result<std::map<std::string, ColumnNumber>> ColumnNumbers(PgConnection& connection, uint32_t table_oid) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows, connection.Query("SELECT attname, attnum, atthasdef OR atthasmissing "
                                                       "FROM pg_attribute WHERE attrelid = $1 "
                                                       "AND attnum > 0 AND NOT attisdropped",
                                                       {std::to_string(table_oid)}));
  std::map<std::string, ColumnNumber> numbers;
  for (const auto& row : rows.rows) {
    numbers[row[0].value_or("")] = {std::stoi(row[1].value_or("0")), row[2].value_or("f") == "t"};
  }
  return numbers;
}

}  // namespace serac::sync
