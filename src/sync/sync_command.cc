// The `serac sync` subcommands over config.h, postgres.h and the REST catalog client.
#include "sync/sync_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include "client/rest_catalog.h"
#include "sync/config.h"
#include "sync/postgres.h"
#include "sync/sync_run.h"

namespace serac::sync {

struct SyncCommandState {
  std::string config_path;
  std::string destination_path;
  std::string streams_path;
  bool destination_spec = false;
  SyncRunOptions run;              // `serac sync` itself
  std::function<Status()> action;  // the chosen subcommand
};

namespace {

void PrintNotices(const std::vector<ConfigNotice>& notices) {
  for (const ConfigNotice& notice : notices)
    std::fprintf(stderr, "serac sync: %s\n", notice.ToString().c_str());
}

Result<PostgresSource> LoadSource(const std::string& path) {
  SERAC_ASSIGN_OR_RETURN(std::string text, ReadConfigFile(path));
  std::vector<ConfigNotice> notices;
  auto source = ParseSourceConfig(text, path, notices);
  PrintNotices(notices);
  return source;
}

Result<IcebergDestination> LoadDestination(const std::string& path) {
  SERAC_ASSIGN_OR_RETURN(std::string text, ReadConfigFile(path));
  std::vector<ConfigNotice> notices;
  auto destination = ParseDestinationConfig(text, path, notices);
  PrintNotices(notices);
  return destination;
}

Status Check(const SyncCommandState& state) {
  if (state.config_path.empty() == state.destination_path.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 "check takes either --config source.json or --destination destination.json");
  }
  if (!state.config_path.empty()) {
    SERAC_ASSIGN_OR_RETURN(PostgresSource source, LoadSource(state.config_path));
    SERAC_ASSIGN_OR_RETURN(std::vector<std::string> facts, CheckSource(source));
    for (const std::string& fact : facts) std::printf("%s\n", fact.c_str());
    std::printf("source: ok\n");
    return Status::Ok();
  }
  SERAC_ASSIGN_OR_RETURN(IcebergDestination destination, LoadDestination(state.destination_path));
  auto connected = client::RestCatalog::Connect(CatalogOptions(destination));
  if (!connected.ok()) return NamingCredentials(destination, connected.status());
  std::unique_ptr<client::RestCatalog> catalog = std::move(connected).value();
  std::printf("catalog %s, warehouse %s: reachable\n", destination.catalog_uri.c_str(),
              destination.warehouse.c_str());
  if (!destination.default_namespace.empty()) {
    SERAC_ASSIGN_OR_RETURN(bool exists, catalog->NamespaceExists({destination.default_namespace}));
    std::printf("namespace %s: %s\n", destination.default_namespace.c_str(),
                exists ? "exists" : "absent, created by the first sync");
  }
  std::printf("destination: ok\n");
  return Status::Ok();
}

Status Discover(const SyncCommandState& state) {
  SERAC_ASSIGN_OR_RETURN(PostgresSource source, LoadSource(state.config_path));
  std::string output = state.streams_path;
  if (output.empty()) {
    output = (std::filesystem::path(state.config_path).parent_path() / "streams.json").string();
  }
  std::optional<StreamCatalog> previous;
  if (std::filesystem::exists(output)) {
    SERAC_ASSIGN_OR_RETURN(std::string text, ReadConfigFile(output));
    std::vector<ConfigNotice> notices;
    SERAC_ASSIGN_OR_RETURN(previous, ParseStreams(text, output, notices));
    PrintNotices(notices);
  }
  SERAC_ASSIGN_OR_RETURN(StreamCatalog catalog, DiscoverStreams(source, previous ? &*previous : nullptr));
  SERAC_RETURN_IF_ERROR(WriteConfigFile(output, StreamsToJson(catalog) + "\n"));
  std::printf("%zu streams (%zu selected) written to %s\n", catalog.streams.size(), catalog.selected.size(),
              output.c_str());
  return Status::Ok();
}

}  // namespace

SyncCommands::SyncCommands() : state_(std::make_unique<SyncCommandState>()) {}
SyncCommands::~SyncCommands() = default;

void SyncCommands::Register(CLI::App& app) {
  CLI::App* sync =
      app.add_subcommand("sync", "Replicate PostgreSQL into Iceberg tables (OLake's configuration files)");
  sync->require_subcommand(0, 1);
  SyncCommandState& state = *state_;
  // `serac sync --config ... --streams ... --destination ... --state ...`: a run.
  sync->add_option("--config", state.run.source_path, "source.json");
  sync->add_option("--streams,--catalog", state.run.streams_path, "streams.json (selected_streams)");
  sync->add_option("--destination", state.run.destination_path, "destination.json");
  sync->add_option("--state", state.run.state_path, "state.json, kept current (stats.json beside it)");
  sync->add_flag("--follow", state.run.follow, "Keep streaming changes until interrupted");
  sync->callback([&state, sync] {
    if (state.action) return;  // a subcommand was chosen
    state.action = [&state] {
      for (const auto& [value, flag] :
           {std::pair<const std::string&, const char*>{state.run.source_path, "--config"},
            {state.run.streams_path, "--streams"},
            {state.run.destination_path, "--destination"},
            {state.run.state_path, "--state"}}) {
        if (value.empty()) return Error(ErrorCode::kInvalidArgument, std::string("a run needs ") + flag);
      }
      return RunSync(state.run);
    };
    (void)sync;
  });
  CLI::App* spec = sync->add_subcommand("spec", "Print the JSON Schema of source.json (or destination.json)");
  spec->add_flag("--destination", state.destination_spec, "The schema of destination.json");
  spec->callback([&state] {
    state.action = [&state] {
      std::printf("%s\n", (state.destination_spec ? DestinationSpecJson() : SourceSpecJson()).c_str());
      return Status::Ok();
    };
  });
  CLI::App* check =
      sync->add_subcommand("check", "Connect to the source or the destination and say what was found");
  check->add_option("--config", state.config_path, "source.json");
  check->add_option("--destination", state.destination_path, "destination.json");
  check->callback([&state] { state.action = [&state] { return Check(state); }; });
  CLI::App* discover = sync->add_subcommand("discover", "Write the source's tables as streams.json");
  discover->add_option("--config", state.config_path, "source.json")->required();
  discover->add_option(
      "--streams,--catalog", state.streams_path,
      "streams.json to write, merged with its selections when it exists (default: beside source.json)");
  discover->callback([&state] { state.action = [&state] { return Discover(state); }; });
}

std::optional<int> SyncCommands::RunSelected() {
  if (!state_->action) return std::nullopt;
  Status status = state_->action();
  if (!status.ok()) {
    std::fprintf(stderr, "serac sync: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace serac::sync
