#include <gtest/gtest.h>

#include "storage/migrator.hpp"

namespace rendezvous::core {
namespace {

TEST(SplitStatements, SplitsAtLinesEndingWithSemicolon) {
  const auto s = SplitStatements(
      "CREATE TABLE a (\n  x INT\n);\n\n-- a comment\nCREATE TABLE b (y INT) ;  \r\nINSERT INTO b VALUES (1)");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], "CREATE TABLE a (\n  x INT\n)");
  EXPECT_EQ(s[1], "-- a comment\nCREATE TABLE b (y INT)");
  EXPECT_EQ(s[2], "INSERT INTO b VALUES (1)");
}

TEST(SplitStatements, DropsEmptyAndCommentOnlyPieces) {
  EXPECT_TRUE(SplitStatements("").empty());
  EXPECT_TRUE(SplitStatements("  \n;\n-- nothing\n# nothing;\n").empty());
  // A ';' inside a line does not split.
  const auto s = SplitStatements("SELECT ';' AS x, 1;\n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], "SELECT ';' AS x, 1");
}

TEST(MigrationChecksum, IgnoresSurroundingWhitespaceButNotContent) {
  EXPECT_EQ(MigrationChecksum("CREATE TABLE a (x INT);\n"),
            MigrationChecksum("\n  CREATE TABLE a (x INT)  ;\r\n\n"));
  EXPECT_NE(MigrationChecksum("CREATE TABLE a (x INT);\n"),
            MigrationChecksum("CREATE TABLE a (x BIGINT);\n"));
  EXPECT_EQ(MigrationChecksum("x").size(), 64u);
}

}  // namespace
}  // namespace rendezvous::core
