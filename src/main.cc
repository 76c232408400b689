// serac's command line. Each subcommand parses its flags here and hands a plain options struct to
// the module that runs it: `server` and `admin migrate` here (both run by server/), the client
// subcommands (warehouse, namespace, table, view, config, user, key, policy) through
// cli::ClientCommands, `serac sync` through sync::SyncCommands.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "cli/client_commands.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/version.h"
#include "server/migrate_command.h"
#include "server/server_command.h"
#include "sync/sync_command.h"

namespace {

const std::map<std::string, serac::log::Level> kLogLevels = {
    {"debug", serac::log::Level::kDebug},
    {"info", serac::log::Level::kInfo},
    {"warn", serac::log::Level::kWarn},
    {"error", serac::log::Level::kError},
};

CLI::App* AddServerCommand(CLI::App& app, serac::server::ServerCommandOptions& options) {
  CLI::App* command = app.add_subcommand("server", "Run the S3-compatible object store");
  command->add_option("--data", options.data_dir, "Data directory (created with mode 0700)")
      ->capture_default_str();
  command->add_option(
      "--meta-store", options.meta_store_url,
      "Where the object index, catalog and IAM live, as a URL: sqlite:PATH (default "
      "sqlite:DATA/meta.db) or postgresql://USER@HOST:PORT/DB?... (shared by several servers; "
      "libpq's URL and password sources, never logged)");
  command->add_option(
      "--blob-store", options.blob_store_url,
      "Where object bytes live, as a URL: file:DIR (default file:DATA/blobs) or "
      "s3://BUCKET/PREFIX?endpoint=URL (an upstream S3 service; keys from SERAC_BLOB_S3_* or AWS_*)");
  command->add_option("--node-name", options.node_name,
                      "Which server of several this is, in x-serac-node and the metrics (default: none)");
  command->add_option("--address", options.address, "Listen address HOST:PORT; :0 picks a free port")
      ->capture_default_str();
  command->add_option("--certs-dir", options.certs_dir,
                      "Serve HTTPS when this directory holds cert.pem and key.pem");
  command->add_option("--domain", options.domain,
                      "Base domain for virtual-host style requests (<bucket>.<domain>)");
  command->add_option("--region", options.region, "Region reported to clients")->capture_default_str();
  command->add_option(
      "--server-key-file", options.server_key_file,
      "File of the 32-byte server key that seals secrets and signs tokens, created on first "
      "start; keep it outside the data directory (env SERAC_SERVER_KEY_FILE, default "
      "${XDG_CONFIG_HOME:-$HOME/.config}/serac/server.key; env SERAC_SERVER_KEY gives the key "
      "itself in base64)");
  command
      ->add_option_function<int64_t>(
          "--token-ttl", [&options](int64_t seconds) { options.token_ttl = std::chrono::seconds(seconds); },
          "Lifetime of OAuth2 bearer tokens in seconds (default " +
              std::to_string(std::chrono::seconds(serac::limits::kBearerTokenTtlDefault).count()) + ")")
      ->check(CLI::Range(
          int64_t{1}, static_cast<int64_t>(std::chrono::seconds(serac::limits::kBearerTokenTtlMax).count())));
  command
      ->add_option_function<int64_t>(
          "--vended-credential-ttl",
          [&options](int64_t seconds) { options.vended_credential_ttl = std::chrono::seconds(seconds); },
          "Lifetime in seconds of the temporary S3 credentials the catalog vends for a table, " +
              std::to_string(std::chrono::seconds(serac::limits::kSessionCredentialsTtlMin).count()) +
              " to " +
              std::to_string(std::chrono::seconds(serac::limits::kSessionCredentialsTtlMax).count()) +
              " (default " +
              std::to_string(std::chrono::seconds(serac::limits::kSessionCredentialsTtlDefault).count()) +
              ")")
      ->envname("SERAC_VENDED_CREDENTIAL_TTL");
  command
      ->add_option("--maintenance-interval", options.maintenance_check_interval_seconds,
                   "Seconds after a commit before the server looks at the table for automatic maintenance "
                   "(compaction, snapshot expiry), and at most how often; 0 runs jobs only when asked")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{7} * 24 * 3600));
  command
      ->add_option("--connections-per-client-max", options.connections_per_client_max,
                   "Open connections one client address may hold (of " +
                       std::to_string(serac::limits::kConnectionsMax) +
                       "); 0: no cap, as behind a proxy or load balancer that is every client's address")
      ->capture_default_str();
  command
      ->add_option_function<std::string>(
          "--console", [&options](const std::string& value) { options.console = value == "on"; },
          "The web console at /_serac/console/: on (default) or off")
      ->check(CLI::IsMember({"on", "off"}));
  command->add_flag_callback(
      "--no-fsync", [&options] { options.fsync = false; },
      "Do not fsync writes (benchmarks only: acknowledged data can be lost)");
  return command;
}

CLI::App* AddAdminMigrateCommand(CLI::App& app, serac::server::MigrateCommandOptions& options) {
  CLI::App* admin = app.add_subcommand("admin", "Administer a node's stores offline (its server stopped)");
  admin->require_subcommand(1);
  CLI::App* command =
      admin->add_subcommand("migrate",
                            "Move a single node's whole state (buckets, objects, uploads, catalog, IAM) into "
                            "another metadata store, "
                            "then compare the two; run it again after an interruption to finish");
  command
      ->add_option(
          "--from", options.from_url,
          "The node's metadata store, sqlite:DATA/meta.db (its server must be stopped: DATA/serac.lock)")
      ->required();
  command
      ->add_option("--to", options.to_url,
                   "Where it goes: postgresql://USER@HOST:PORT/DB?... (libpq's URL, never printed) or any "
                   "--meta-store URL")
      ->required();
  command->add_option(
      "--blobs-from", options.blobs_from_url,
      "The node's blob store, as a --blob-store URL (default file:DIR/blobs beside the database)");
  command->add_option(
      "--copy-blobs-to", options.copy_blobs_to_url,
      "Also copy every blob to this blob store (file:DIR or s3://BUCKET/PREFIX?endpoint=...), under "
      "the same ids; default: the blobs stay where they are");
  return command;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("serac: an S3-compatible object store and Iceberg REST catalog", "serac");
  app.require_subcommand(1);
  app.set_version_flag("--version", "serac " + std::string(serac::kSeracVersion));
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "Log level: debug, info, warn, error")
      ->capture_default_str()
      ->transform(CLI::IsMember({"debug", "info", "warn", "error"}, CLI::ignore_case));
  app.fallthrough();  // lets --log-level follow the subcommand name too

  serac::server::ServerCommandOptions server_options;
  CLI::App* server = AddServerCommand(app, server_options);
  serac::server::MigrateCommandOptions migrate_options;
  CLI::App* migrate = AddAdminMigrateCommand(app, migrate_options);
  serac::cli::ClientCommands client_commands;
  client_commands.Register(app);
  serac::sync::SyncCommands sync_commands;
  sync_commands.Register(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  serac::log::SetLevel(kLogLevels.at(log_level));
  if (server->parsed()) return serac::server::RunServer(server_options);
  if (migrate->parsed()) return serac::server::RunMigrateCommand(migrate_options);
  if (std::optional<int> exit_code = client_commands.RunSelected()) return *exit_code;
  if (std::optional<int> exit_code = sync_commands.RunSelected()) return *exit_code;
  std::fputs(app.help().c_str(), stderr);
  return 2;
}
