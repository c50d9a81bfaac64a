#!/usr/bin/env bash
# The Debian package as an operator gets it: cpack builds the .deb from the build folder (nothing is
# compiled), dpkg -x unpacks it into a scratch root, systemd-analyze verifies its unit, and the
# installed binary, with the installed config pointed at the test database and free ports, runs
# `migrate` and `serve` until /healthz and /readyz answer 200. Plugins that are not where the
# installed loader looks, a config naming paths under var/, a unit systemd refuses: all fail here.
#   tests/package/package_test.sh BUILD_DIR DB_SOCKET
set -euo pipefail
build=$(cd "${1:?BUILD_DIR}" && pwd)
socket=$(realpath -m "${2:?DB_SOCKET}")
work=$(mktemp -d /tmp/rdv-package-XXXXXX)
db="rdv_pkg_$$_$RANDOM"
server=
fail() { echo "package test: $*" >&2; exit 1; }
cleanup() {
  [ -n "$server" ] && kill -KILL "$server" 2>/dev/null || true
  mariadb --no-defaults -S "$socket" -uroot -e "DROP DATABASE IF EXISTS \`$db\`" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# 1. The package, from what the build folder holds.
cpack --config "$build/CPackConfig.cmake" -B "$work/out" > "$work/cpack.log" 2>&1 || { cat "$work/cpack.log" >&2; fail "cpack failed"; }
deb=$(ls "$work"/out/*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || { cat "$work/cpack.log" >&2; fail "cpack made no .deb"; }
echo "built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"

# 2. Its control data: dependencies found by dpkg-shlibdeps, maintainer scripts, conffiles.
control=$(dpkg-deb -f "$deb")
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libc6 libpistache libmysqlcppconn liblua5.4 libyaml-cpp libssl libsimdjson adduser; do
  grep -q "$lib" <<< "$depends" || fail "Depends lacks $lib: $depends"
done
dpkg-deb -e "$deb" "$work/control"
[ -x "$work/control/postinst" ] || fail "no postinst"
grep -q "systemd-sysusers\|adduser" "$work/control/postinst" || fail "postinst creates no user"
grep -qx "/etc/rendezvous/rendezvous.yaml" "$work/control/conffiles" || fail "the config is not a conffile"
sh -n "$work/control/postinst" && sh -n "$work/control/prerm" && sh -n "$work/control/postrm"

# 3. The files, where the FHS and the unit expect them.
root=$work/root
dpkg -x "$deb" "$root"
bin=$root/usr/bin/rendezvous
config=$root/etc/rendezvous/rendezvous.yaml
unit=$root/usr/lib/systemd/system/rendezvous.service
for f in "$bin" "$root/usr/bin/rendezvous-migrate" "$config" "$unit" \
  "$root/usr/lib/sysusers.d/rendezvous.conf" \
  "$root/usr/share/rendezvous/scripts/webhooks/filter.lua" \
  "$root/usr/share/rendezvous/dashboards/rendezvous-overview.json" \
  "$root/usr/share/doc/rendezvous/operations.md"; do
  [ -e "$f" ] || fail "missing from the package: ${f#"$root"}"
done
sh -n "$root/usr/bin/rendezvous-migrate"
# The host library and the four plugins in one folder (the loader's), no test plugin among them.
plugins=$(cd "$root" && find . -name 'rendezvous_*.so' -printf '%h %f\n' | sort)
[ "$(wc -l <<< "$plugins")" -eq 4 ] || fail "expected the 4 plugins, found: $plugins"
[ "$(cut -d' ' -f1 <<< "$plugins" | sort -u | wc -l)" -eq 1 ] || fail "plugins in several folders: $plugins"
[ -e "$root/$(head -n 1 <<< "$plugins" | cut -d' ' -f1)/librendezvous_host.so" ] || fail "the host library is not with the plugins"
if grep -nE '(^|[^/a-z_])var/' "$config" | grep -v '^\s*[0-9]*:\s*#'; then fail "the installed config names paths under var/"; fi
grep -q '^ExecStartPre=/usr/bin/rendezvous migrate --config /etc/rendezvous/rendezvous.yaml$' "$unit" || fail "unit: ExecStartPre"
grep -q '^EnvironmentFile=/etc/rendezvous/rendezvous.env$' "$unit" || fail "unit: EnvironmentFile"

# 4. systemd's own check of the unit (directives, dependencies, executables), on this host with the
# unit's paths moved into the scratch root.
mkdir -p "$work/unit"
sed -e "s|/usr/bin/rendezvous|$root/usr/bin/rendezvous|g" -e "s|/etc/rendezvous/|$root/etc/rendezvous/|g" \
  "$unit" > "$work/unit/rendezvous.service"
systemd-analyze verify "$work/unit/rendezvous.service" > "$work/verify.log" 2>&1 \
  || { cat "$work/verify.log" >&2; fail "systemd-analyze verify refused the unit"; }
if [ -s "$work/verify.log" ]; then cat "$work/verify.log" >&2; fail "systemd-analyze verify warned"; fi
for directive in User=rendezvous ProtectSystem=strict NoNewPrivileges=yes StateDirectory=rendezvous \
  UMask=0077 ProtectProc=invisible ProcSubset=pid SystemCallFilter=@system-service; do
  grep -qx "$directive" "$unit" || fail "unit: no $directive"
done
# systemd's exposure score of the sandbox (0 fully confined .. 10 unconfined): 2.0 at most.
systemd-analyze security --offline=yes --threshold=20 --no-pager "$work/unit/rendezvous.service" > "$work/security.log" 2>&1 \
  || { cat "$work/security.log" >&2; fail "the unit's exposure is above 2.0"; }
echo "unit: $(grep -o 'Overall exposure level.*' "$work/security.log")"

# The installed binary's version, with no configuration.
version=$("$bin" --version) || fail "rendezvous --version failed"
grep -q "\"version\":\"$(dpkg-deb -f "$deb" Version)\"" <<< "$version" || fail "--version: $version, the package: $(dpkg-deb -f "$deb" Version)"
grep -q '"buildSignature":"gcc-' <<< "$version" || fail "--version has no build signature: $version"

# 5. The installed binary with the installed config, pointed at a scratch database and port 0.
mkdir -p "$work/etc/rendezvous" "$work/log"
cfg=$work/etc/rendezvous/rendezvous.yaml
sed -e "s|socket: \"/run/mysqld/mysqld.sock\"|socket: \"$socket\"|" \
    -e "s|^  user: rendezvous$|  user: root|" \
    -e "s|^  name: rendezvous |  name: $db |" \
    -e "s|listen: \"127.0.0.1:808[01]\"|listen: \"127.0.0.1:0\"|" \
    -e "s|/var/log/rendezvous/|$work/log/|" "$config" > "$cfg"
[ "$(grep -c -e "$socket" -e "  user: root" -e "name: $db " -e '127.0.0.1:0' -e "$work/log/" "$cfg")" -eq 7 ] \
  || { diff "$config" "$cfg" >&2 || true; fail "could not point the installed config at the test database"; }
mariadb --no-defaults -S "$socket" -uroot -e "CREATE DATABASE \`$db\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
export RENDEZVOUS_ENCRYPTION_KEY
RENDEZVOUS_ENCRYPTION_KEY=$(head -c 32 /dev/urandom | base64)
"$bin" migrate --config "$cfg" > "$work/migrate.out" 2> "$work/migrate.err" \
  || { cat "$work/migrate.err" >&2; fail "migrate failed"; }
if grep -q '"level":"\(warn\|error\)"' "$work/migrate.err"; then cat "$work/migrate.err" >&2; fail "migrate warned"; fi
plugin_dir=$root/$(head -n 1 <<< "$plugins" | cut -d' ' -f1 | sed 's|^\./||')
for p in oauth bookings calendar webhooks; do
  grep -q "\"file\":\"$plugin_dir/rendezvous_$p.so\"" "$work/migrate.err" \
    || { cat "$work/migrate.err" >&2; fail "the $p plugin was not loaded from $plugin_dir"; }
done
"$bin" serve --config "$cfg" > "$work/serve.out" 2> "$work/serve.log" &
server=$!
api=
for _ in $(seq 1 300); do
  api=$(grep '"msg":"listening"' "$work/serve.log" | grep '"listener":"api"' | grep -o '"port":[0-9]*' | head -n 1 | cut -d: -f2 || true)
  [ -n "$api" ] && grep -q '"msg":"ready"' "$work/serve.log" && break
  kill -0 "$server" 2>/dev/null || { cat "$work/serve.log" >&2; fail "serve exited"; }
  sleep 0.1
done
[ -n "$api" ] || { cat "$work/serve.log" >&2; fail "serve did not listen within 30 s"; }
for path in /healthz /readyz; do
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$api$path")
  [ "$code" = 200 ] || { cat "$work/serve.log" >&2; fail "$path answered $code"; }
done
kill -TERM "$server"
rc=0
wait "$server" || rc=$?
server=
[ "$rc" -eq 0 ] || { cat "$work/serve.log" >&2; fail "serve exited $rc on SIGTERM"; }
echo "package test: the installed server migrated and answered /healthz and /readyz 200 on port $api"
