# Install time (cmake --install, CPack): the files whose content depends on the prefix. Set by the
# caller: RDV_SOURCE_DIR (packaging/), RDV_PROJECT_DIR, RDV_BINDIR, RDV_DATADIR, RDV_DOCDIR
# (relative to the prefix).
set(prefix "${CMAKE_INSTALL_PREFIX}")
# GNUInstallDirs: the configuration of a /usr install lives in /etc, otherwise under the prefix.
if(prefix STREQUAL "/usr" OR prefix STREQUAL "/")
  set(config_dir "/etc/rendezvous")
else()
  set(config_dir "${prefix}/etc/rendezvous")
endif()
string(REGEX REPLACE "/+$" "" prefix "${prefix}")
set(RDV_CONFIG_DIR "${config_dir}")
set(RDV_BIN_DIR "${prefix}/${RDV_BINDIR}")
set(RDV_DOC_DIR "${prefix}/${RDV_DOCDIR}")
set(data_dir "${prefix}/${RDV_DATADIR}/rendezvous")
set(root "$ENV{DESTDIR}")

# etc/rendezvous.yaml with what `make run` keeps under the project's var/ moved where a system
# service keeps it. Every replacement must apply: a change of the source file fails the install
# here rather than shipping a config that points into var/.
file(READ "${RDV_PROJECT_DIR}/etc/rendezvous.yaml" yaml)
function(rdv_replace from to)
  string(FIND "${yaml}" "${from}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "install: etc/rendezvous.yaml no longer contains «${from}»: update packaging/install_config.cmake")
  endif()
  string(REPLACE "${from}" "${to}" out "${yaml}")
  set(yaml "${out}" PARENT_SCOPE)
endfunction()
rdv_replace("# Rendezvous configuration: the embedded default that `make run` serves with."
  "# Rendezvous configuration as installed: rendezvous.service and rendezvous-migrate read it.\n# Secrets (the encryption key, the database password) go in ${config_dir}/rendezvous.env.")
rdv_replace("  # `make run` talks to the project's private MariaDB under var/ (socket only, root without a\n  # password). Production sets host/port/user/password_env instead (etc/examples/production.yaml).\n"
  "  # The local MariaDB/MySQL server through its socket, as the user rendezvous (authenticated by the\n  # socket: CREATE USER rendezvous@localhost IDENTIFIED VIA unix_socket), or host/port/password_env.\n")
rdv_replace("socket: \"var/db/mysqld.sock\"" "socket: \"/run/mysqld/mysqld.sock\"")
rdv_replace("  user: root               # default: rendezvous" "  user: rendezvous")
rdv_replace("  # `make run` generates var/encryption.key once, so every command run with this file finds it.\n  encryption_key_file: var/encryption.key"
  "  # The service reads the key from RENDEZVOUS_ENCRYPTION_KEY in ${config_dir}/rendezvous.env.\n  encryption_key_file: \"\"")
rdv_replace("log_file: \"var/mail.log\"" "log_file: \"/var/log/rendezvous/mail.log\"")
rdv_replace("log_file: \"var/sms.log\" " "log_file: \"/var/log/rendezvous/sms.log\"")
rdv_replace("e.g. scripts/webhooks/filter.lua" "e.g. ${data_dir}/scripts/webhooks/filter.lua")
string(REGEX MATCH "[^/a-z_]var/[^\n]*" left "${yaml}")
if(left)
  message(FATAL_ERROR "install: the installed config would still name a path under var/: ${left}")
endif()

file(MAKE_DIRECTORY "${root}${config_dir}")
if(EXISTS "${root}${config_dir}/rendezvous.yaml")
  file(WRITE "${root}${config_dir}/rendezvous.yaml.new" "${yaml}")
  message(STATUS "Kept: ${root}${config_dir}/rendezvous.yaml (this version's default: rendezvous.yaml.new)")
else()
  file(WRITE "${root}${config_dir}/rendezvous.yaml" "${yaml}")
  message(STATUS "Installing: ${root}${config_dir}/rendezvous.yaml")
endif()

configure_file("${RDV_SOURCE_DIR}/rendezvous.service.in" "${root}${prefix}/lib/systemd/system/rendezvous.service" @ONLY)
message(STATUS "Installing: ${root}${prefix}/lib/systemd/system/rendezvous.service")
configure_file("${RDV_SOURCE_DIR}/rendezvous-migrate.in" "${root}${RDV_BIN_DIR}/rendezvous-migrate" @ONLY
  FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
message(STATUS "Installing: ${root}${RDV_BIN_DIR}/rendezvous-migrate")
