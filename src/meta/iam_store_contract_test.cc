// One contract for every IamStore back end, reached through MetaStore::iam(): each test runs on
// SQLite and on SQLite behind the fault-injecting wrapper (where "reopen" is a simulated crash).
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "meta/contract_test_backends_internal.h"
#include "meta/fault_injection_meta_store.h"
#include "meta/iam_store.h"
#include "meta/meta_store.h"
#include "meta/meta_store_test_util.h"

namespace serac::meta {
namespace {

using Names = std::vector<std::string>;

const Names kBuiltinPolicies{"readwrite", "readonly", "writeonly", "consoleAdmin"};
// Secrets are opaque bytes to the store: NUL and non-UTF-8 bytes must survive.
constexpr char kSealedBytes[] = "sealed\0\xff\x01secret";
const std::string kSealed(kSealedBytes, sizeof(kSealedBytes) - 1);

class IamStoreContractTest : public testing::ContractTestBase {
 protected:
  void SetUp() override { Open(); }

  IamStore& iam() { return store_->iam(); }

  static IamUserRecord User(const std::string& name, Names policies = {}) {
    return IamUserRecord{name, true, 1000, std::move(policies)};
  }

  static AccessKeyRecord Key(const std::string& access_key, const std::string& user) {
    return AccessKeyRecord{access_key, user, kSealed, true, 2000, "key of " + user};
  }

  static PolicyRecord Policy(const std::string& name, const std::string& document = "{\"Statement\":[]}") {
    return PolicyRecord{name, document, 3000, 3000};
  }

  uint64_t Gen() {
    auto generation = iam().Generation();
    EXPECT_TRUE(generation.ok()) << generation.status().ToString();
    return generation.ok() ? *generation : 0;
  }

  Names PoliciesOf(const std::string& user) {
    auto got = iam().GetUser(user);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    return got.ok() ? got->policies : Names{};
  }
};

// ---- Users ----

TEST_P(IamStoreContractTest, UserCreateAndGet) {
  SERAC_ASSERT_OK(iam().CreateUser(IamUserRecord{"ana", false, 1234, {}}));
  auto user = iam().GetUser("ana");
  ASSERT_TRUE(user.ok()) << user.status().ToString();
  EXPECT_EQ(user->name, "ana");
  EXPECT_FALSE(user->enabled);
  EXPECT_EQ(user->created_ms, 1234);
  EXPECT_TRUE(user->policies.empty());
  EXPECT_EQ(iam().CreateUser(User("ana")).code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(iam().GetUser("ana")->created_ms, 1234);  // the failed create changed nothing
  EXPECT_EQ(iam().CreateUser(User("")).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(iam().GetUser("bob").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(iam().GetUser("ANA").status().code(), ErrorCode::kNotFound);  // names are exact
}

TEST_P(IamStoreContractTest, CreateUserAttachesTheGivenPolicies) {
  iam().SetBuiltinPolicyNames(kBuiltinPolicies);
  SERAC_ASSERT_OK(iam().PutPolicy(Policy("team")));
  SERAC_ASSERT_OK(iam().CreateUser(User("ana", {"team", "readonly", "team"})));
  EXPECT_EQ(PoliciesOf("ana"), (Names{"readonly", "team"}));
  // One unknown policy and nothing is created.
  EXPECT_EQ(iam().CreateUser(User("bob", {"team", "nope"})).code(), ErrorCode::kNotFound);
  EXPECT_EQ(iam().GetUser("bob").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(iam().DeletePolicy("team").code(), ErrorCode::kConflict);
}

TEST_P(IamStoreContractTest, SetUserEnabled) {
  SERAC_ASSERT_OK(iam().CreateUser(User("ana")));
  SERAC_ASSERT_OK(iam().SetUserEnabled("ana", false));
  EXPECT_FALSE(iam().GetUser("ana")->enabled);
  SERAC_ASSERT_OK(iam().SetUserEnabled("ana", false));  // already disabled: still OK
  SERAC_ASSERT_OK(iam().SetUserEnabled("ana", true));
  EXPECT_TRUE(iam().GetUser("ana")->enabled);
  EXPECT_EQ(iam().SetUserEnabled("bob", true).code(), ErrorCode::kNotFound);
}

TEST_P(IamStoreContractTest, DeleteUserRemovesItsKeysAndAttachments) {
  SERAC_ASSERT_OK(iam().PutPolicy(Policy("team")));
  SERAC_ASSERT_OK(iam().CreateUser(User("ana")));
  SERAC_ASSERT_OK(iam().CreateUser(User("bob")));
  SERAC_ASSERT_OK(iam().CreateAccessKey(Key("AKIAANA1", "ana")));
  SERAC_ASSERT_OK(iam().CreateAccessKey(Key("AKIAANA2", "ana")));
  SERAC_ASSERT_OK(iam().CreateAccessKey(Key("AKIABOB1", "bob")));
  SERAC_ASSERT_OK(iam().AttachPolicy("ana", "team"));

  EXPECT_EQ(iam().DeleteUser("nobody").code(), ErrorCode::kNotFound);
  SERAC_ASSERT_OK(iam().DeleteUser("ana"));
  EXPECT_EQ(iam().GetUser("ana").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(iam().GetAccessKey("AKIAANA1").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(iam().GetAccessKey("AKIAANA2").status().code(), ErrorCode::kNotFound);
  SERAC_EXPECT_OK(iam().GetAccessKey("AKIABOB1").status());  // other users keep theirs
  EXPECT_EQ(iam().DeleteUser("ana").code(), ErrorCode::kNotFound);

  // Nothing of the old user is left behind: the policy is free, the names are reusable.
  SERAC_EXPECT_OK(iam().DeletePolicy("team"));
  SERAC_ASSERT_OK(iam().CreateUser(User("ana")));
  EXPECT_TRUE(PoliciesOf("ana").empty());
  SERAC_EXPECT_OK(iam().CreateAccessKey(Key("AKIAANA1", "ana")));
}

// ---- Access keys ----

TEST_P(IamStoreContractTest, AccessKeyRoundTripsEveryField) {
  SERAC_ASSERT_OK(iam().CreateUser(User("ana")));
  AccessKeyRecord key{"AKIAEXAMPLE", "ana", kSealed, false, 4321, "ci runner ☕"};
  SERAC_ASSERT_OK(iam().CreateAccessKey(key));
  auto got = iam().GetAccessKey("AKIAEXAMPLE");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->access_key, "AKIAEXAMPLE");
  EXPECT_EQ(got->user, "ana");
  EXPECT_EQ(got->sealed_secret, kSealed);
  EXPECT_EQ(got->sealed_secret.size(), 15u);
  EXPECT_FALSE(got->enabled);
  EXPECT_EQ(got->created_ms, 4321);
  EXPECT_EQ(got->description, "ci runner ☕");
  EXPECT_EQ(iam().GetAccessKey("AKIAOTHER").status().code(), ErrorCode::kNotFound);
}

TEST_P(IamStoreContractTest, AccessKeyIdsAreUniqueAcrossUsers) {
  SERAC_ASSERT_OK(iam().CreateUser(User("ana")));
  SERAC_ASSERT_OK(iam().CreateUser(User("bob")));
  SERAC_ASSERT_OK(iam().CreateAccessKey(Key("AKIA1", "ana")));
  EXPECT_EQ(iam().CreateAccessKey(Key("AKIA1", "ana")).code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(iam().CreateAccessKey(Key("AKIA1", "bob")).code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(iam().GetAccessKey("AKIA1")->user, "ana");
  EXPECT_EQ(iam().CreateAccessKey(Key("AKIA2", "nobody")).code(), ErrorCode::kNotFound);
  EXPECT_EQ(iam().GetAccessKey("AKIA2").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(iam().CreateAccessKey(Key("", "ana")).code(), ErrorCode::kInvalidArgument);
  AccessKeyRecord unsealed = Key("AKIA3", "ana");
  unsealed.sealed_secret.clear();
  EXPECT_EQ(iam().CreateAccessKey(unsealed).code(), ErrorCode::kInvalidArgument);
}

TEST_P(IamStoreContractTest, SetAccessKeyEnabledAndDelete) {
  SERAC_ASSERT_OK(iam().CreateUser(User("ana")));
  SERAC_ASSERT_OK(iam().CreateAccessKey(Key("AKIA1", "ana")));
  SERAC_ASSERT_OK(iam().SetAccessKeyEnabled("AKIA1", false));
  EXPECT_FALSE(iam().GetAccessKey("AKIA1")->enabled);
  SERAC_ASSERT_OK(iam().SetAccessKeyEnabled("AKIA1", true));
  EXPECT_TRUE(iam().GetAccessKey("AKIA1")->enabled);
  EXPECT_EQ(iam().SetAccessKeyEnabled("AKIA9", true).code(), ErrorCode::kNotFound);

  SERAC_ASSERT_OK(iam().DeleteAccessKey("AKIA1"));
  EXPECT_EQ(iam().GetAccessKey("AKIA1").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(iam().DeleteAccessKey("AKIA1").code(), ErrorCode::kNotFound);
  SERAC_EXPECT_OK(iam().GetUser("ana").status());  // the user stays
}

// ---- Policies ----

TEST_P(IamStoreContractTest, PutPolicyCreatesThenReplacesKeepingCreationTime) {
  SERAC_ASSERT_OK(iam().PutPolicy(PolicyRecord{"team", "{\"v\":1}", 100, 100}));
  auto created = iam().GetPolicy("team");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->name, "team");
  EXPECT_EQ(created->document, "{\"v\":1}");
  EXPECT_EQ(created->created_ms, 100);
  EXPECT_EQ(created->updated_ms, 100);

  SERAC_ASSERT_OK(iam().PutPolicy(PolicyRecord{"team", "{\"v\":2}", 900, 900}));
  auto replaced = iam().GetPolicy("team");
  ASSERT_TRUE(replaced.ok());
  EXPECT_EQ(replaced->document, "{\"v\":2}");
  EXPECT_EQ(replaced->created_ms, 100);
  EXPECT_EQ(replaced->updated_ms, 900);

  EXPECT_EQ(iam().GetPolicy("other").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(iam().PutPolicy(Policy("")).code(), ErrorCode::kInvalidArgument);
}

TEST_P(IamStoreContractTest, ReplacingAnAttachedPolicyKeepsItAttached) {
  SERAC_ASSERT_OK(iam().PutPolicy(Policy("team", "{\"v\":1}")));
  SERAC_ASSERT_OK(iam().CreateUser(User("ana", {"team"})));
  SERAC_ASSERT_OK(iam().PutPolicy(Policy("team", "{\"v\":2}")));
  EXPECT_EQ(PoliciesOf("ana"), (Names{"team"}));
}

TEST_P(IamStoreContractTest, DeletePolicyRefusedWhileAttached) {
  EXPECT_EQ(iam().DeletePolicy("team").code(), ErrorCode::kNotFound);
  SERAC_ASSERT_OK(iam().PutPolicy(Policy("team")));
  SERAC_ASSERT_OK(iam().CreateUser(User("ana")));
  SERAC_ASSERT_OK(iam().AttachPolicy("ana", "team"));
  Status refused = iam().DeletePolicy("team");
  EXPECT_EQ(refused.code(), ErrorCode::kConflict);
  EXPECT_NE(refused.message().find("ana"), std::string::npos) << refused.message();
  SERAC_EXPECT_OK(iam().GetPolicy("team").status());
  SERAC_ASSERT_OK(iam().DetachPolicy("ana", "team"));
  SERAC_ASSERT_OK(iam().DeletePolicy("team"));
  EXPECT_EQ(iam().GetPolicy("team").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(iam().DeletePolicy("team").code(), ErrorCode::kNotFound);
}

TEST_P(IamStoreContractTest, BuiltinPoliciesAttachWithoutARowAndCannotBeChanged) {
  SERAC_ASSERT_OK(iam().CreateUser(User("ana")));
  const uint64_t before = Gen();
  // Until registered, a built-in name is just an unknown policy.
  EXPECT_EQ(iam().AttachPolicy("ana", "readwrite").code(), ErrorCode::kNotFound);
  iam().SetBuiltinPolicyNames(kBuiltinPolicies);
  EXPECT_EQ(Gen(), before);  // registering is not a write

  SERAC_ASSERT_OK(iam().AttachPolicy("ana", "readwrite"));
  SERAC_ASSERT_OK(iam().AttachPolicy("ana", "consoleAdmin"));
  EXPECT_EQ(PoliciesOf("ana"), (Names{"consoleAdmin", "readwrite"}));
  EXPECT_EQ(iam().GetPolicy("readwrite").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(iam().PutPolicy(Policy("readonly")).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(iam().DeletePolicy("readwrite").code(), ErrorCode::kInvalidArgument);
  auto snapshot = iam().LoadSnapshot();
  ASSERT_TRUE(snapshot.ok());
  EXPECT_TRUE(snapshot->policies.empty());  // built-ins are never stored
  SERAC_ASSERT_OK(iam().DetachPolicy("ana", "readwrite"));
  EXPECT_EQ(PoliciesOf("ana"), (Names{"consoleAdmin"}));

  // A new list replaces the old one; existing attachments stay.
  iam().SetBuiltinPolicyNames({"readonly"});
  EXPECT_EQ(iam().AttachPolicy("ana", "writeonly").code(), ErrorCode::kNotFound);
  SERAC_EXPECT_OK(iam().AttachPolicy("ana", "readonly"));
  EXPECT_EQ(PoliciesOf("ana"), (Names{"consoleAdmin", "readonly"}));
}

// ---- Attachments ----

TEST_P(IamStoreContractTest, AttachAndDetach) {
  SERAC_ASSERT_OK(iam().CreateUser(User("ana")));
  for (const char* name : {"zeta", "alpha", "mid"}) SERAC_ASSERT_OK(iam().PutPolicy(Policy(name)));
  EXPECT_EQ(iam().AttachPolicy("nobody", "alpha").code(), ErrorCode::kNotFound);
  EXPECT_EQ(iam().AttachPolicy("ana", "missing").code(), ErrorCode::kNotFound);
  SERAC_ASSERT_OK(iam().AttachPolicy("ana", "zeta"));
  SERAC_ASSERT_OK(iam().AttachPolicy("ana", "alpha"));
  SERAC_ASSERT_OK(iam().AttachPolicy("ana", "mid"));
  SERAC_ASSERT_OK(iam().AttachPolicy("ana", "alpha"));  // twice is fine, listed once
  EXPECT_EQ(PoliciesOf("ana"), (Names{"alpha", "mid", "zeta"}));

  SERAC_ASSERT_OK(iam().DetachPolicy("ana", "mid"));
  EXPECT_EQ(PoliciesOf("ana"), (Names{"alpha", "zeta"}));
  EXPECT_EQ(iam().DetachPolicy("ana", "mid").code(), ErrorCode::kNotFound);
  EXPECT_EQ(iam().DetachPolicy("ana", "missing").code(), ErrorCode::kNotFound);
  EXPECT_EQ(iam().DetachPolicy("nobody", "alpha").code(), ErrorCode::kNotFound);
  EXPECT_EQ(PoliciesOf("ana"), (Names{"alpha", "zeta"}));
}

// ---- Generation ----

TEST_P(IamStoreContractTest, GenerationMovesOnEverySuccessfulWriteOnly) {
  iam().SetBuiltinPolicyNames(kBuiltinPolicies);
  EXPECT_EQ(Gen(), 0u);
  uint64_t expected = 0;
  auto write_ok = [&](const Status& status) {
    EXPECT_TRUE(status.ok()) << status.ToString();
    ++expected;
    EXPECT_EQ(Gen(), expected);
  };
  auto write_fails = [&](const Status& status, ErrorCode code) {
    EXPECT_EQ(status.code(), code) << status.ToString();
    EXPECT_EQ(Gen(), expected);
  };
  write_ok(iam().CreateUser(User("ana")));
  write_fails(iam().CreateUser(User("ana")), ErrorCode::kAlreadyExists);
  write_fails(iam().CreateUser(User("bob", {"missing"})), ErrorCode::kNotFound);
  write_ok(iam().SetUserEnabled("ana", false));
  write_fails(iam().SetUserEnabled("bob", false), ErrorCode::kNotFound);
  write_ok(iam().CreateAccessKey(Key("AKIA1", "ana")));
  write_fails(iam().CreateAccessKey(Key("AKIA1", "ana")), ErrorCode::kAlreadyExists);
  write_fails(iam().CreateAccessKey(Key("AKIA2", "bob")), ErrorCode::kNotFound);
  write_ok(iam().SetAccessKeyEnabled("AKIA1", false));
  write_fails(iam().SetAccessKeyEnabled("AKIA2", false), ErrorCode::kNotFound);
  write_ok(iam().PutPolicy(Policy("team")));
  write_ok(iam().PutPolicy(Policy("team", "{}")));
  write_fails(iam().PutPolicy(Policy("readwrite")), ErrorCode::kInvalidArgument);
  write_ok(iam().AttachPolicy("ana", "team"));
  write_ok(iam().AttachPolicy("ana", "readonly"));
  write_fails(iam().AttachPolicy("ana", "missing"), ErrorCode::kNotFound);
  write_fails(iam().DeletePolicy("team"), ErrorCode::kConflict);
  write_ok(iam().DetachPolicy("ana", "team"));
  write_fails(iam().DetachPolicy("ana", "team"), ErrorCode::kNotFound);
  write_ok(iam().DeletePolicy("team"));
  write_fails(iam().DeletePolicy("team"), ErrorCode::kNotFound);
  write_ok(iam().DeleteAccessKey("AKIA1"));
  write_fails(iam().DeleteAccessKey("AKIA1"), ErrorCode::kNotFound);
  write_ok(iam().DeleteUser("ana"));
  write_fails(iam().DeleteUser("ana"), ErrorCode::kNotFound);

  // Reads never move it.
  (void)iam().GetUser("ana");
  (void)iam().GetAccessKey("AKIA1");
  (void)iam().GetPolicy("team");
  (void)iam().LoadSnapshot();
  EXPECT_EQ(Gen(), expected);
  // Nor do writes to the rest of the MetaStore.
  SERAC_ASSERT_OK(store_->CreateBucket({"bucket", 1}));
  EXPECT_EQ(Gen(), expected);
}

TEST_P(IamStoreContractTest, ConcurrentWritesEachMoveTheGenerationOnce) {
  constexpr int kThreads = 8;
  constexpr int kUsersPerThread = 10;
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < kUsersPerThread; ++i) {
        const std::string name = "user-" + std::to_string(t) + "-" + std::to_string(i);
        if (!iam().CreateUser(User(name)).ok()) ++failures;
        // Fails (duplicate) in the same batches as the successes, without moving the counter.
        if (iam().CreateUser(User(name)).ok()) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(Gen(), static_cast<uint64_t>(kThreads * kUsersPerThread));
  auto snapshot = iam().LoadSnapshot();
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ(snapshot->users.size(), static_cast<size_t>(kThreads * kUsersPerThread));
}

TEST_P(IamStoreContractTest, AnotherStoreOnTheSameDatabaseSeesTheChanges) {
  // Two servers sharing one MetaStore: each polls the generation to learn of the other's writes.
  auto other = GetParam().open(dir_.path());
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  IamStore& other_iam = (*other)->iam();
  SERAC_ASSERT_OK(iam().CreateUser(User("ana")));
  auto seen = other_iam.Generation();
  ASSERT_TRUE(seen.ok());
  EXPECT_EQ(*seen, Gen());
  SERAC_EXPECT_OK(other_iam.GetUser("ana").status());
  SERAC_ASSERT_OK(other_iam.CreateAccessKey(Key("AKIA1", "ana")));
  EXPECT_EQ(Gen(), *seen + 1);
  SERAC_EXPECT_OK(iam().GetAccessKey("AKIA1").status());
}

// ---- Snapshot ----

TEST_P(IamStoreContractTest, SnapshotHoldsEverythingSorted) {
  iam().SetBuiltinPolicyNames(kBuiltinPolicies);
  auto empty = iam().LoadSnapshot();
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->users.empty());
  EXPECT_TRUE(empty->keys.empty());
  EXPECT_TRUE(empty->policies.empty());
  EXPECT_EQ(empty->generation, 0u);

  SERAC_ASSERT_OK(iam().PutPolicy(PolicyRecord{"zz-policy", "{\"z\":1}", 10, 20}));
  SERAC_ASSERT_OK(iam().PutPolicy(PolicyRecord{"aa-policy", "{\"a\":1}", 30, 40}));
  SERAC_ASSERT_OK(iam().CreateUser(IamUserRecord{"carol", true, 5, {}}));
  SERAC_ASSERT_OK(iam().CreateUser(IamUserRecord{"ana", false, 6, {"zz-policy", "readonly"}}));
  SERAC_ASSERT_OK(iam().CreateUser(IamUserRecord{"bob", true, 7, {}}));
  SERAC_ASSERT_OK(iam().AttachPolicy("bob", "aa-policy"));
  SERAC_ASSERT_OK(iam().CreateAccessKey(AccessKeyRecord{"KEY-B", "bob", kSealed, true, 8, "b"}));
  SERAC_ASSERT_OK(iam().CreateAccessKey(AccessKeyRecord{"KEY-A", "ana", "x", false, 9, ""}));

  auto snapshot = iam().LoadSnapshot();
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  EXPECT_EQ(snapshot->generation, Gen());
  EXPECT_EQ(snapshot->generation, 8u);

  ASSERT_EQ(snapshot->users.size(), 3u);
  EXPECT_EQ(snapshot->users[0].name, "ana");
  EXPECT_FALSE(snapshot->users[0].enabled);
  EXPECT_EQ(snapshot->users[0].created_ms, 6);
  EXPECT_EQ(snapshot->users[0].policies, (Names{"readonly", "zz-policy"}));
  EXPECT_EQ(snapshot->users[1].name, "bob");
  EXPECT_EQ(snapshot->users[1].policies, (Names{"aa-policy"}));
  EXPECT_EQ(snapshot->users[2].name, "carol");
  EXPECT_TRUE(snapshot->users[2].enabled);
  EXPECT_TRUE(snapshot->users[2].policies.empty());

  ASSERT_EQ(snapshot->keys.size(), 2u);
  EXPECT_EQ(snapshot->keys[0].access_key, "KEY-A");
  EXPECT_EQ(snapshot->keys[0].user, "ana");
  EXPECT_EQ(snapshot->keys[0].sealed_secret, "x");
  EXPECT_FALSE(snapshot->keys[0].enabled);
  EXPECT_EQ(snapshot->keys[0].created_ms, 9);
  EXPECT_EQ(snapshot->keys[1].access_key, "KEY-B");
  EXPECT_EQ(snapshot->keys[1].user, "bob");
  EXPECT_EQ(snapshot->keys[1].sealed_secret, kSealed);
  EXPECT_EQ(snapshot->keys[1].description, "b");

  ASSERT_EQ(snapshot->policies.size(), 2u);
  EXPECT_EQ(snapshot->policies[0].name, "aa-policy");
  EXPECT_EQ(snapshot->policies[0].document, "{\"a\":1}");
  EXPECT_EQ(snapshot->policies[0].created_ms, 30);
  EXPECT_EQ(snapshot->policies[0].updated_ms, 40);
  EXPECT_EQ(snapshot->policies[1].name, "zz-policy");
}

// ---- Durability ----

TEST_P(IamStoreContractTest, ReopenKeepsEverythingAndTheGeneration) {
  SERAC_ASSERT_OK(iam().PutPolicy(Policy("team")));
  SERAC_ASSERT_OK(iam().CreateUser(User("ana", {"team"})));
  SERAC_ASSERT_OK(iam().CreateAccessKey(Key("AKIA1", "ana")));
  SERAC_ASSERT_OK(iam().SetAccessKeyEnabled("AKIA1", false));
  const uint64_t generation = Gen();
  auto before = iam().LoadSnapshot();
  ASSERT_TRUE(before.ok());

  Reopen();
  EXPECT_EQ(Gen(), generation);
  auto after = iam().LoadSnapshot();
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->generation, generation);
  ASSERT_EQ(after->users.size(), 1u);
  EXPECT_EQ(after->users[0].name, "ana");
  EXPECT_EQ(after->users[0].policies, (Names{"team"}));
  ASSERT_EQ(after->keys.size(), 1u);
  EXPECT_EQ(after->keys[0].sealed_secret, kSealed);
  EXPECT_FALSE(after->keys[0].enabled);
  ASSERT_EQ(after->policies.size(), 1u);
  EXPECT_EQ(after->policies[0].document, before->policies[0].document);
  // Writes go on counting from where they were.
  SERAC_ASSERT_OK(iam().DeleteAccessKey("AKIA1"));
  EXPECT_EQ(Gen(), generation + 1);
}

// Cases that need the fault-injecting wrapper; they run on that back end only.
class IamStoreFaultTest : public IamStoreContractTest {
 protected:
  FaultInjectionMetaStore* fault_injector() { return &dynamic_cast<FaultInjectionMetaStore&>(*store_); }
};

TEST_P(IamStoreFaultTest, FailedIamWriteLeavesNoTrace) {
  FaultInjectionMetaStore* faulty = fault_injector();
  iam().SetBuiltinPolicyNames(kBuiltinPolicies);
  SERAC_ASSERT_OK(iam().CreateUser(User("ana")));
  const uint64_t generation = Gen();

  // Every kind of IAM write is counted and can fail before it reaches the store.
  const uint64_t counted = faulty->mutation_count();
  faulty->FailNthMutation(1, FaultTiming::kBeforeDelegating);
  EXPECT_EQ(iam().DeleteUser("ana").code(), ErrorCode::kIoError);
  EXPECT_EQ(faulty->mutation_count(), counted + 1);
  SERAC_EXPECT_OK(iam().GetUser("ana").status());
  faulty->FailNthMutation(2, FaultTiming::kBeforeDelegating);
  SERAC_ASSERT_OK(iam().PutPolicy(Policy("team")));
  EXPECT_EQ(iam().AttachPolicy("ana", "team").code(), ErrorCode::kIoError);
  EXPECT_TRUE(PoliciesOf("ana").empty());
  EXPECT_EQ(Gen(), generation + 1);
  SERAC_ASSERT_OK(faulty->SimulateCrash());
  EXPECT_EQ(Gen(), generation + 1);
  EXPECT_TRUE(PoliciesOf("ana").empty());

  // The acknowledgement is lost but the write happened, and the generation moved with it.
  faulty->FailNthMutation(1, FaultTiming::kAfterDelegating);
  EXPECT_EQ(iam().CreateAccessKey(Key("AKIA1", "ana")).code(), ErrorCode::kIoError);
  SERAC_ASSERT_OK(faulty->SimulateCrash());
  SERAC_EXPECT_OK(iam().GetAccessKey("AKIA1").status());
  EXPECT_EQ(Gen(), generation + 2);
  EXPECT_EQ(iam().CreateAccessKey(Key("AKIA1", "ana")).code(), ErrorCode::kAlreadyExists);

  // The built-in names are registered again on the reopened store.
  SERAC_EXPECT_OK(iam().AttachPolicy("ana", "readwrite"));
}

SERAC_INSTANTIATE_CONTRACT_SUITE(IamStoreContractTest);
SERAC_INSTANTIATE_FAULT_SUITE(IamStoreFaultTest);

}  // namespace
}  // namespace serac::meta
