#!/usr/bin/env bats
# Unit tests of common/ (buf.c, net.c). The checks themselves are C programs in
# common/tests/ that print the expected and the actual value of every failed
# check; this file runs them, plainly and under valgrind. A program that exits
# 77 cannot run on this machine: its stderr is the reason the test is skipped.
#
#   make -C common && bats tests/common/common.bats
#   make -C common SAN=address,undefined &&
#       BUILD=$PWD/build/san-address-undefined bats tests/common/common.bats

load ../helpers/common
UNITS=common
load units

MEMCHECK=(valgrind -q --error-exitcode=1 --leak-check=full)

@test "buf keeps every byte in order through growth, compaction and partial flushes" {
    run_unit test-buf
}

@test "net helpers keep the server contract: real port for 0, whole writes, EOF, stop pipe, -h and bad options" {
    run_unit test-net
}

@test "buf leaks no memory and reads no uninitialised byte (valgrind)" {
    require_valgrind
    run_unit test-buf "${MEMCHECK[@]}"
}

@test "net leaks no memory and reads no uninitialised byte, forked children included (valgrind)" {
    require_valgrind
    run_unit test-net "${MEMCHECK[@]}"
}
