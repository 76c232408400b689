#include "client/engine_config.h"

#include <gtest/gtest.h>

namespace serac::client {
namespace {

EngineConfigInput Input() {
  EngineConfigInput input;
  input.endpoint = "http://10.0.0.5:9000/";
  input.access_key = "AKCONFIG";
  input.region = "eu-central-1";
  input.warehouse = "lake";
  return input;
}

std::string Render(std::string_view engine, const EngineConfigInput& input = Input()) {
  Result<std::string> text = RenderEngineConfig(engine, input);
  EXPECT_TRUE(text.ok()) << engine << ": " << text.status().ToString();
  return text.ok() ? *text : "";
}

void ExpectContainsAll(const std::string& text, std::initializer_list<std::string_view> needles) {
  for (std::string_view needle : needles) {
    EXPECT_NE(text.find(needle), std::string::npos) << "missing '" << needle << "' in:\n" << text;
  }
}

TEST(EngineConfigTest, Spark) {
  std::string text = Render("spark");
  ExpectContainsAll(
      text,
      {"--conf spark.sql.catalog.serac=org.apache.iceberg.spark.SparkCatalog",
       "spark.sql.catalog.serac.type=rest", "spark.sql.catalog.serac.uri=http://10.0.0.5:9000/_iceberg \\",
       "spark.sql.catalog.serac.warehouse=lake", "rest.sigv4-enabled=true", "rest.signing-name=s3tables",
       "rest.signing-region=eu-central-1", "io-impl=org.apache.iceberg.aws.s3.S3FileIO",
       "s3.endpoint=http://10.0.0.5:9000 \\", "s3.path-style-access=true", "s3.access-key-id=AKCONFIG",
       "s3.secret-access-key=\"$SERAC_SECRET_KEY\""});
  // The last --conf line ends the command: no dangling continuation.
  EXPECT_NE(text.substr(text.size() - 3), " \\\n");
}

TEST(EngineConfigTest, PyIceberg) {
  ExpectContainsAll(
      Render("pyiceberg"),
      {"load_catalog(", "\"type\": \"rest\"", "\"uri\": \"http://10.0.0.5:9000/_iceberg\"",
       "\"warehouse\": \"lake\"", "\"rest.sigv4-enabled\": \"true\"", "\"rest.signing-name\": \"s3tables\"",
       "\"rest.signing-region\": \"eu-central-1\"", "\"s3.endpoint\": \"http://10.0.0.5:9000\"",
       "\"s3.access-key-id\": \"AKCONFIG\"", "\"s3.secret-access-key\": os.environ[\"SERAC_SECRET_KEY\"]",
       "\"s3.region\": \"eu-central-1\"", "\"s3.force-virtual-addressing\": False"});
}

TEST(EngineConfigTest, Trino) {
  ExpectContainsAll(
      Render("trino"),
      {"connector.name=iceberg\n", "iceberg.catalog.type=rest\n",
       "iceberg.rest-catalog.uri=http://10.0.0.5:9000/_iceberg\n", "iceberg.rest-catalog.warehouse=lake\n",
       "iceberg.rest-catalog.security=SIGV4\n", "iceberg.rest-catalog.signing-name=s3tables\n",
       "fs.native-s3.enabled=true\n", "s3.endpoint=http://10.0.0.5:9000\n", "s3.region=eu-central-1\n",
       "s3.path-style-access=true\n", "s3.aws-access-key=AKCONFIG\n",
       "s3.aws-secret-key=${ENV:SERAC_SECRET_KEY}\n"});
}

TEST(EngineConfigTest, DuckDbFollowsScheme) {
  ExpectContainsAll(
      Render("duckdb"),
      {"TYPE s3", "KEY_ID 'AKCONFIG'", "SECRET '${SERAC_SECRET_KEY}'", "ENDPOINT '10.0.0.5:9000'",
       "URL_STYLE 'path'", "USE_SSL false", "ATTACH 'lake' AS serac (TYPE iceberg",
       "ENDPOINT 'http://10.0.0.5:9000/_iceberg'", "AUTHORIZATION_TYPE 'sigv4'", "SIGV4_SERVICE 's3tables'",
       "SIGV4_REGION 'eu-central-1'"});
  EngineConfigInput tls = Input();
  tls.endpoint = "https://lake.example.com";
  ExpectContainsAll(Render("duckdb", tls), {"USE_SSL true", "ENDPOINT 'lake.example.com:443'"});
}

TEST(EngineConfigTest, ClickHouse) {
  ExpectContainsAll(Render("clickhouse"),
                    {"DataLakeCatalog('http://10.0.0.5:9000/_iceberg')", "catalog_type = 'rest'",
                     "warehouse = 'lake'", "storage_endpoint = 'http://10.0.0.5:9000'", "OAuth2"});
}

TEST(EngineConfigTest, Aws) {
  ExpectContainsAll(Render("aws"), {"export AWS_ACCESS_KEY_ID=AKCONFIG",
                                    "export AWS_SECRET_ACCESS_KEY=\"$SERAC_SECRET_KEY\"",
                                    "aws --endpoint-url http://10.0.0.5:9000 s3 ls", "s3://lake/"});
}

TEST(EngineConfigTest, NeverContainsTheSecretAndRefersToUnknownAccessKey) {
  EngineConfigInput input = Input();
  input.access_key.clear();
  input.warehouse.clear();
  for (const std::string& engine : EngineNames()) {
    std::string text = Render(engine, input);
    EXPECT_NE(text.find("SERAC_SECRET_KEY"), std::string::npos) << engine;
    EXPECT_NE(text.find("SERAC_ACCESS_KEY"), std::string::npos) << engine;
    EXPECT_NE(text.find("my-warehouse"), std::string::npos) << engine;
  }
}

TEST(EngineConfigTest, Errors) {
  EXPECT_EQ(RenderEngineConfig("hive", Input()).status().code(), ErrorCode::kInvalidArgument);
  EngineConfigInput bad = Input();
  bad.endpoint = "10.0.0.5:9000";
  EXPECT_FALSE(RenderEngineConfig("spark", bad).ok());
}

}  // namespace
}  // namespace serac::client
