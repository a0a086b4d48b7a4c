#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lint.sh [--fix]: clang-format (check, or --fix to rewrite) and cppcheck over
# the course's C files, and shellcheck over its shell (the scripts, the
# tests' helper files and CI's, with the settings in .shellcheckrc).
# exercises/ is generated from solutions/, so it is checked through them.
set -uo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$top" || exit 1

mapfile -t files < <(find common chapters solutions -name '*.c' -o -name '*.h' | sort)
status=0

if [ "${1:-}" = --fix ]; then
    clang-format -i "${files[@]}"
    echo "formatted ${#files[@]} files"
    exit 0
fi

echo "== clang-format (${#files[@]} files)"
if ! clang-format --dry-run --Werror "${files[@]}"; then
    echo "some files are not formatted: run 'make format'"
    status=1
fi

echo "== cppcheck"
if ! cppcheck --quiet --error-exitcode=1 --std=c11 --enable=warning,portability,performance \
    --inline-suppr --suppress=missingIncludeSystem -D_GNU_SOURCE -I common "${files[@]}"; then
    status=1
fi
echo "== shellcheck"
mapfile -t shell < <({ find common chapters tests -name '*.sh' -o -name '*.bash'; echo .ci/run; } | sort)
if ! command -v shellcheck >/dev/null; then
    echo "shellcheck is not installed: run 'make deps'"
    status=1
elif ! shellcheck --severity=warning "${shell[@]}"; then
    status=1
fi
[ "$status" -eq 0 ] && echo "lint: clean"
exit "$status"
