# Thin wrapper: `make run` and `make test` do all the set-up (DESIGN §2).
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
CONFIG ?= etc/rendezvous.yaml
JOBS ?= $(shell nproc)
VAR := $(CURDIR)/var
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# nginx: the load-balancer test runs its own on a free loopback port (Debian's package may also
# start a system service on port 80; nothing here uses it).
PACKAGES := build-essential cmake ninja-build pkg-config ccache \
  libpistache-dev libyaml-cpp-dev liblua5.4-dev libmysqlcppconn-dev libssl-dev prometheus-cpp-dev \
  libcurl4-openssl-dev nlohmann-json3-dev libgtest-dev libgmock-dev libkainjow-mustache-dev \
  libhowardhinnant-date-dev tzdata libical-dev libsimdjson-dev \
  mariadb-server mariadb-client prometheus nginx galera-4 haproxy rsync wrk curl file systemd chromium clang libclang-rt-14-dev \
  clang-format clang-tidy lld
E2E_DIR := tests/e2e

.PHONY: all packages deps configure build server build-asan run stop test test-asan lint format bench clean db package

all: build

# The system packages from apt that building, running and testing need.
packages:
	@missing=$$(for p in $(PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q "install ok installed" || echo $$p; done); \
	command -v node >/dev/null 2>&1 || missing="$$missing nodejs"; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

# Those, then the browser tests' node packages (playwright-core, pinned by
# tests/e2e/package-lock.json) when missing or older than the lock file.
deps: packages
	@if [ ! -d $(E2E_DIR)/node_modules ] || [ $(E2E_DIR)/package-lock.json -nt $(E2E_DIR)/node_modules ]; then \
	  echo "npm ci in $(E2E_DIR)"; \
	  (cd $(E2E_DIR) && npm ci --no-audit --no-fund) && touch $(E2E_DIR)/node_modules; \
	fi

# CMAKE_ARGS: more settings for the first configuring of $(BUILD_DIR) (CI adds unity batches).
CMAKE_ARGS ?=
$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

configure: packages $(BUILD_DIR)/build.ninja

# Everything: the server, its plugins, the tests and the benchmarks.
build: deps configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Only what `make run` serves with: the server and its plugins (a fraction of the build).
server: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target rendezvous rdv_plugins

# The Debian package (packaging/) in $(BUILD_DIR)/package, from the server and plugins alone.
package: server
	cpack --config $(BUILD_DIR)/CPackConfig.cmake

# The embedded default database: a private MariaDB under var/db (socket only, no service).
db: packages
	@tools/mariadb.sh start $(VAR)/db >/dev/null
	@mariadb --no-defaults -S $(VAR)/db/mysqld.sock -uroot -e \
	  "CREATE DATABASE IF NOT EXISTS rendezvous CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
	@[ -f $(VAR)/encryption.key ] || (umask 077; openssl rand -base64 32 > $(VAR)/encryption.key)

# etc/rendezvous.yaml names var/encryption.key (security.encryption_key_file), so the server and
# every admin command run with it find the key without an environment variable.
run: server db
	$(BUILD_DIR)/bin/rendezvous migrate --config $(CONFIG)
	@echo "serving: api http://127.0.0.1:8080  app http://127.0.0.1:8081  (make stop ends it)"
	$(BUILD_DIR)/bin/rendezvous serve --config $(CONFIG) & \
	  echo $$! > $(VAR)/rendezvous.pid; wait $$!

stop:
	@[ -f $(VAR)/rendezvous.pid ] && kill $$(cat $(VAR)/rendezvous.pid) 2>/dev/null || true
	@rm -f $(VAR)/rendezvous.pid
	@tools/mariadb.sh stop $(VAR)/db

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) --timeout 600

# The unit and integration suites again, built with AddressSanitizer and UBSan (build-asan/, the
# asan-ubsan preset): any report, in a test or in a server a test started, fails the run.
test-asan: build-asan
	ctest --preset asan-ubsan -j $(JOBS) --timeout 900

build-asan: deps
	cmake --preset asan-ubsan
	cmake --build --preset asan-ubsan -j $(JOBS)

# clang-format (check mode) and clang-tidy on the C++ lines changed since tools/lint-base; clang-tidy
# reads the compile flags of each source from $(BUILD_DIR)/lint/, a tree the script configures.
lint: configure
	BUILD_DIR=$(BUILD_DIR) JOBS=$(JOBS) tools/lint.sh

# Rewrites those changed lines the way clang-format wants them.
format: deps
	tools/lint.sh --fix

bench: build db
	bench/run.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
