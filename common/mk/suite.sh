#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# suite.sh [--check]: the shared echo suite's links, from common/servers.txt.
#
# Every server of the table gets tests/CHAPTER/suite-NAME.bats, a symbolic
# link to tests/suite/echo.cases (the cases; the link's name says which
# server), and, when the faults shim can see its I/O (KIND blocking,
# readiness or edge), suite-NAME.faults.bats, the same cases under the shim
# (make test-long). Links no server names any more are removed.
#
# A mistake in the table (an unknown kind, case or program form, a chapter
# without a tests/ folder) stops it with the line number, and changes
# nothing. --check changes nothing either: it lists what is missing or left
# over, and exits 1 if anything is (tests/meta/suite.bats).
set -euo pipefail

top="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$top"
. common/tools/servers.bash
check=0
[ "${1:-}" != --check ] || check=1

cases="$(sed -n 's/^ *suite_case \([a-z_]*\)$/\1/p' tests/suite/echo.cases | tr '\n' ' ')"
if ! problems="$(server_check "$cases")"; then
    printf 'suite: common/servers.txt: %s\n' "${problems//$'\n'/$'\n'suite: common/servers.txt: }" >&2
    exit 1
fi

want=()
for name in $(server_names); do
    server_load "$name"
    want+=("tests/$SRV_CHAPTER/suite-$name.bats")
    case "$SRV_KIND" in blocking | readiness | edge) want+=("tests/$SRV_CHAPTER/suite-$name.faults.bats") ;; esac
done

bad=0
for f in tests/[0-9][0-9]-*/suite-*.bats; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    [[ " ${want[*]} " == *" $f "* ]] && [ -L "$f" ] && [ "$(readlink "$f")" = ../suite/echo.cases ] && continue
    bad=1
    if [ "$check" = 1 ]; then echo "left over: $f"; else rm -f "$f" && echo "removed $f"; fi
done
for f in "${want[@]}"; do
    [ -L "$f" ] && [ "$(readlink "$f")" = ../suite/echo.cases ] && continue
    bad=1
    if [ "$check" = 1 ]; then echo "missing: $f -> ../suite/echo.cases"; else ln -s ../suite/echo.cases "$f" && echo "linked $f"; fi
done
[ "$check" = 0 ] || [ "$bad" = 0 ] || { echo "run 'make suite' and commit the links" >&2; exit 1; }
