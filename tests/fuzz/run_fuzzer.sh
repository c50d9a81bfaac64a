#!/usr/bin/env bash
# Builds a libFuzzer target with clang (ASan + UBSan) and runs it for a bounded time.
#   run_fuzzer.sh NAME SECONDS OUT_DIR SOURCE... -- INCLUDE_DIR...
# The committed seeds in corpus/NAME (next to this script) are read, never written; inputs the
# fuzzer finds go to OUT_DIR/corpus-NAME, which grows across runs.
# FUZZ_LIBS: more libraries to link (e.g. "-ldate-tz").
# Fails when clang cannot build it, when the seeds are missing, or when the fuzzer finds a crash,
# leak, timeout or trap.
set -euo pipefail
name=$1 seconds=$2 out=$3; shift 3
srcs=(); incs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do srcs+=("$1"); shift; done
[ $# -gt 0 ] && shift
for d in "$@"; do incs+=("-I$d"); done
seeds=$(cd "$(dirname "$0")" && pwd)/corpus/$name
if [ -z "$(ls -A "$seeds" 2>/dev/null)" ]; then
  echo "run_fuzzer.sh: no seed corpus in $seeds" >&2
  exit 1
fi
mkdir -p "$out/corpus-$name" "$out/obj-$name"
# One object per source, through ccache when there is one: a rerun compiles only what changed.
cxx=(clang++)
command -v ccache >/dev/null && cxx=(ccache clang++)
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
objs=()
for i in "${!srcs[@]}"; do
  obj="$out/obj-$name/$i-$(basename "${srcs[$i]}" .cpp).o"
  "${cxx[@]}" "${flags[@]}" "${incs[@]}" -c "${srcs[$i]}" -o "$obj"
  objs+=("$obj")
done
clang++ "${flags[@]}" "${objs[@]}" -o "$out/$name" -lcrypto ${FUZZ_LIBS:-}
cd "$out"
# The first folder receives new inputs; the seeds only feed the fuzzer.
"./$name" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 \
  "corpus-$name" "$seeds" 2>&1 | tail -20
