// `serac sync`: registered on the CLI11 app by main.cc, run after parsing. This part reads and
// checks OLake's configuration files and the source: `serac sync spec [--destination]` prints the
// JSON Schema of source.json or destination.json, `serac sync check --config source.json |
// --destination destination.json` connects and says what it found, `serac sync discover --config
// source.json [--streams streams.json]` writes (or merges into) streams.json, and `serac sync
// --config ... --streams ... --destination ... --state ... [--follow]` runs the replication
// (sync_run.h). Fields serac does not use are reported once on stderr. Not thread-safe: one
// instance per process, used from main().
#pragma once

#include <memory>
#include <optional>

namespace CLI {
class App;
}

namespace serac::sync {

struct SyncCommandState;  // the parsed arguments, private to sync_command.cc

class SyncCommands {
 public:
  SyncCommands();
  ~SyncCommands();
  SyncCommands(const SyncCommands&) = delete;
  SyncCommands& operator=(const SyncCommands&) = delete;

  void Register(CLI::App& app);
  // After a successful parse: the exit code when `serac sync ...` was chosen (0 on success, 1 on an
  // error already printed to stderr); nullopt otherwise.
  std::optional<int> RunSelected();

 private:
  std::unique_ptr<SyncCommandState> state_;
};

}  // namespace serac::sync
