// Property names follow each engine's documentation for an Iceberg REST catalog with SigV4
// (signing name s3tables) and path-style S3 for the data files.
#include "client/engine_config.h"

#include "client/api_client.h"
#include "http/client.h"

namespace serac::client {
namespace {

constexpr std::string_view kSecretEnv = "SERAC_SECRET_KEY";
constexpr std::string_view kAccessEnv = "SERAC_ACCESS_KEY";
constexpr std::string_view kWarehousePlaceholder = "my-warehouse";
constexpr std::string_view kCatalogName = "serac";

// Everything the renderers need, derived once from the input.
struct Target {
  std::string endpoint;     // without trailing slash
  std::string catalog_uri;  // endpoint + /_iceberg
  std::string host_port;    // for tools that want no scheme
  bool tls = false;
  std::string access_key;  // may be empty
  std::string region;
  std::string warehouse;
};

Result<Target> MakeTarget(const EngineConfigInput& input) {
  Target target;
  target.endpoint = input.endpoint;
  while (!target.endpoint.empty() && target.endpoint.back() == '/') target.endpoint.pop_back();
  Result<http::Url> url = http::ParseUrl(target.endpoint);
  if (!url.ok()) return Error(ErrorCode::kInvalidArgument, "bad endpoint: " + url.status().message());
  target.tls = url->tls;
  target.host_port = (url->host.find(':') != std::string::npos ? "[" + url->host + "]" : url->host) + ":" +
                     std::to_string(url->port);
  target.catalog_uri = target.endpoint + std::string(client::kCatalogBasePath);
  target.access_key = input.access_key;
  target.region = input.region;
  target.warehouse = input.warehouse.empty() ? std::string(kWarehousePlaceholder) : input.warehouse;
  return target;
}

// A value the shell expands: the access key itself, or a reference to its variable.
std::string ShellAccessKey(const Target& target) {
  return target.access_key.empty() ? "\"$" + std::string(kAccessEnv) + "\"" : target.access_key;
}
const std::string kShellSecret = "\"$" + std::string(kSecretEnv) + "\"";

std::string WarehouseNote(const Target& target) {
  return "create the warehouse first: serac warehouse create " + target.warehouse;
}

std::string RenderSpark(const Target& target) {
  const std::string prefix = "spark.sql.catalog." + std::string(kCatalogName);
  const std::vector<std::pair<std::string, std::string>> properties = {
      {"spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"},
      {prefix, "org.apache.iceberg.spark.SparkCatalog"},
      {prefix + ".type", "rest"},
      {prefix + ".uri", target.catalog_uri},
      {prefix + ".warehouse", target.warehouse},
      {prefix + ".rest.sigv4-enabled", "true"},
      {prefix + ".rest.signing-name", std::string(client::kCatalogSigningName)},
      {prefix + ".rest.signing-region", target.region},
      {prefix + ".rest.access-key-id", ShellAccessKey(target)},
      {prefix + ".rest.secret-access-key", kShellSecret},
      {prefix + ".io-impl", "org.apache.iceberg.aws.s3.S3FileIO"},
      {prefix + ".s3.endpoint", target.endpoint},
      {prefix + ".s3.path-style-access", "true"},
      {prefix + ".s3.access-key-id", ShellAccessKey(target)},
      {prefix + ".s3.secret-access-key", kShellSecret},
      {prefix + ".client.region", target.region},
  };
  std::string text =
      "# Spark (spark-sql, spark-shell, pyspark, spark-submit): needs iceberg-spark-runtime and\n"
      "# iceberg-aws-bundle on the classpath (--packages). The secret comes from $" +
      std::string(kSecretEnv) + ";\n# " + WarehouseNote(target) + "\n";
  for (size_t i = 0; i < properties.size(); ++i) {
    text += "--conf " + properties[i].first + "=" + properties[i].second;
    text += i + 1 < properties.size() ? " \\\n" : "\n";
  }
  return text;
}

std::string PythonString(std::string_view text) { return "\"" + std::string(text) + "\""; }

std::string RenderPyIceberg(const Target& target) {
  const std::string access = target.access_key.empty() ? "os.environ[" + PythonString(kAccessEnv) + "]"
                                                       : PythonString(target.access_key);
  const std::string secret = "os.environ[" + PythonString(kSecretEnv) + "]";
  const std::vector<std::pair<std::string, std::string>> properties = {
      {"type", PythonString("rest")},
      {"uri", PythonString(target.catalog_uri)},
      {"warehouse", PythonString(target.warehouse)},
      {"rest.sigv4-enabled", PythonString("true")},
      {"rest.signing-name", PythonString(client::kCatalogSigningName)},
      {"rest.signing-region", PythonString(target.region)},
      {"client.access-key-id", access},
      {"client.secret-access-key", secret},
      {"client.region", PythonString(target.region)},
      {"s3.endpoint", PythonString(target.endpoint)},
      {"s3.access-key-id", access},
      {"s3.secret-access-key", secret},
      {"s3.region", PythonString(target.region)},
      {"s3.path-style-access", PythonString("true")},
      {"s3.force-virtual-addressing", "False"},
  };
  std::string text =
      "# PyIceberg (pip install \"pyiceberg[pyarrow,rest-sigv4]\"); " + WarehouseNote(target) +
      "\nimport os\n\nfrom pyiceberg.catalog import load_catalog\n\ncatalog = load_catalog(\n    " +
      PythonString(kCatalogName) + ",\n    **{\n";
  for (const auto& [key, value] : properties) text += "        " + PythonString(key) + ": " + value + ",\n";
  text += "    },\n)\nprint(catalog.list_namespaces())\n";
  return text;
}

std::string RenderTrino(const Target& target) {
  const std::string access =
      target.access_key.empty() ? "${ENV:" + std::string(kAccessEnv) + "}" : target.access_key;
  return "# Trino: etc/catalog/" + std::string(kCatalogName) +
         ".properties (older Trino releases name the\n"
         "# SigV4 switch differently); " +
         WarehouseNote(target) +
         "\n"
         "connector.name=iceberg\n"
         "iceberg.catalog.type=rest\n"
         "iceberg.rest-catalog.uri=" +
         target.catalog_uri +
         "\n"
         "iceberg.rest-catalog.warehouse=" +
         target.warehouse +
         "\n"
         "iceberg.rest-catalog.security=SIGV4\n"
         "iceberg.rest-catalog.signing-name=" +
         std::string(client::kCatalogSigningName) +
         "\n"
         "fs.native-s3.enabled=true\n"
         "s3.endpoint=" +
         target.endpoint +
         "\n"
         "s3.region=" +
         target.region +
         "\n"
         "s3.path-style-access=true\n"
         "s3.aws-access-key=" +
         access +
         "\n"
         "s3.aws-secret-key=${ENV:" +
         std::string(kSecretEnv) + "}\n";
}

std::string RenderDuckDb(const Target& target) {
  const std::string access =
      target.access_key.empty() ? "${" + std::string(kAccessEnv) + "}" : target.access_key;
  return "-- DuckDB with the iceberg and httpfs extensions. ${" + std::string(kSecretEnv) +
         "} is filled in by the shell:\n"
         "--   serac config --engine duckdb | envsubst | duckdb\n"
         "-- " +
         WarehouseNote(target) +
         "\n"
         "INSTALL httpfs; LOAD httpfs; INSTALL iceberg; LOAD iceberg;\n"
         "CREATE OR REPLACE SECRET serac_s3 (TYPE s3, KEY_ID '" +
         access + "', SECRET '${" + std::string(kSecretEnv) + "}', REGION '" + target.region +
         "', ENDPOINT '" + target.host_port + "', URL_STYLE 'path', USE_SSL " +
         (target.tls ? "true" : "false") +
         ");\n"
         "ATTACH '" +
         target.warehouse + "' AS " + std::string(kCatalogName) + " (TYPE iceberg, ENDPOINT '" +
         target.catalog_uri + "', AUTHORIZATION_TYPE 'sigv4', SECRET serac_s3, SIGV4_SERVICE '" +
         std::string(client::kCatalogSigningName) + "', SIGV4_REGION '" + target.region +
         "');\n"
         "SHOW ALL TABLES;\n";
}

std::string RenderClickHouse(const Target& target) {
  const std::string access =
      target.access_key.empty() ? "${" + std::string(kAccessEnv) + "}" : target.access_key;
  return "-- ClickHouse DataLakeCatalog. Its generic REST catalog signs with OAuth2 only, not SigV4;\n"
         "-- serac's OAuth2 token endpoint comes later, until then catalog calls are refused.\n"
         "-- ${" +
         std::string(kSecretEnv) + "} is filled in by the shell (envsubst). " + WarehouseNote(target) +
         "\n"
         "SET allow_experimental_database_iceberg = 1;\n"
         "CREATE DATABASE " +
         std::string(kCatalogName) + " ENGINE = DataLakeCatalog('" + target.catalog_uri +
         "')\n"
         "SETTINGS catalog_type = 'rest', warehouse = '" +
         target.warehouse +
         "',\n"
         "         storage_endpoint = '" +
         target.endpoint + "', region = '" + target.region +
         "',\n"
         "         aws_access_key_id = '" +
         access + "', aws_secret_access_key = '${" + std::string(kSecretEnv) + "}';\n";
}

std::string RenderAws(const Target& target) {
  std::string text =
      "# AWS CLI and SDKs\n"
      "export AWS_ACCESS_KEY_ID=" +
      ShellAccessKey(target) +
      "\n"
      "export AWS_SECRET_ACCESS_KEY=" +
      kShellSecret +
      "\n"
      "export AWS_REGION=" +
      target.region +
      "\n"
      "export AWS_ENDPOINT_URL=" +
      target.endpoint +
      "\n"
      "aws --endpoint-url " +
      target.endpoint +
      " s3 ls\n"
      "aws --endpoint-url " +
      target.endpoint + " s3 ls s3://" + target.warehouse + "/\n";
  return text;
}

}  // namespace

const std::vector<std::string>& EngineNames() {
  static const std::vector<std::string> kNames = {"spark",  "pyiceberg",  "trino",
                                                  "duckdb", "clickhouse", "aws"};
  return kNames;
}

Result<std::string> RenderEngineConfig(std::string_view engine, const EngineConfigInput& input) {
  SERAC_ASSIGN_OR_RETURN(Target target, MakeTarget(input));
  if (engine == "spark") return RenderSpark(target);
  if (engine == "pyiceberg") return RenderPyIceberg(target);
  if (engine == "trino") return RenderTrino(target);
  if (engine == "duckdb") return RenderDuckDb(target);
  if (engine == "clickhouse") return RenderClickHouse(target);
  if (engine == "aws") return RenderAws(target);
  return Error(ErrorCode::kInvalidArgument, "unknown engine '" + std::string(engine) +
                                                "': use spark, pyiceberg, trino, duckdb, clickhouse or aws");
}

}  // namespace serac::client
