#!/usr/bin/env bash
# Builds a libFuzzer target with clang (ASan + UBSan) and runs it for a bounded time.
#   run_fuzzer.sh NAME SECONDS OUT_DIR SOURCE... -- INCLUDE_DIR...
# FUZZ_LIBS: more libraries to link (e.g. "-ldate-tz").
# Fails when clang cannot build it or when the fuzzer finds a crash, leak or trap.
set -euo pipefail
name=$1 seconds=$2 out=$3; shift 3
srcs=(); incs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do srcs+=("$1"); shift; done
[ $# -gt 0 ] && shift
for d in "$@"; do incs+=("-I$d"); done
mkdir -p "$out/corpus-$name"
clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  "${incs[@]}" "${srcs[@]}" -o "$out/$name" -lcrypto ${FUZZ_LIBS:-}
cd "$out"
"./$name" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 "corpus-$name" 2>&1 | tail -20
