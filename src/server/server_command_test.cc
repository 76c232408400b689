#include "server/server_command.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <string>

namespace serac::server {
namespace {

// A getenv-like lookup over a fixed map.
auto Environment(const std::map<std::string, std::string>& values) {
  return [values](const char* name) -> const char* {
    auto found = values.find(name);
    return found == values.end() ? nullptr : found->second.c_str();
  };
}

TEST(NodeNameTest, ANameIsLettersDigitsDotsUnderscoresAndDashesWithinTheLimit) {
  EXPECT_TRUE(CheckNodeName("node-1.eu_west").ok());
  EXPECT_TRUE(CheckNodeName("").ok());  // no name: nothing said
  EXPECT_EQ(CheckNodeName("node 1").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(CheckNodeName("a\"b").code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(CheckNodeName(std::string(limits::kNodeNameBytesMax, 'n')).ok());
  EXPECT_EQ(CheckNodeName(std::string(limits::kNodeNameBytesMax + 1, 'n')).code(),
            ErrorCode::kInvalidArgument);
}

TEST(ServerKeyFilePathTest, FlagWinsOverEnvironment) {
  Result<std::string> path =
      ServerKeyFilePath("/etc/serac/key", Environment({{"SERAC_SERVER_KEY_FILE", "/x"}, {"HOME", "/h"}}));
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(*path, "/etc/serac/key");
}

TEST(ServerKeyFilePathTest, EnvironmentFileThenXdgThenHome) {
  EXPECT_EQ(*ServerKeyFilePath("", Environment({{"SERAC_SERVER_KEY_FILE", "/k"}, {"HOME", "/h"}})), "/k");
  EXPECT_EQ(*ServerKeyFilePath("", Environment({{"XDG_CONFIG_HOME", "/cfg"}, {"HOME", "/h"}})),
            "/cfg/serac/server.key");
  EXPECT_EQ(*ServerKeyFilePath("", Environment({{"XDG_CONFIG_HOME", ""}, {"HOME", "/h"}})),
            "/h/.config/serac/server.key");
}

TEST(ServerKeyFilePathTest, NoHomeIsAnError) {
  Result<std::string> path = ServerKeyFilePath("", Environment({}));
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(path.status().message().find("--server-key-file"), std::string::npos);
}

TEST(VendedCredentialTtlTest, AcceptsTheNamedRangeOnly) {
  EXPECT_TRUE(CheckVendedCredentialTtl(limits::kSessionCredentialsTtlDefault).ok());
  EXPECT_TRUE(CheckVendedCredentialTtl(limits::kSessionCredentialsTtlMin).ok());
  EXPECT_TRUE(CheckVendedCredentialTtl(limits::kSessionCredentialsTtlMax).ok());
  Status zero = CheckVendedCredentialTtl(std::chrono::seconds(0));
  EXPECT_EQ(zero.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(zero.message().find("--vended-credential-ttl"), std::string::npos) << zero.message();
  EXPECT_NE(zero.message().find("SERAC_VENDED_CREDENTIAL_TTL"), std::string::npos) << zero.message();
  EXPECT_EQ(CheckVendedCredentialTtl(std::chrono::seconds(-5)).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(CheckVendedCredentialTtl(std::chrono::seconds(limits::kSessionCredentialsTtlMax) +
                                     std::chrono::seconds(1))
                .code(),
            ErrorCode::kInvalidArgument);
}

TEST(DataDirectoryLockTest, OneHolderAtATime) {
  char pattern[] = "/tmp/serac-lock-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  {
    Result<DataDirectoryLock> first = DataDirectoryLock::Acquire(dir);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    Result<DataDirectoryLock> second = DataDirectoryLock::Acquire(dir);
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), ErrorCode::kAlreadyExists);
    EXPECT_NE(second.status().message().find("in use by another serac server"), std::string::npos);
  }
  // Released with its holder.
  EXPECT_TRUE(DataDirectoryLock::Acquire(dir).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace serac::server
