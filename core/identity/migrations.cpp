#include "identity/migrations.hpp"

namespace rendezvous::core {
namespace {

constexpr const char* kTables = R"sql(CREATE TABLE IF NOT EXISTS users (
  id BIGINT NOT NULL AUTO_INCREMENT,
  email VARCHAR(254) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  name VARCHAR(100) NOT NULL,
  time_zone VARCHAR(64) NOT NULL DEFAULT 'UTC',
  week_start VARCHAR(9) NOT NULL DEFAULT 'Monday',
  password_hash VARCHAR(255) NULL,
  is_admin TINYINT(1) NOT NULL DEFAULT 0,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_users_email (email)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS api_keys (
  id BIGINT NOT NULL AUTO_INCREMENT,
  user_id BIGINT NOT NULL,
  name VARCHAR(100) NOT NULL,
  key_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  hint CHAR(4) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at DATETIME(3) NOT NULL,
  last_used_at DATETIME(3) NULL,
  revoked_at DATETIME(3) NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_api_keys_key_hash (key_hash),
  KEY ix_api_keys_user (user_id),
  CONSTRAINT fk_api_keys_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS sessions (
  id_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  user_id BIGINT NOT NULL,
  csrf_token VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at DATETIME(3) NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id_hash),
  KEY ix_sessions_user (user_id),
  KEY ix_sessions_expires (expires_at),
  CONSTRAINT fk_sessions_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci)sql";

// Verified e-mails and phone numbers, the pending codes (hashes only; one row per user and target,
// replaced by each new request) and the requests of the last hour (the rate limit's log).
constexpr const char* kVerifiedResources = R"sql(CREATE TABLE IF NOT EXISTS verified_emails (
  id BIGINT NOT NULL AUTO_INCREMENT,
  user_id BIGINT NOT NULL,
  email VARCHAR(254) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  created_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_verified_emails_user_email (user_id, email),
  CONSTRAINT fk_verified_emails_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS verified_phones (
  id BIGINT NOT NULL AUTO_INCREMENT,
  user_id BIGINT NOT NULL,
  phone VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_verified_phones_user_phone (user_id, phone),
  CONSTRAINT fk_verified_phones_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS verification_codes (
  id BIGINT NOT NULL AUTO_INCREMENT,
  user_id BIGINT NOT NULL,
  kind VARCHAR(8) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  target VARCHAR(254) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  code_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  attempts INT NOT NULL DEFAULT 0,
  created_at DATETIME(3) NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  consumed_at DATETIME(3) NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_verification_codes_target (user_id, kind, target),
  CONSTRAINT fk_verification_codes_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS verification_requests (
  id BIGINT NOT NULL AUTO_INCREMENT,
  user_id BIGINT NOT NULL,
  kind VARCHAR(8) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  target VARCHAR(254) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  requested_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  KEY ix_verification_requests_target (user_id, kind, target, requested_at),
  CONSTRAINT fk_verification_requests_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci)sql";

// Usernames (DESIGN §10) and the 12/24-hour clock. Existing users get the username a new user
// would get (DeriveUsernameBase, validation.hpp; then base1, base2, ... when taken), in id order.
// Every statement can run again after a failure: the procedure fills only missing usernames.
constexpr const char* kUsernames = R"sql(ALTER TABLE users
  ADD COLUMN IF NOT EXISTS username VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL AFTER email,
  ADD COLUMN IF NOT EXISTS time_format TINYINT NOT NULL DEFAULT 12 AFTER week_start,
  ADD UNIQUE KEY IF NOT EXISTS uq_users_username (username);
DROP PROCEDURE IF EXISTS identity_assign_usernames;
CREATE PROCEDURE identity_assign_usernames()
BEGIN
  DECLARE v_id BIGINT DEFAULT NULL;
  DECLARE v_base VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin;
  DECLARE v_candidate VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin;
  DECLARE v_n BIGINT;
  SELECT MIN(id) INTO v_id FROM users WHERE username IS NULL;
  WHILE v_id IS NOT NULL DO
    SELECT LEFT(LOWER(REGEXP_REPLACE(SUBSTRING_INDEX(email, '@', 1), '(?-i)[^A-Za-z0-9._-]', '')), 64)
      INTO v_base FROM users WHERE id = v_id;
    IF v_base NOT REGEXP '[a-z0-9]' THEN SET v_base = 'user'; END IF;
    SET v_candidate = v_base;
    SET v_n = 0;
    WHILE EXISTS (SELECT 1 FROM users WHERE username = v_candidate) DO
      SET v_n = v_n + 1;
      SET v_candidate = CONCAT(LEFT(v_base, 64 - CHAR_LENGTH(v_n)), v_n);
    END WHILE;
    UPDATE users SET username = v_candidate WHERE id = v_id;
    SET v_id = NULL;
    SELECT MIN(id) INTO v_id FROM users WHERE username IS NULL;
  END WHILE;
END;
CALL identity_assign_usernames();
DROP PROCEDURE IF EXISTS identity_assign_usernames;
ALTER TABLE users MODIFY username VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL)sql";

}  // namespace

std::vector<Migration> IdentityMigrations() {
  return {Migration{1, "users, api_keys, sessions", kTables},
          Migration{2, "verified_emails, verified_phones, verification_codes, verification_requests",
                    kVerifiedResources},
          Migration{3, "users.username, users.time_format", kUsernames}};
}

}  // namespace rendezvous::core
