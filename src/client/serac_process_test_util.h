// Tests only: a real `serac server` process (the binary this build made, SERAC_BINARY_PATH) on a
// loopback port the kernel picks, with a fresh data directory and known root credentials, stopped
// and cleaned up when the object goes away.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace serac::client::testing {

inline constexpr const char* kRootAccessKey = "client-test-root";
inline constexpr const char* kRootSecretKey = "client-test-root-secret-0123456789";

class SeracProcess {
 public:
  SeracProcess() {
    std::string pattern = (std::filesystem::temp_directory_path() / "serac-client-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) return;
    dir_ = pattern;
    int out[2];
    if (pipe(out) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    const std::string log = dir_ + "/stderr.log";
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    std::vector<std::string> env_strings;
    for (char** entry = environ; *entry != nullptr; ++entry) env_strings.emplace_back(*entry);
    env_strings.push_back(std::string("SERAC_ROOT_USER=") + kRootAccessKey);
    env_strings.push_back(std::string("SERAC_ROOT_PASSWORD=") + kRootSecretKey);
    // 32 bytes of 'k', base64: the server key, so that nothing is written under $HOME.
    env_strings.push_back("SERAC_SERVER_KEY=a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s=");
    std::vector<char*> env;
    for (std::string& entry : env_strings) env.push_back(entry.data());
    env.push_back(nullptr);
    std::vector<std::string> arg_strings = {SERAC_BINARY_PATH, "server",      "--data",      dir_ + "/data",
                                            "--address",       "127.0.0.1:0", "--log-level", "warn"};
    std::vector<char*> args;
    for (std::string& arg : arg_strings) args.push_back(arg.data());
    args.push_back(nullptr);
    const int spawned = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), env.data());
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    if (spawned != 0) {
      pid_ = -1;
      close(out[0]);
      return;
    }
    ReadPort(out[0]);
  }

  ~SeracProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    if (stdout_fd_ >= 0) close(stdout_fd_);
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  SeracProcess(const SeracProcess&) = delete;
  SeracProcess& operator=(const SeracProcess&) = delete;

  bool running() const { return pid_ > 0 && port_ > 0; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  // Reads stdout until "serac: listening on HOST:PORT" (the banner's last line), or 30 s.
  void ReadPort(int fd) {
    stdout_fd_ = fd;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::string seen;
    const std::string marker = "serac: listening on ";
    while (std::chrono::steady_clock::now() < deadline) {
      char buffer[4096];
      const ssize_t got = read(fd, buffer, sizeof buffer);
      if (got <= 0) return;
      seen.append(buffer, static_cast<size_t>(got));
      const size_t at = seen.find(marker);
      if (at == std::string::npos) continue;
      const size_t end = seen.find('\n', at);
      if (end == std::string::npos) continue;
      const std::string address = seen.substr(at + marker.size(), end - at - marker.size());
      port_ = std::stoi(address.substr(address.rfind(':') + 1));
      return;
    }
  }

  std::string dir_;
  pid_t pid_ = -1;
  int stdout_fd_ = -1;  // kept open so that the server never writes into a closed pipe
  int port_ = 0;
};

}  // namespace serac::client::testing
