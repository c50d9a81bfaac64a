#include "scratch_db.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>

#include <cppconn/connection.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_driver.h>

namespace rendezvous::testing {
namespace {

std::unique_ptr<sql::Connection> Connect(const std::string& socket, const std::string& schema) {
  sql::ConnectOptionsMap o;
  o["hostName"] = sql::SQLString("localhost");
  o["socket"] = sql::SQLString(socket);
  o["userName"] = sql::SQLString("root");
  o["password"] = sql::SQLString("");
  if (!schema.empty()) o["schema"] = sql::SQLString(schema);
  return std::unique_ptr<sql::Connection>(sql::mysql::get_mysql_driver_instance()->connect(o));
}

}  // namespace

std::string TestDbSocket() {
  const char* s = std::getenv("RDV_TEST_DB_SOCKET");
  return s && *s ? s : RDV_DEFAULT_TEST_DB_SOCKET;
}

ScratchDatabase::ScratchDatabase() : socket_(TestDbSocket()) {
  std::random_device rd;
  std::mt19937_64 rng(rd());
  char buf[32];
  std::snprintf(buf, sizeof buf, "t_%016llx", static_cast<unsigned long long>(rng()));
  name_ = buf;
  auto c = Connect(socket_, "");
  std::unique_ptr<sql::Statement> st(c->createStatement());
  st->execute("CREATE DATABASE `" + name_ + "` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci");
}

ScratchDatabase::~ScratchDatabase() {
  try {
    auto c = Connect(socket_, "");
    std::unique_ptr<sql::Statement> st(c->createStatement());
    st->execute("DROP DATABASE IF EXISTS `" + name_ + "`");
  } catch (...) {
  }
}

void ScratchDatabase::Exec(const std::string& sql) const {
  auto c = Connect(socket_, name_);
  std::unique_ptr<sql::Statement> st(c->createStatement());
  st->execute(sql);
}

std::string ScratchDatabase::QueryValue(const std::string& sql) const {
  auto c = Connect(socket_, name_);
  std::unique_ptr<sql::Statement> st(c->createStatement());
  std::unique_ptr<sql::ResultSet> rs(st->executeQuery(sql));
  if (!rs->next()) return "";
  return rs->getString(1);
}

}  // namespace rendezvous::testing
