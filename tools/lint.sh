#!/usr/bin/env bash
# `make lint`: clang-format (check mode) and clang-tidy on the C++ lines changed since the commit
# named in tools/lint-base (LINT_BASE=<commit> overrides it), the working tree's changes included.
# On a clean clone that is every line written since that commit. clang-tidy reads the flags of
# each source from $BUILD_DIR/lint/compile_commands.json (configured here) and reports on
# the changed lines of the changed .cpp files of core, plugins and bench (LINT_TESTS=1: and tests).
# `tools/lint.sh --fix` (`make format`) rewrites the changed lines the way clang-format wants.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
base=${LINT_BASE:-$(grep -v '^#' tools/lint-base | head -n 1)}
fix=0
[ "${1:-}" = --fix ] && fix=1

for tool in clang-format-14 clang-format-diff-14 clang-tidy-14 clang-tidy-diff-14.py; do
  command -v "$tool" >/dev/null || { echo "lint: $tool not found (make deps installs clang-format and clang-tidy)" >&2; exit 2; }
done
if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
  echo "lint: the base commit $base is not in this clone's history (a shallow clone?): fetch it or set LINT_BASE" >&2
  exit 2
fi

mapfile -t files < <(git diff --name-only --diff-filter=d "$base" -- \
  'core/*.cpp' 'core/*.hpp' 'plugins/*.cpp' 'plugins/*.hpp' 'tests/*.cpp' 'tests/*.hpp' 'bench/*.cpp' 'bench/*.hpp')
if [ ${#files[@]} -eq 0 ]; then
  echo "lint: no C++ file changed since $base"
  exit 0
fi
diff=$(git diff -U0 --no-color "$base" -- "${files[@]}")

if [ $fix = 1 ]; then
  clang-format-diff-14 -p1 -i -binary clang-format-14 <<<"$diff"
  echo "lint: formatted the changed lines of ${#files[@]} files"
  exit 0
fi

status=0
echo "lint: clang-format on the lines of ${#files[@]} files changed since $base"
format=$(clang-format-diff-14 -p1 -binary clang-format-14 <<<"$diff")
if [ -n "$format" ]; then
  echo "$format"
  echo "lint: clang-format would change the lines above (make format rewrites them)" >&2
  status=1
fi

# clang-tidy reads one compile command per source: those of a tree configured for it, without the
# unity batches CI builds $BUILD_DIR with. Configuring takes seconds and builds nothing.
db_dir=$BUILD_DIR/lint
if ! cmake -S . -B "$db_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    -DRENDEZVOUS_UNITY_BUILD=OFF > "$db_dir.log" 2>&1; then
  cat "$db_dir.log" >&2
  echo "lint: configuring $db_dir for clang-tidy failed" >&2
  exit 2
fi
# clang-tidy costs about 8.5 CPU-seconds a source, most of it parsing: by default it reads the
# product's sources (core, plugins, bench), and the tests only with LINT_TESTS=1.
tidy_dirs='core|plugins|bench'
[ "${LINT_TESTS:-0}" = 1 ] && tidy_dirs='core|plugins|bench|tests'
sources=$(printf '%s\n' "${files[@]}" | grep -cE "^($tidy_dirs)/.*\.cpp$" || true)
echo "lint: clang-tidy on the changed lines of $sources sources, $JOBS at a time"
tidy=$(clang-tidy-diff-14.py -p1 -path "$db_dir" -j "$JOBS" -quiet -iregex "($tidy_dirs)/.*\.cpp" \
  -clang-tidy-binary "$(command -v clang-tidy-14)" <<<"$diff" 2>&1 || true)
if grep -qE '(warning|error): ' <<<"$tidy"; then
  grep -vE '^[0-9]+ (warnings?|errors?) ' <<<"$tidy" || true
  echo "lint: clang-tidy found the problems above" >&2
  status=1
fi
[ $status = 0 ] && echo "lint: clean"
exit $status
