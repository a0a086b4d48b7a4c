# tests/common/kq_units.bash: running the C unit tests of common/kqueue-linux
# (kqueue-linux.bats, and kqueue-linux-valgrind.bats under valgrind).

# run_unit NAME [WRAPPER...]: run build/.../common/kqueue-linux/tests/NAME.
run_unit() {
    local bin="$BUILD/common/kqueue-linux/tests/$1"
    shift
    require_bin "$bin" common/kqueue-linux
    run --separate-stderr timeout 300 "$@" "$bin"
    if [ "$status" -eq 77 ]; then
        skip "${bin#"$TOP"/}: $stderr"
    fi
    if [ "$status" -ne 0 ]; then
        fail "$(printf '%s exited with status %d, expected 0\n--- stdout\n%s\n--- stderr\n%s' \
            "${bin#"$TOP"/}" "$status" "$output" "$stderr")"
    fi
}

require_valgrind() {
    case "$BUILD" in
    */san-*) skip "valgrind does not run sanitized binaries (BUILD=${BUILD#"$TOP"/})" ;;
    esac
    command -v valgrind >/dev/null || skip "valgrind is not installed (apt-get install valgrind)"
}

# --track-fds: the layer's own fds (timerfd, signalfd, eventfd) must all be
# closed at exit; only what the test runner handed down may be left.
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
