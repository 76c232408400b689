#include "server/root_credentials.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace serac::server {
namespace {

class RootCredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/serac-root-credentials-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string FilePath() const { return dir_ + "/root-credentials"; }
  std::string ReadFile() const {
    std::ifstream in(FilePath());
    std::stringstream contents;
    contents << in.rdbuf();
    return contents.str();
  }
  void WriteFile(const std::string& contents) const { std::ofstream(FilePath()) << contents; }

  std::string dir_;
};

TEST_F(RootCredentialsTest, GeneratesOnFirstStartAndRereadsLater) {
  Result<RootCredentials> first = LoadRootCredentials(dir_, std::nullopt, std::nullopt);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->source, CredentialSource::kGenerated);
  EXPECT_EQ(first->file_path, FilePath());
  const auth::Credentials& generated = first->credentials;
  ASSERT_EQ(generated.access_key.size(), 20u);
  for (char c : generated.access_key) EXPECT_TRUE(std::isupper(c) || std::isdigit(c)) << c;
  ASSERT_EQ(generated.secret_key.size(), 40u);
  for (char c : generated.secret_key) EXPECT_TRUE(std::isalnum(c)) << c;

  struct stat info {};
  ASSERT_EQ(::stat(FilePath().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_FALSE(std::filesystem::exists(FilePath() + ".tmp"));
  EXPECT_EQ(ReadFile(), FormatCredentialsFile(generated));

  Result<RootCredentials> second = LoadRootCredentials(dir_, std::nullopt, std::nullopt);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->source, CredentialSource::kFile);
  EXPECT_EQ(second->credentials.access_key, generated.access_key);
  EXPECT_EQ(second->credentials.secret_key, generated.secret_key);
}

TEST_F(RootCredentialsTest, GeneratedKeysDiffer) {
  auth::Credentials a = GenerateRootCredentials();
  auth::Credentials b = GenerateRootCredentials();
  EXPECT_NE(a.access_key, b.access_key);
  EXPECT_NE(a.secret_key, b.secret_key);
}

TEST_F(RootCredentialsTest, EnvironmentWinsAndWritesNoFile) {
  Result<RootCredentials> root = LoadRootCredentials(dir_, "admin", "password12345678");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->source, CredentialSource::kEnvironment);
  EXPECT_EQ(root->credentials.access_key, "admin");
  EXPECT_EQ(root->credentials.secret_key, "password12345678");
  EXPECT_FALSE(std::filesystem::exists(FilePath()));
}

TEST_F(RootCredentialsTest, RejectsHalfSetOrShortEnvironment) {
  EXPECT_EQ(LoadRootCredentials(dir_, "admin", std::nullopt).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(LoadRootCredentials(dir_, std::nullopt, "password123").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(LoadRootCredentials(dir_, "admin", "").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(LoadRootCredentials(dir_, "ad", "password123").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(LoadRootCredentials(dir_, "admin", "short").status().code(), ErrorCode::kInvalidArgument);
  // Fifteen characters: one short of limits::kRootSecretKeyBytesMin.
  EXPECT_EQ(LoadRootCredentials(dir_, "admin", "password1234567").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(LoadRootCredentials(dir_, "ad/min", "password123").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(LoadRootCredentials(dir_, "admin", "pass word123").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(FilePath()));
}

TEST_F(RootCredentialsTest, RejectsMalformedFileInsteadOfRegenerating) {
  WriteFile("access_key=ADMIN\n");
  Result<RootCredentials> root = LoadRootCredentials(dir_, std::nullopt, std::nullopt);
  EXPECT_EQ(root.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ReadFile(), "access_key=ADMIN\n");  // an operator's file is never overwritten

  WriteFile("access_key=ADMIN\nsecret_key=short\n");
  EXPECT_EQ(LoadRootCredentials(dir_, std::nullopt, std::nullopt).status().code(),
            ErrorCode::kInvalidArgument);
  WriteFile("user=ADMIN\n");
  EXPECT_EQ(LoadRootCredentials(dir_, std::nullopt, std::nullopt).status().code(),
            ErrorCode::kInvalidArgument);
}

TEST_F(RootCredentialsTest, ParsesCommentsAndSurroundingWhitespace) {
  Result<auth::Credentials> parsed =
      ParseCredentialsFile("# root\n  access_key=ADMIN  \r\nsecret_key=abcdefgh12345678\n\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->access_key, "ADMIN");
  EXPECT_EQ(parsed->secret_key, "abcdefgh12345678");
}

TEST_F(RootCredentialsTest, FailsWhenTheDirectoryIsMissing) {
  Result<RootCredentials> root = LoadRootCredentials(dir_ + "/missing", std::nullopt, std::nullopt);
  EXPECT_EQ(root.status().code(), ErrorCode::kIoError);
}

}  // namespace
}  // namespace serac::server
