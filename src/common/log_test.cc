#include "common/log.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/limits.h"

namespace serac {
namespace {

// Points stderr at a temporary file for the test's lifetime.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() / ("serac_log_test_" + std::to_string(::getpid()));
    log::Flush();
    std::fflush(stderr);
    saved_stderr_ = ::dup(STDERR_FILENO);
    int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_GE(::dup2(fd, STDERR_FILENO), 0);
    ::close(fd);
  }
  void TearDown() override {
    log::Flush();
    ::dup2(saved_stderr_, STDERR_FILENO);
    ::close(saved_stderr_);
    std::filesystem::remove(path_);
  }

  std::string Written() const {
    std::ifstream in(path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::filesystem::path path_;
  int saved_stderr_ = -1;
};

TEST_F(LogTest, WritesOneTimestampedLinePerMessageAndFiltersByLevel) {
  log::SetLevel(log::Level::kInfo);
  log::Debug("hidden");
  log::Info("hello");
  log::Error("two\nlines\rand\r\nend");
  const std::string out = Written();
  EXPECT_EQ(out.find("hidden"), std::string::npos);
  ASSERT_EQ(std::count(out.begin(), out.end(), '\n'), 2) << out;
  std::string first = out.substr(0, out.find('\n'));
  EXPECT_TRUE(ParseIso8601(first.substr(0, first.find(' '))).has_value()) << first;
  EXPECT_NE(first.find(" INFO hello"), std::string::npos) << first;
  EXPECT_NE(out.find(" ERROR two\\nlines\\rand\\r\\nend\n"), std::string::npos) << out;
  EXPECT_FALSE(log::Enabled(log::Level::kDebug));
  EXPECT_TRUE(log::Enabled(log::Level::kWarn));
}

TEST_F(LogTest, ADirectLineComesAfterTheBufferedLinesBeforeIt) {
  log::WriteBuffered(log::Level::kInfo, "first buffered");
  log::WriteBuffered(log::Level::kInfo, "second buffered");
  log::Warn("direct");
  const std::string text = Written();
  const size_t first = text.find("INFO first buffered\n");
  const size_t second = text.find("INFO second buffered\n");
  const size_t direct = text.find("WARN direct\n");
  ASSERT_NE(first, std::string::npos) << text;
  ASSERT_NE(second, std::string::npos) << text;
  ASSERT_NE(direct, std::string::npos) << text;
  EXPECT_LT(first, second);
  EXPECT_LT(second, direct);
}

TEST_F(LogTest, BufferedLinesAreWrittenWithinTheFlushInterval) {
  log::WriteBuffered(log::Level::kInfo, "waiting line");
  const auto deadline = std::chrono::steady_clock::now() + limits::kAccessLogFlushInterval * 50;
  while (Written().find("waiting line") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(Written().find("INFO waiting line\n"), std::string::npos);
}

TEST_F(LogTest, AFullBufferIsWrittenAtOnce) {
  const std::string message(1000, 'x');
  const size_t line_bytes =
      FormatIso8601(Now()).size() + std::string_view(" INFO ").size() + message.size() + 1;
  const size_t lines = (limits::kAccessLogBufferBytesMax + line_bytes - 1) / line_bytes;
  for (size_t i = 0; i < lines; ++i) log::WriteBuffered(log::Level::kInfo, message);
  // No Flush() and no wait: the line that filled the buffer wrote all of them.
  const std::string text = Written();
  size_t found = 0;
  for (size_t at = text.find(message); at != std::string::npos;
       at = text.find(message, at + message.size())) {
    ++found;
  }
  EXPECT_EQ(found, lines);
}

TEST_F(LogTest, AMessageStaysOnOneLine) {
  log::WriteBuffered(log::Level::kInfo, "path=/a\nINFO forged");
  log::Flush();
  EXPECT_NE(Written().find("INFO path=/a\\nINFO forged\n"), std::string::npos);
}

TEST_F(LogTest, LinesBelowTheLevelAreDropped) {
  log::WriteBuffered(log::Level::kDebug, "quiet");
  log::Debug("quiet too");
  log::Flush();
  EXPECT_EQ(Written().find("quiet"), std::string::npos);
}

}  // namespace
}  // namespace serac
