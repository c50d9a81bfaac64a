#!/bin/sh
# The reports AddressSanitizer, UBSan and LeakSanitizer write under ASAN_OPTIONS/UBSAN_OPTIONS
# log_path (the asan-ubsan test preset): `clear DIR` before a run, `check DIR` after it prints
# every report and fails when there is one. Reports of servers the tests start land here too,
# whether or not the test that started them noticed.
set -eu
mode=$1
dir=$2
case $mode in
  clear)
    rm -rf "$dir"
    mkdir -p "$dir"
    ;;
  check)
    found=0
    for f in "$dir"/*; do
      [ -e "$f" ] || continue
      found=$((found + 1))
      echo "=== $f"
      head -c 20000 "$f"
    done
    if [ "$found" -ne 0 ]; then
      echo "$found sanitizer report(s) under $dir" >&2
      exit 1
    fi
    echo "no sanitizer reports under $dir"
    ;;
  *)
    echo "usage: $0 clear|check DIR" >&2
    exit 2
    ;;
esac
