// OLake's configuration files as its documentation writes them: read field by field, errors naming
// the file and the field, unused and unknown fields reported once, streams.json round-tripped.
#include "sync/config.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "sync/connection_params.h"

namespace serac::sync {
namespace {

// source.json from OLake's Postgres documentation (CDC through pgoutput).
constexpr char kOlakeSource[] = R"({
  "host": "postgres.example.com",
  "port": 5432,
  "database": "shop",
  "username": "olake",
  "password": "secret-password",
  "jdbc_url_params": {"application_name": "olake"},
  "ssl": {"mode": "disable"},
  "update_method": {"replication_slot": "olake_slot", "publication": "olake_pub", "initial_wait_time": 120},
  "max_threads": 6,
  "retry_count": 2,
  "ssh_config": {"host": "bastion"}
})";

// destination.json for a REST catalog with SigV4 (AIStor Tables / S3 Tables style).
constexpr char kOlakeDestination[] = R"({
  "type": "ICEBERG",
  "writer": {
    "catalog_type": "rest",
    "rest_catalog_url": "http://localhost:9000/_iceberg/",
    "iceberg_s3_path": "lakehouse",
    "iceberg_db": "shop",
    "rest_signing_v_4": true,
    "rest_signing_name": "s3tables",
    "rest_signing_region": "us-east-1",
    "s3_endpoint": "localhost:9000",
    "s3_path_style": true,
    "s3_use_ssl": false,
    "aws_region": "us-east-1",
    "aws_access_key": "admin",
    "aws_secret_key": "password",
    "arrow_writes": true
  }
})";

TEST(SyncConfigTest, OlakeSourceFileIsReadWithItsUnusedFieldsReported) {
  std::vector<ConfigNotice> notices;
  auto source = ParseSourceConfig(kOlakeSource, "source.json", notices);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ(source->host, "postgres.example.com");
  EXPECT_EQ(source->port, 5432);
  EXPECT_EQ(source->database, "shop");
  EXPECT_EQ(source->max_threads, 6);
  EXPECT_EQ(source->connection_params.at("application_name"), "olake");
  ASSERT_TRUE(source->replication.has_value());
  EXPECT_EQ(source->replication->slot, "olake_slot");
  EXPECT_EQ(source->replication->publication, "olake_pub");
  EXPECT_EQ(source->replication->initial_wait_time_seconds, 120);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].ToString().substr(0, 35), "source.json: ssh_config: not used: ");
}

// OLake's documentation writes JDBC parameter names; libpq's keywords and server settings work too.
TEST(SyncConfigTest, JdbcUrlParamsAreTranslatedToWhatLibpqTakes) {
  std::vector<ConfigNotice> notices;
  auto source = ParseSourceConfig(R"({"host": "h", "database": "d", "username": "u", "jdbc_url_params": {
      "connectTimeout": "20", "ApplicationName": "olake", "currentSchema": "sales", "tcpKeepAlive": "true",
      "targetServerType": "preferSecondary", "socketTimeout": "30", "user": "other", "keepalives_idle": "60",
      "statement_timeout": "5min", "options": "-c work_mem=64MB", "prepareThreshold": 5}})",
                                  "source.json", notices);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  const std::map<std::string, std::string> keywords = {{"application_name", "olake"},
                                                       {"connect_timeout", "20"},
                                                       {"keepalives", "1"},
                                                       {"keepalives_idle", "60"},
                                                       {"target_session_attrs", "prefer-standby"}};
  EXPECT_EQ(source->connection_params, keywords);
  const std::vector<std::pair<std::string, std::string>> settings = {{"search_path", "sales"},
                                                                     {"statement_timeout", "5min"}};
  EXPECT_EQ(source->server_settings, settings);
  EXPECT_EQ(source->connection_options, "-c work_mem=64MB");
  std::vector<std::string> reported;
  for (const ConfigNotice& notice : notices) reported.push_back(notice.field);
  EXPECT_EQ(reported, (std::vector<std::string>{"jdbc_url_params.prepareThreshold",
                                                "jdbc_url_params.socketTimeout", "jdbc_url_params.user"}));
  EXPECT_EQ(ServerSettingOptions({{"search_path", "my schema"}, {"a.b", "c\\d"}}),
            "-c search_path=my\\ schema -c a.b=c\\\\d");

  for (const char* bad :
       {R"({"ssl": "maybe"})", R"({"connectTimeout": "soon"})", R"({"no such;thing": "1"})"}) {
    std::vector<ConfigNotice> ignored;
    const std::string json =
        std::string(R"({"host": "h", "database": "d", "username": "u", "jdbc_url_params": )") + bad + "}";
    auto refused = ParseSourceConfig(json, "source.json", ignored);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().message().rfind("source.json: jdbc_url_params.", 0), 0u)
        << refused.status().message();
  }
}

TEST(SyncConfigTest, WrongOrMissingFieldsNameTheFileAndTheField) {
  struct Case {
    const char* json;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {R"({"port": 5432, "database": "d", "username": "u"})", "source.json: host: is required"},
           {R"({"host": "h", "port": "x", "database": "d", "username": "u"})",
            "source.json: port: must be integer"},
           {R"({"host": "h", "port": 70000, "database": "d", "username": "u"})",
            "source.json: port: must be between 1 and 65535, not 70000"},
           {R"({"host": "h", "database": "d", "username": "u", "ssl": {"mode": "prefer"}})",
            "source.json: ssl.mode: must be disable, require, verify-ca or verify-full"},
           {R"({"host": "h", "database": "d", "username": "u", "update_method": {"replication_slot": "s"}})",
            "source.json: update_method.publication: is required"},
           {R"({"host": "h", "database": "d", "username": "u",
                "update_method": {"replication_slot": "s", "publication": "p", "initial_wait_time": 5}})",
            "source.json: update_method.initial_wait_time: must be between 120 and 2399, not 5"},
           {R"([1, 2])", "source.json: (document): must be a JSON object"},
           {R"({"host": )", "source.json: malformed JSON at line 1, column 10 (the text ends too early)"},
           {"{\n  \"host\": \"h\",\n  \"database\": \"d\"\n  \"username\": \"u\"\n}",
            "source.json: malformed JSON at line 4, column 12"},
       }) {
    std::vector<ConfigNotice> notices;
    auto source = ParseSourceConfig(c.json, "source.json", notices);
    ASSERT_FALSE(source.ok()) << c.json;
    EXPECT_EQ(source.status().message().rfind(c.message, 0), 0u) << source.status().message();
  }
}

TEST(SyncConfigTest, OlakeDestinationFileBecomesARestCatalogWithSigV4) {
  std::vector<ConfigNotice> notices;
  auto destination = ParseDestinationConfig(kOlakeDestination, "destination.json", notices);
  ASSERT_TRUE(destination.ok()) << destination.status().ToString();
  EXPECT_EQ(destination->catalog_uri, "http://localhost:9000/_iceberg");
  EXPECT_EQ(destination->warehouse, "lakehouse");
  EXPECT_EQ(destination->default_namespace, "shop");
  EXPECT_EQ(destination->auth, IcebergDestination::Auth::kSigV4);
  EXPECT_EQ(destination->signing_name, "s3tables");
  EXPECT_EQ(destination->s3_endpoint, "http://localhost:9000");
  EXPECT_EQ(destination->access_key, "admin");
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].field, "writer.arrow_writes");

  // OAuth2 and tokens, as OLake picks them from the fields given.
  auto oauth = ParseDestinationConfig(R"({"type": "iceberg", "writer": {"rest_catalog_url": "https://c/x",
      "iceberg_s3_path": "w", "credential": "id:secret", "scope": "PRINCIPAL_ROLE:ALL"}})",
                                      "d.json", notices);
  ASSERT_TRUE(oauth.ok()) << oauth.status().ToString();
  EXPECT_EQ(oauth->auth, IcebergDestination::Auth::kOAuth2);
  EXPECT_EQ(oauth->oauth2_scope, "PRINCIPAL_ROLE:ALL");

  for (const auto& [json, message] : std::vector<std::pair<std::string, std::string>>{
           {R"({"type": "PARQUET", "writer": {}})", "d.json: type: serac sync writes Iceberg tables"},
           {R"({"type": "ICEBERG", "writer": {"catalog_type": "glue", "rest_catalog_url": "http://c",
               "iceberg_s3_path": "w"}})",
            "d.json: writer.catalog_type: \"glue\" catalogs are not supported"},
           {R"({"type": "ICEBERG", "writer": {"iceberg_s3_path": "w"}})",
            "d.json: writer.rest_catalog_url: is required"},
           {R"({"type": "ICEBERG", "writer": {"rest_catalog_url": "ftp://c", "iceberg_s3_path": "w"}})",
            "d.json: writer.rest_catalog_url: must be an http:// or https:// URL"},
           {R"({"type": "ICEBERG", "writer": {"rest_catalog_url": "http://c", "iceberg_s3_path": "w",
               "rest_signing_v_4": true}})",
            "d.json: writer.aws_access_key: SigV4 signs with aws_access_key and aws_secret_key"},
           {R"({"type": "ICEBERG", "writer": {"rest_catalog_url": "http://c", "iceberg_s3_path": "w",
               "rest_auth_type": "kerberos"}})",
            "d.json: writer.rest_auth_type: must be none, sigv4, oauth2 or token"},
       }) {
    auto refused = ParseDestinationConfig(json, "d.json", notices);
    ASSERT_FALSE(refused.ok()) << json;
    EXPECT_EQ(refused.status().message().rfind(message, 0), 0u) << refused.status().message();
  }
}

TEST(SyncConfigTest, StreamsFileRoundTripsInOlakesShape) {
  constexpr char kStreams[] = R"({
    "selected_streams": {"public": [{"stream_name": "orders", "partition_regex": "/{created_at, day}",
                                     "normalization": true, "append_mode": false, "update_type": "dv",
                                     "selected_columns": {"columns": ["id", "amount"], "sync_new_columns": true},
                                     "future_setting": 1}]},
    "streams": [{"stream": {"name": "orders", "namespace": "public",
                            "type_schema": {"properties": {"id": {"type": ["integer"]},
                                                           "amount": {"type": ["number", "null"]}}},
                            "supported_sync_modes": ["full_refresh", "incremental", "cdc", "strict_cdc"],
                            "source_defined_primary_key": ["id"], "available_cursor_fields": ["id"],
                            "sync_mode": "cdc", "destination_database": "shop"}},
                {"stream": {"name": "users", "namespace": "public", "sync_mode": "full_refresh"}}]
  })";
  std::vector<ConfigNotice> notices;
  auto catalog = ParseStreams(kStreams, "streams.json", notices);
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  ASSERT_EQ(catalog->streams.size(), 2u);
  ASSERT_EQ(catalog->selected.size(), 1u);
  const StreamSelection& orders = catalog->selected[0];
  EXPECT_EQ(orders.partition_regex, "/{created_at, day}");
  EXPECT_EQ(orders.update_type, "dv");
  EXPECT_TRUE(orders.sync_new_columns);
  EXPECT_EQ(orders.selected_columns, (std::vector<std::string>{"id", "amount"}));
  const Stream* stream = catalog->Find("public", "orders");
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(stream->primary_key, std::vector<std::string>{"id"});
  EXPECT_EQ(stream->columns.size(), 2u);
  EXPECT_EQ(catalog->Find("public", "users")->sync_mode, SyncMode::kFullRefresh);
  // An unknown field: reported once.
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].field, "selected_streams.public[0].future_setting");

  // Written and read again: the same catalog.
  std::vector<ConfigNotice> again_notices;
  auto again = ParseStreams(StreamsToJson(*catalog), "streams.json", again_notices);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again_notices.empty());
  EXPECT_EQ(StreamsToJson(*again), StreamsToJson(*catalog));

  // normalization is on unless set off; off (OLake's raw JSON column) is reported, not applied.
  std::string raw = kStreams;
  raw.replace(raw.find("\"normalization\": true"), 21, "\"normalization\": false");
  std::vector<ConfigNotice> raw_notices;
  ASSERT_TRUE(ParseStreams(raw, "streams.json", raw_notices).ok());
  ASSERT_EQ(raw_notices.size(), 2u);
  EXPECT_EQ(raw_notices[1].field, "selected_streams.public[0].normalization");
  std::string unset = kStreams;
  unset.erase(unset.find("\"normalization\": true,"), 22);
  std::vector<ConfigNotice> unset_notices;
  auto defaulted = ParseStreams(unset, "streams.json", unset_notices);
  ASSERT_TRUE(defaulted.ok());
  EXPECT_TRUE(defaulted->selected[0].normalization);
  EXPECT_EQ(unset_notices.size(), 1u);

  for (const auto& [json, message] : std::vector<std::pair<std::string, std::string>>{
           {R"({"streams": [{"stream": {"name": "a", "sync_mode": "sometimes"}}]})",
            "streams.json: streams[0].stream.sync_mode: not a sync mode"},
           {R"({"streams": [], "selected_streams": {"public": [{"stream_name": "ghost"}]}})",
            "streams.json: selected_streams.public[0].stream_name: no stream public.ghost"},
           {R"({"streams": [{"stream": {"name": "a", "namespace": "n"}}],
                "selected_streams": {"n": [{"stream_name": "a", "update_type": "magic"}]}})",
            "streams.json: selected_streams.n[0].update_type: must be eq, pos or dv"},
           {R"({"streams": [{"stream": {"name": "a", "namespace": "n"}}],
                "selected_streams": {"n": [{"stream_name": "a", "engines": ["spark", "hive"]}]}})",
            "streams.json: selected_streams.n[0].engines: \"hive\" is not an engine serac knows"},
           {R"({"streams": [{"stream": {"name": "a", "namespace": "n"}}],
                "selected_streams": {"n": [{"stream_name": "a", "engines": ["trino"], "update_type": "dv"}]}})",
            "streams.json: selected_streams.n[0].update_type: dv deletes are not read by trino"},
       }) {
    auto refused = ParseStreams(json, "streams.json", notices);
    ASSERT_FALSE(refused.ok()) << json;
    EXPECT_EQ(refused.status().message().rfind(message, 0), 0u) << refused.status().message();
  }
}

// The README's table of which engine reads which delete kind, best kind first.
TEST(SyncConfigTest, DeleteKindsAreChosenFromTheEnginesThatRead) {
  using Kinds = std::vector<std::string>;
  EXPECT_EQ(DeleteKindsReadBy({}), (Kinds{"dv", "pos", "eq"}));
  EXPECT_EQ(DeleteKindsReadBy({"spark", "duckdb"}), (Kinds{"dv", "pos", "eq"}));
  EXPECT_EQ(DeleteKindsReadBy({"spark", "pyiceberg"}), (Kinds{"dv", "pos"}));
  EXPECT_EQ(DeleteKindsReadBy({"trino", "clickhouse"}), (Kinds{"pos", "eq"}));
  EXPECT_EQ(DeleteKindsReadBy({"trino", "pyiceberg"}), (Kinds{"pos"}));
  EXPECT_EQ(EngineNotReading({"spark", "clickhouse"}, "dv"), "clickhouse");
  EXPECT_EQ(EngineNotReading({"spark", "clickhouse"}, "pos"), std::nullopt);
  auto engines = ParseEngines({"Spark", "TRINO", "spark"}, "destination.json", "writer.engines");
  ASSERT_TRUE(engines.ok());
  EXPECT_EQ(*engines, (Kinds{"spark", "trino"}));

  std::vector<ConfigNotice> notices;
  auto refused = ParseDestinationConfig(
      R"({"type": "ICEBERG", "writer": {"rest_catalog_url": "http://h/_iceberg", "iceberg_s3_path": "w",
          "engines": ["snowflake"]}})",
      "destination.json", notices);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message().rfind("destination.json: writer.engines: \"snowflake\" is not", 0), 0u)
      << refused.status().message();
}

TEST(SyncConfigTest, SpecsAreJsonSchemasOfWhatIsRead) {
  auto source = nlohmann::json::parse(SourceSpecJson());
  EXPECT_EQ(source["$schema"], "http://json-schema.org/draft-07/schema#");
  EXPECT_EQ(source["properties"]["port"]["type"], "integer");
  EXPECT_EQ(source["properties"]["port"]["default"], 5432);
  EXPECT_FALSE(source["properties"].contains("ssh_config"));  // read, not used: not offered
  auto destination = nlohmann::json::parse(DestinationSpecJson());
  EXPECT_EQ(destination["properties"]["writer"]["properties"]["rest_catalog_url"]["type"], "string");
  EXPECT_EQ(destination["required"], nlohmann::json::array({"type", "writer"}));
}

}  // namespace
}  // namespace serac::sync
