#include "common/log.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/limits.h"

namespace serac::log {

namespace {

std::atomic<Level> g_level{Level::kInfo};

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::kDebug:
      return "DEBUG";
    case Level::kInfo:
      return "INFO";
    case Level::kWarn:
      return "WARN";
    case Level::kError:
      return "ERROR";
  }
  return "?";
}

// Keeps one message on one line: a message built from client input must not forge extra lines.
void AppendEscaped(std::string& line, std::string_view message) {
  size_t clean_from = 0;
  for (size_t i = 0; i < message.size(); ++i) {
    const char c = message[i];
    if (c != '\n' && c != '\r') continue;
    line.append(message.data() + clean_from, i - clean_from);
    line += c == '\n' ? "\\n" : "\\r";
    clean_from = i + 1;
  }
  line.append(message.data() + clean_from, message.size() - clean_from);
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

std::string FormatLine(Level level, std::string_view message) {
  std::string line = FormatIso8601(Now());
  line.reserve(line.size() + message.size() + 16);
  line.push_back(' ');
  line += LevelName(level);
  line.push_back(' ');
  AppendEscaped(line, message);
  line.push_back('\n');
  return line;
}

// Lines of WriteBuffered() waiting for their write(2). Never destroyed: the flusher thread may
// still run while the process exits.
struct LineBuffer {
  std::mutex write_mutex;  // held while writing, so batches and direct lines reach stderr in order
  std::mutex mutex;        // guards lines
  std::condition_variable has_lines;
  std::string lines;
  std::once_flag flusher_started;
};

LineBuffer& Buffer() {
  static LineBuffer* buffer = new LineBuffer();
  return *buffer;
}

// Caller holds buffer.write_mutex.
void WriteBufferedLines(LineBuffer& buffer) {
  std::string lines;
  {
    std::lock_guard lock(buffer.mutex);
    lines.swap(buffer.lines);
  }
  WriteAll(STDERR_FILENO, lines.data(), lines.size());
}

void RunFlusher() {
  LineBuffer& buffer = Buffer();
  while (true) {
    {
      std::unique_lock lock(buffer.mutex);
      buffer.has_lines.wait(lock, [&] { return !buffer.lines.empty(); });
    }
    std::this_thread::sleep_for(limits::kAccessLogFlushInterval);
    Flush();
  }
}

void StartFlusher() {
  std::atexit(Flush);
  std::thread(RunFlusher).detach();
}

}  // namespace

void SetLevel(Level level) { g_level.store(level, std::memory_order_relaxed); }

bool Enabled(Level level) {
  return static_cast<int>(level) >= static_cast<int>(g_level.load(std::memory_order_relaxed));
}

void Write(Level level, std::string_view message) {
  if (!Enabled(level)) return;
  const std::string line = FormatLine(level, message);
  LineBuffer& buffer = Buffer();
  std::lock_guard lock(buffer.write_mutex);
  WriteBufferedLines(buffer);
  // One write(2) per line keeps lines whole even beside other writers of stderr (it is unbuffered).
  WriteAll(STDERR_FILENO, line.data(), line.size());
}

void WriteBuffered(Level level, std::string_view message) {
  if (!Enabled(level)) return;
  const std::string line = FormatLine(level, message);
  LineBuffer& buffer = Buffer();
  std::call_once(buffer.flusher_started, StartFlusher);
  bool full = false;
  {
    std::lock_guard lock(buffer.mutex);
    if (buffer.lines.empty()) buffer.has_lines.notify_one();
    buffer.lines += line;
    full = buffer.lines.size() >= limits::kAccessLogBufferBytesMax;
  }
  if (full) Flush();
}

void Flush() {
  LineBuffer& buffer = Buffer();
  std::lock_guard lock(buffer.write_mutex);
  WriteBufferedLines(buffer);
}

}  // namespace serac::log
