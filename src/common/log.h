// Structured, line-oriented logging to stderr. Thread-safe (one write(2) per line).
// Never pass secrets: secret keys, signatures, session tokens or Authorization headers.
#pragma once

#include <string_view>

namespace serac::log {

enum class Level { kDebug, kInfo, kWarn, kError };

void SetLevel(Level level);
bool Enabled(Level level);
void Write(Level level, std::string_view message);

inline void Debug(std::string_view m) { Write(Level::kDebug, m); }
inline void Info(std::string_view m) { Write(Level::kInfo, m); }
inline void Warn(std::string_view m) { Write(Level::kWarn, m); }
inline void Error(std::string_view m) { Write(Level::kError, m); }

}  // namespace serac::log
