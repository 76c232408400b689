#include "common/log.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>

#include "common/clock.h"

namespace serac::log {

namespace {

std::atomic<Level> g_level{Level::kInfo};

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::kDebug: return "DEBUG";
    case Level::kInfo: return "INFO";
    case Level::kWarn: return "WARN";
    case Level::kError: return "ERROR";
  }
  return "?";
}

// Keeps one message on one line: a message built from client input must not forge extra lines.
void AppendEscaped(std::string& line, std::string_view message) {
  for (char c : message) {
    if (c == '\n') {
      line += "\\n";
    } else if (c == '\r') {
      line += "\\r";
    } else {
      line.push_back(c);
    }
  }
}

void WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t written = ::write(fd, data, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      return;  // nowhere left to report a failing stderr
    }
    data += written;
    size -= static_cast<size_t>(written);
  }
}

}  // namespace

void SetLevel(Level level) { g_level.store(level, std::memory_order_relaxed); }

bool Enabled(Level level) {
  return static_cast<int>(level) >= static_cast<int>(g_level.load(std::memory_order_relaxed));
}

void Write(Level level, std::string_view message) {
  if (!Enabled(level)) return;
  std::string line = FormatIso8601(Now());
  line.push_back(' ');
  line += LevelName(level);
  line.push_back(' ');
  AppendEscaped(line, message);
  line.push_back('\n');
  // A single write(2) per line keeps lines from concurrent threads whole (stderr is unbuffered).
  WriteAll(STDERR_FILENO, line.data(), line.size());
}

}  // namespace serac::log
