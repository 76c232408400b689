#include "auth/server_key.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/encoding.h"
#include "common/random.h"

namespace serac::auth {
namespace {

ServerKey KeyOf(char fill) {
  Result<ServerKey> key = ServerKey::FromBytes(std::string(ServerKey::kKeyBytes, fill));
  EXPECT_TRUE(key.ok()) << key.status().ToString();
  return std::move(key).value();
}

// A fresh directory under the test temp dir, removed by the fixture.
class ServerKeyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "server_key_test_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { RemoveTree(root_); }

  static void RemoveTree(const std::string& path) {
    if (DIR* dir = ::opendir(path.c_str())) {
      while (dirent* entry = ::readdir(dir)) {
        std::string name = entry->d_name;
        if (name == "." || name == "..") continue;
        std::string child = path + "/" + name;
        struct stat info {};
        if (::lstat(child.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
          RemoveTree(child);
        } else {
          ::unlink(child.c_str());
        }
      }
      ::closedir(dir);
    }
    ::rmdir(path.c_str());
  }

  static std::vector<std::string> List(const std::string& path) {
    std::vector<std::string> names;
    if (DIR* dir = ::opendir(path.c_str())) {
      while (dirent* entry = ::readdir(dir)) {
        std::string name = entry->d_name;
        if (name != "." && name != "..") names.push_back(name);
      }
      ::closedir(dir);
    }
    return names;
  }

  static void WriteFile(const std::string& path, const std::string& contents, mode_t mode) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, mode);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, contents.data(), contents.size()), static_cast<ssize_t>(contents.size()));
    ::close(fd);
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
  }

  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }

  static mode_t ModeOf(const std::string& path) {
    struct stat info {};
    EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
    return info.st_mode & 07777;
  }

  std::string root_;
};

TEST(ServerKeyTest, FromBytesRequiresExactly32Bytes) {
  EXPECT_FALSE(ServerKey::FromBytes(std::string(31, 'k')).ok());
  EXPECT_FALSE(ServerKey::FromBytes(std::string(33, 'k')).ok());
  EXPECT_FALSE(ServerKey::FromBytes("").ok());
  EXPECT_TRUE(ServerKey::FromBytes(std::string(32, 'k')).ok());
}

TEST(ServerKeyTest, SubKeysDifferPerPurposeAndPerKey) {
  ServerKey a = KeyOf('a');
  ServerKey b = KeyOf('b');
  std::set<std::string> seen;
  for (KeyPurpose purpose :
       {KeyPurpose::kSeal, KeyPurpose::kBearerToken, KeyPurpose::kSessionToken, KeyPurpose::kSessionSecret}) {
    EXPECT_EQ(a.MacKey(purpose).size(), 32u);
    EXPECT_NE(a.MacKey(purpose), std::string(32, 'a'));  // never the raw key
    seen.insert(a.MacKey(purpose));
    seen.insert(b.MacKey(purpose));
  }
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_EQ(a.Fingerprint().size(), 16u);
  EXPECT_NE(a.Fingerprint(), b.Fingerprint());
  EXPECT_EQ(a.Fingerprint(), KeyOf('a').Fingerprint());
}

TEST(ServerKeyTest, SealOpenRoundTrip) {
  ServerKey key = KeyOf('k');
  for (std::string plaintext : {std::string(), std::string("s3cr3t/Key+40chars"), RandomBytes(100000)}) {
    std::string sealed = key.Seal(plaintext, "AKIDUSER");
    EXPECT_EQ(sealed.size(), plaintext.size() + ServerKey::kSealOverheadBytes);
    EXPECT_EQ(static_cast<uint8_t>(sealed[0]), ServerKey::kSealVersion);
    if (!plaintext.empty()) {
      EXPECT_EQ(sealed.find(plaintext), std::string::npos);
    }
    Result<std::string> opened = key.Open(sealed, "AKIDUSER");
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    EXPECT_EQ(*opened, plaintext);
  }
}

TEST(ServerKeyTest, SealUsesAFreshNonceEachTime) {
  ServerKey key = KeyOf('k');
  EXPECT_NE(key.Seal("same", "ad"), key.Seal("same", "ad"));
}

TEST(ServerKeyTest, OpenFailsOnAnyTamperedByte) {
  ServerKey key = KeyOf('k');
  const std::string sealed = key.Seal("the secret key", "AKIDUSER");
  for (size_t i = 0; i < sealed.size(); ++i) {
    std::string tampered = sealed;
    tampered[i] = static_cast<char>(tampered[i] ^ 0x01);
    Result<std::string> opened = key.Open(tampered, "AKIDUSER");
    ASSERT_FALSE(opened.ok()) << "byte " << i;
    EXPECT_EQ(opened.status().code(), ErrorCode::kInternal);
  }
}

TEST(ServerKeyTest, OpenFailsOnWrongKeyAssociatedDataOrTruncation) {
  ServerKey key = KeyOf('k');
  const std::string sealed = key.Seal("the secret key", "AKIDUSER");
  Result<std::string> wrong_key = KeyOf('x').Open(sealed, "AKIDUSER");
  ASSERT_FALSE(wrong_key.ok());
  EXPECT_EQ(wrong_key.status().code(), ErrorCode::kInternal);
  EXPECT_NE(wrong_key.status().message().find("server key"), std::string::npos);
  EXPECT_EQ(wrong_key.status().message().find("the secret key"), std::string::npos);
  EXPECT_FALSE(key.Open(sealed, "AKIDOTHER").ok());
  EXPECT_FALSE(key.Open(sealed, "").ok());
  for (size_t size = 0; size < sealed.size(); ++size) {
    EXPECT_FALSE(key.Open(sealed.substr(0, size), "AKIDUSER").ok()) << size;
  }
  EXPECT_FALSE(key.Open(sealed + "x", "AKIDUSER").ok());
}

TEST(ServerKeyTest, CopiesAndMovesKeepTheKey) {
  ServerKey key = KeyOf('k');
  std::string sealed = key.Seal("v", "ad");
  ServerKey copy = key;
  ServerKey moved = std::move(copy);
  ServerKey assigned = KeyOf('z');
  assigned = moved;
  EXPECT_EQ(*assigned.Open(sealed, "ad"), "v");
  EXPECT_EQ(*moved.Open(sealed, "ad"), "v");
}

TEST(ServerKeyTest, FromEnvironmentValue) {
  std::string raw = RandomBytes(32);
  Result<ServerKey> key = ServerKey::FromEnvironmentValue("  " + Base64Encode(raw) + "\n");
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_EQ(key->Fingerprint(), ServerKey::FromBytes(raw)->Fingerprint());

  const std::string short_value = Base64Encode(std::string(16, 's'));
  Result<ServerKey> too_short = ServerKey::FromEnvironmentValue(short_value);
  ASSERT_FALSE(too_short.ok());
  EXPECT_EQ(too_short.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(too_short.status().message().find("SERAC_SERVER_KEY"), std::string::npos);
  EXPECT_EQ(too_short.status().message().find(short_value), std::string::npos);
  EXPECT_FALSE(ServerKey::FromEnvironmentValue("not base64!").ok());
  EXPECT_FALSE(ServerKey::FromEnvironmentValue("").ok());
}

TEST_F(ServerKeyFileTest, CreatesOnFirstUseAndReloadsTheSameKey) {
  const std::string dir = root_ + "/keys/nested";
  const std::string path = dir + "/server-key";
  Result<ServerKey> created = ServerKey::LoadOrCreate(path);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(ModeOf(path), 0600u);
  EXPECT_EQ(ModeOf(dir), 0700u);
  EXPECT_EQ(ModeOf(root_ + "/keys"), 0700u);
  EXPECT_EQ(List(dir), std::vector<std::string>{"server-key"});  // no temporary file left behind

  // The format: base64 of 32 bytes and a newline.
  std::string text = ReadFile(path);
  ASSERT_EQ(text.size(), 45u);
  EXPECT_EQ(text.back(), '\n');
  std::optional<std::string> raw = Base64Decode(text.substr(0, 44));
  ASSERT_TRUE(raw.has_value());
  EXPECT_EQ(ServerKey::FromBytes(*raw)->Fingerprint(), created->Fingerprint());

  std::string sealed = created->Seal("secret", "ad");
  Result<ServerKey> loaded = ServerKey::LoadOrCreate(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->Fingerprint(), created->Fingerprint());
  EXPECT_EQ(*loaded->Open(sealed, "ad"), "secret");
  EXPECT_EQ(ReadFile(path), text);
}

TEST_F(ServerKeyFileTest, ReadsAHandWrittenFile) {
  const std::string path = root_ + "/server-key";
  std::string raw = RandomBytes(32);
  WriteFile(path, Base64Encode(raw) + "\n", 0600);
  Result<ServerKey> key = ServerKey::LoadOrCreate(path);
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_EQ(key->Fingerprint(), ServerKey::FromBytes(raw)->Fingerprint());
  WriteFile(path, Base64Encode(raw), 0400);  // no newline, read-only: also fine
  EXPECT_TRUE(ServerKey::LoadOrCreate(path).ok());
}

TEST_F(ServerKeyFileTest, RefusesAFileOthersMayAccess) {
  const std::string path = root_ + "/server-key";
  WriteFile(path, Base64Encode(RandomBytes(32)) + "\n", 0644);
  Result<ServerKey> key = ServerKey::LoadOrCreate(path);
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(key.status().message().find("chmod 600"), std::string::npos);
  EXPECT_NE(key.status().message().find("0644"), std::string::npos);
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  EXPECT_FALSE(ServerKey::LoadOrCreate(path).ok());
  ASSERT_EQ(::chmod(path.c_str(), 0602), 0);
  EXPECT_FALSE(ServerKey::LoadOrCreate(path).ok());
}

TEST_F(ServerKeyFileTest, RefusesMalformedContentsWithoutEchoingThem) {
  const std::string path = root_ + "/server-key";
  const std::string short_key = Base64Encode(RandomBytes(31));
  WriteFile(path, short_key + "\n", 0600);
  Result<ServerKey> key = ServerKey::LoadOrCreate(path);
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(key.status().message().find(short_key), std::string::npos);

  WriteFile(path, "", 0600);
  EXPECT_FALSE(ServerKey::LoadOrCreate(path).ok());
  WriteFile(path, std::string(limits::kServerKeyFileBytesMax + 1, 'A'), 0600);
  EXPECT_FALSE(ServerKey::LoadOrCreate(path).ok());
}

TEST_F(ServerKeyFileTest, RefusesADirectoryAndReportsUnreadablePaths) {
  const std::string path = root_ + "/dir";
  ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);
  EXPECT_FALSE(ServerKey::LoadOrCreate(path).ok());
  WriteFile(root_ + "/file", "x", 0600);
  EXPECT_FALSE(ServerKey::LoadOrCreate(root_ + "/file/server-key").ok());  // parent is a file
  EXPECT_FALSE(ServerKey::LoadOrCreate("").ok());
}

}  // namespace
}  // namespace serac::auth
