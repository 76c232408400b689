// The client subcommands of `serac` (warehouse, namespace, table, view, config, user, key, policy):
// registered on the CLI11 app by main.cc, run after parsing. They talk to a running server over
// HTTP, signed with SigV4; endpoint and keys come from flags or SERAC_ENDPOINT / SERAC_ACCESS_KEY /
// SERAC_SECRET_KEY. Not thread-safe: one instance per process, used from main().
#pragma once

#include <memory>
#include <optional>

namespace CLI {
class App;
}

namespace serac::cli {

struct CommandState;  // the parsed arguments, private to client_commands.cc

class ClientCommands {
 public:
  ClientCommands();
  ~ClientCommands();
  ClientCommands(const ClientCommands&) = delete;
  ClientCommands& operator=(const ClientCommands&) = delete;

  // Adds the subcommands and their flags to `app`. `app` must outlive this object's use.
  void Register(CLI::App& app);
  // After a successful parse: the process exit code when one of these subcommands was chosen
  // (0 on success, 1 on an error already printed to stderr); nullopt otherwise.
  std::optional<int> RunSelected();

 private:
  std::unique_ptr<CommandState> state_;
};

}  // namespace serac::cli
