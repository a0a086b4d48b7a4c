#!/usr/bin/env bats
# Unit tests of common/ (buf.c, net.c). The checks themselves are C programs in
# common/tests/ that print the expected and the actual value of every failed
# check; this file runs them, plainly and under valgrind. A program that exits
# 77 cannot run on this machine: its stderr is the reason the test is skipped.
#
#   make -C common && bats tests/common/common.bats
#   make -C common SAN=address,undefined &&
#       BUILD=$PWD/build/san-address-undefined bats tests/common/common.bats

bats_require_minimum_version 1.5.0 # run --separate-stderr

load ../helpers/common

# run_unit NAME [WRAPPER...]: run build/.../common/tests/NAME, under WRAPPER
# (valgrind ...) when given; 0 passes, 77 skips, anything else fails.
run_unit() {
    local bin="$BUILD/common/tests/$1"
    shift
    require_bin "$bin" common
    run --separate-stderr timeout 300 "$@" "$bin"
    if [ "$status" -eq 77 ]; then
        skip "${bin#"$TOP"/}: $stderr"
    fi
    if [ "$status" -ne 0 ]; then
        fail "$(printf '%s exited with status %d, expected 0\n--- stdout\n%s\n--- stderr\n%s' \
            "${bin#"$TOP"/}" "$status" "$output" "$stderr")"
    fi
}

# valgrind cannot run a sanitized binary (both replace malloc), and is not
# one of the packages every machine has.
require_valgrind() {
    case "$BUILD" in
    */san-*) skip "valgrind does not run sanitized binaries (BUILD=${BUILD#"$TOP"/})" ;;
    esac
    command -v valgrind >/dev/null || skip "valgrind is not installed (apt-get install valgrind)"
}

VALGRIND=(valgrind -q --error-exitcode=1 --leak-check=full)

@test "buf keeps every byte in order through growth, compaction and partial flushes" {
    run_unit test-buf
}

@test "net helpers keep the server contract: real port for 0, whole writes, EOF, stop pipe, -h and bad options" {
    run_unit test-net
}

@test "buf leaks no memory and reads no uninitialised byte (valgrind)" {
    require_valgrind
    run_unit test-buf "${VALGRIND[@]}"
}

@test "net leaks no memory and reads no uninitialised byte, forked children included (valgrind)" {
    require_valgrind
    run_unit test-net "${VALGRIND[@]}"
}
