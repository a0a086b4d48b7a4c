# SPDX-License-Identifier: MIT
# tests/common/units.bash: running the C unit tests of common/ (common.bats)
# and of common/kqueue-linux (kqueue-linux.bats, kqueue-linux-valgrind.bats).
# A file sets UNITS, the folder under common/ whose tests/ it runs:
#
#   UNITS=common/kqueue-linux
#   load units

# shellcheck disable=SC2154 # output, status and stderr are set by bats' run

bats_require_minimum_version 1.5.0 # run_unit's run --separate-stderr

# run_unit NAME [WRAPPER...]: run build/.../$UNITS/tests/NAME, under WRAPPER
# (valgrind ...) when given; 0 passes, 77 skips, anything else fails.
run_unit() {
    local bin="$BUILD/$UNITS/tests/$1"
    shift
    require_bin "$bin" "$UNITS"
    run --separate-stderr timeout 300 "$@" "$bin"
    if [ "$status" -eq 77 ]; then
        skip "${bin#"$TOP"/}: $stderr"
    fi
    if [ "$status" -ne 0 ]; then
        fail "$(printf '%s exited with status %d, expected 0\n--- stdout\n%s\n--- stderr\n%s' \
            "${bin#"$TOP"/}" "$status" "$output" "$stderr")"
    fi
}

# require_kqueue_linux: skip where kqueue-linux is not built: it is the Linux
# stand-in for a kernel's own kqueue.
require_kqueue_linux() {
    [ "$(uname -s)" = Linux ] || skip "kqueue-linux is for Linux; $(uname -s) has kqueue itself"
}

# valgrind cannot run a sanitized binary (both replace malloc), and is not
# one of the packages every machine has.
require_valgrind() {
    case "$BUILD" in
    */san-*) skip "valgrind does not run sanitized binaries (BUILD=${BUILD#"$TOP"/})" ;;
    esac
    command -v valgrind >/dev/null || skip "valgrind is not installed (apt-get install valgrind)"
}

# run_valgrind NAME: run_unit under valgrind with --track-fds: the program's
# own fds (kqueue-linux's timerfd, signalfd, eventfd...) must all be closed
# at exit; only what the test runner handed down may be left.
run_valgrind() {
    require_valgrind
    local log="$BATS_TEST_TMPDIR/valgrind.log"
    run_unit "$1" valgrind -q --error-exitcode=1 --leak-check=full --track-fds=yes --log-file="$log"
    # valgrind lists each fd open at exit, then where it came from
    local open inherited
    open=$(grep -c 'Open file descriptor' "$log" || true)
    inherited=$(grep -c 'inherited from parent' "$log" || true)
    [ "$open" -eq "$inherited" ] ||
        fail "$1: file descriptors left open at exit, expected only inherited ones:
$(cat "$log")"
}
