// The OAuth plugin's migrations: applied versions keep their checksums (a database migrated before
// must not find a changed version), and a database migrated before the DPoP migration and a fresh
// one end with the same refresh-rotation procedure.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "oauth_test_db.hpp"
#include "storage/migrator.hpp"

namespace rendezvous::oauth {
namespace {

TEST(OAuthMigrations, AppliedVersionsKeepTheirChecksums) {
  const std::vector<std::pair<int, std::string>> expected = {
      {1, "0e88574030c18513578307c2ceb53b68b776007fc97d7b254730277476e9fefc"},
      {2, "207e47000681db59f8558a26f519cfd0285d42560141c1ff62347338ae7b981d"},
      {3, "da412cbcbea8a9ba46e275f6f28ef43139f8560965cb474d5197dea6940fad9c"},
      {4, "25db8d81e28fa646ac99f9a18c0f4989254ded9e35fbf546a1200202ecfc2283"},
      {5, "f303a852248be18deb95c1ac73a711c0e2460c7b4bf3127a1d6ed5cdba4d8b53"},
      {6, "63a28947e0c6c1f54288caacc1e27192edbda0bc7f6b98aa50155421b7033992"},
      {7, "18d477c67de2b55d88744cf04caa3768dc703eb80a507ad5f951ad63c8c426a8"},
      {8, "fa73fca8b1b7a59bbbc30cdb27957d3b473915990028b0fc65d672abdb5a3066"},
      {9, "966cb154d89d36b322fce27d6e922f7f237b59248bc2d0977d0ab8e1025b55a7"},
  };
  const std::vector<Migration> migrations = OAuthMigrations();
  ASSERT_EQ(migrations.size(), expected.size());
  for (size_t i = 0; i < migrations.size(); ++i) {
    EXPECT_EQ(migrations[i].version, expected[i].first);
    EXPECT_EQ(core::MigrationChecksum(migrations[i].sql), expected[i].second)
        << "version " << migrations[i].version;
  }
}

// The procedure's parameters (name and type, in order) and body, as the database keeps them.
std::string RotateProcedure(const testing::ScratchDatabase& db) {
  return db.QueryValue(
      "SELECT CONCAT((SELECT GROUP_CONCAT(CONCAT(PARAMETER_MODE, ' ', PARAMETER_NAME, ' ', DTD_IDENTIFIER, ' "
      "', "
      "IFNULL(CHARACTER_SET_NAME, '')) ORDER BY ORDINAL_POSITION SEPARATOR ', ') FROM "
      "information_schema.PARAMETERS "
      "WHERE SPECIFIC_SCHEMA = DATABASE() AND SPECIFIC_NAME = 'oauth_rotate_refresh_token'), '\\n', "
      "ROUTINE_DEFINITION, '\\n', SQL_DATA_ACCESS) FROM information_schema.ROUTINES "
      "WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME = 'oauth_rotate_refresh_token'");
}

class OAuthMigrationsDb : public OAuthDbTest {};

TEST_F(OAuthMigrationsDb, MigratedBeforeAndFreshEndWithTheSameRotateProcedure) {
  // Migrated up to version 4 (the procedure without DPoP), later brought up to date.
  std::vector<Migration> before = OAuthMigrations();
  ASSERT_GE(before.size(), 5u);
  before.resize(4);
  OpenDatabase(before);
  const std::string old_procedure = RotateProcedure(scratch_);
  EXPECT_EQ(old_procedure.find("p_access_jkt"), std::string::npos) << old_procedure;
  {
    core::Migrator migrator(*db_, logger_);
    migrator.Add("oauth", OAuthMigrations());
    migrator.Apply();
  }
  const std::string upgraded = RotateProcedure(scratch_);

  testing::ScratchDatabase fresh_db;
  core::MysqlDatabase fresh(testing::OptionsFor(fresh_db, 2), registry_, logger_);
  core::Migrator migrator(fresh, logger_);
  migrator.Add("oauth", OAuthMigrations());
  migrator.Apply();

  EXPECT_NE(upgraded.find("IN p_access_jkt varchar(43) ascii"), std::string::npos) << upgraded;
  EXPECT_NE(upgraded.find("dpop_jkt"), std::string::npos) << upgraded;
  EXPECT_EQ(RotateProcedure(fresh_db), upgraded);
}

}  // namespace
}  // namespace rendezvous::oauth
