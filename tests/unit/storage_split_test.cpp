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

TEST(SplitStatements, RoutineBodiesEndAtEnd) {
  const auto s = SplitStatements(
      "DROP PROCEDURE IF EXISTS p;\n"
      "CREATE PROCEDURE p(IN x INT)\nBEGIN\n  UPDATE t SET y = x;\n  IF ROW_COUNT() <> 1 THEN\n"
      "    SIGNAL SQLSTATE '45000';\n  END IF;\nEND;\n"
      "-- a function\ncreate definer=CURRENT_USER function f() returns int deterministic\nbegin\n  return 1;\nend;\n"
      "SELECT 1;\n");
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0], "DROP PROCEDURE IF EXISTS p");
  EXPECT_EQ(s[1].rfind("CREATE PROCEDURE p(IN x INT)\nBEGIN\n", 0), 0u) << s[1];
  EXPECT_NE(s[1].find("END IF;\nEND"), std::string::npos) << s[1];
  EXPECT_EQ(s[2].substr(s[2].size() - 3), "end") << s[2];
  EXPECT_EQ(s[3], "SELECT 1");
  // A column named `procedure` is not a routine.
  EXPECT_EQ(SplitStatements("CREATE TABLE t (\n  procedure INT\n);\nSELECT 2;\n").size(), 2u);
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
