// Structured, line-oriented logging to stderr. Thread-safe: every line reaches stderr whole.
// Never pass secrets: secret keys, signatures, session tokens or Authorization headers.
#pragma once

#include <string_view>

namespace serac::log {

enum class Level { kDebug, kInfo, kWarn, kError };

void SetLevel(Level level);
bool Enabled(Level level);

// Writes the line now (one write(2)), after any buffered lines so the order on stderr holds.
void Write(Level level, std::string_view message);

// For lines written on every request (the access log): the line joins a buffer that is written
// with one write(2) when it holds limits::kAccessLogBufferBytesMax, when a Write() or Flush()
// comes, and at the latest limits::kAccessLogFlushInterval later. A process killed outright loses
// at most that interval's lines; a normal exit writes them.
void WriteBuffered(Level level, std::string_view message);

// Writes every buffered line now.
void Flush();

inline void Debug(std::string_view m) { Write(Level::kDebug, m); }
inline void Info(std::string_view m) { Write(Level::kInfo, m); }
inline void Warn(std::string_view m) { Write(Level::kWarn, m); }
inline void Error(std::string_view m) { Write(Level::kError, m); }

}  // namespace serac::log
