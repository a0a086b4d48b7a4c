#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gen-suite.sh [OUT]: write the shared echo suite's test files, one per server.
#
# Reads tests/suite/servers.txt (the servers, their kind, their declared
# skips) and tests/suite/cases.bats.in (the cases, as @test blocks), and
# writes OUT/CHAPTER/suite-NAME.bats for every server, and
# OUT/CHAPTER/suite-NAME.faults.bats (the same cases with the faults shim in
# the server, a long file: make test-long) for those it can see; OUT is tests/ (the
# default, what `make suite` does) or a scratch folder (the drift test,
# tests/meta/suite.bats, compares the two). Writing into tests/, it also
# removes suite-*.bats files no server names any more.
#
# A mistake in servers.txt (an unknown kind, case or program form, a chapter
# without a tests/ folder) stops the run with the line number, and writes
# nothing.
set -euo pipefail
shopt -u patsub_replacement 2>/dev/null || true # "&" in a reason is just "&"

top="$(cd "$(dirname "$0")/../.." && pwd)"
list="$top/tests/suite/servers.txt"
tmpl="$top/tests/suite/cases.bats.in"
out="${1:-$top/tests}"

template="$(cat "$tmpl")"$'\n'
# the case names are the words after "suite_case" in the template
cases=" $(sed -n 's/^ *suite_case \([a-z_]*\)$/\1/p' "$tmpl" | tr '\n' ' ')"

faults_title() {
    case "$1" in
    blocking) echo "every byte survives short reads, short writes and EINTR (faults shim)" ;;
    readiness) echo "every byte survives short reads and writes, EINTR and EAGAIN (faults shim)" ;;
    edge) echo "every byte survives short reads and writes and EINTR (faults shim; no fake EAGAIN, which an edge-triggered server believes)" ;;
    uring) echo "the faults shim sees none of the echoed bytes: io_uring does the I/O in the kernel" ;;
    win32) echo "the faults shim cannot reach a Windows program under Wine (skipped, with the reason)" ;;
    esac
}

die() { echo "gen-suite: servers.txt:$1: $2" >&2; exit 1; }

stage="$(mktemp -d "${TMPDIR:-/tmp}/gen-suite.XXXXXX")"
trap 'rm -rf "$stage"' EXIT

names=()
# faults_settings KIND: what the shim injects when a whole suite runs under
# it (the faults case's own settings; none for io_uring, which it cannot see).
faults_settings() {
    case "$1" in
    blocking | readiness) echo "FAULTS_SHORT_READ=30 FAULTS_SHORT_WRITE=50 FAULTS_EINTR=10 FAULTS_EAGAIN=10" ;;
    edge) echo "FAULTS_SHORT_READ=30 FAULTS_SHORT_WRITE=50 FAULTS_EINTR=10" ;;
    esac
}

# write_file FILE TITLE_NAME COMMAND LONG: one file from the template.
write_file() {
    local t="$template"
    t="${t//$'@LONG@'/$4}"
    t="${t//@NAME@/$2}"
    t="${t//@PROGRAM@/$program}"
    t="${t//@KIND@/$kind}"
    t="${t//@FAULTS_TITLE@/$(faults_title "$kind")}"
    t="${t//@COMMAND@/$3}"
    t="${t//$'@LOADS@\n'/$loads}"
    t="${t//$'@FILE_HOOKS@\n'/$hooks}"
    t="${t//$'@SKIPS@\n'/$skips}"
    t="${t//$'@SETUP@\n'/$setup}"
    mkdir -p "$stage/$chapter"
    printf '%s' "$t" >"$stage/$chapter/$1"
    names+=("$chapter/$1")
}

# emit: write the server read so far (if any) into the staging folder:
# suite-NAME.bats, and suite-NAME.faults.bats, the same cases with the faults
# shim preloaded into the server for every one of them (make test-long).
emit() {
    [ -n "${name:-}" ] || return 0
    write_file "suite-$name.bats" "$name" "$command" ""
    local settings
    settings="$(faults_settings "$kind")"
    if [ -n "$settings" ]; then
        write_file "suite-$name.faults.bats" "$name under faults" \
            "env \$(faults_env $settings)$envs $bin${args:+ $args}" \
            "# test-long: every case again with the faults shim in the server ($settings)"$'\n'
    fi
    name=""
}

n=0 name=""
while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    case "$line" in
    '' | '#'*) continue ;;
    [[:space:]]*)
        [ -n "$name" ] || die "$n" "an indented line before any server"
        line="${line#"${line%%[![:space:]]*}"}"
        case "$line" in
        'skip '*:*)
            skip_case="${line#skip }"
            skip_case="${skip_case%%:*}"
            [[ "$cases" == *" $skip_case "* ]] || die "$n" "no case '$skip_case' (cases:$cases)"
            reason="${line#*: }"
            if [ -z "$reason" ] || [ "$reason" = "$line" ]; then die "$n" "skip $skip_case: needs a reason"; fi
            skips+="$skip_case: $reason"$'\n'
            ;;
        'setup: '*) setup+="    ${line#setup: }"$'\n' ;;
        'load: '*) loads+="load ${line#load: }"$'\n' ;;
        *) die "$n" "expected 'skip CASE: REASON', 'setup: COMMAND' or 'load: FILE', got: $line" ;;
        esac
        ;;
    *)
        emit
        read -r name chapter kind spec args <<<"$line"
        [ -n "${spec:-}" ] || die "$n" "expected NAME CHAPTER KIND PROGRAM [ARGS...], got: $line"
        [ -d "$top/tests/$chapter" ] || die "$n" "no folder tests/$chapter"
        [ -n "$(faults_title "$kind")" ] || die "$n" "unknown kind '$kind' (blocking, readiness, edge, uring, win32)"
        for other in "${names[@]}"; do
            [ "${other##*/}" != "suite-$name.bats" ] || die "$n" "a second server named $name"
        done
        envs=""
        while [[ "$spec" == *=* && "$spec" != *:* ]]; do
            envs+=" $spec"
            read -r spec args <<<"$args"
            [ -n "${spec:-}" ] || die "$n" "no PROGRAM after $envs"
        done
        case "$spec" in
        chapter:*) bin="\"\$(chapter_bin ${spec#chapter:})\"" ;;
        exercise:*/*)
            ex="${spec#exercise:}"
            bin="\"\$(impl_bin ${ex%%/*} ${ex#*/})\""
            ;;
        *) die "$n" "PROGRAM must be chapter:PROG or exercise:EX/PROG, got: $spec" ;;
        esac
        skips="" setup="" loads="" hooks=""
        if [ "$kind" = win32 ]; then
            # a Windows program: run by Wine, set up as chapter 09 does
            # (tests/helpers/wine.bash; it also makes the suite stop servers
            # with SIGINT, which Wine delivers as Ctrl-C)
            bin="\"\$WINE\" $bin"
            loads="load ../helpers/wine"$'\n'
            hooks=$'\n'"setup_file() { wine_setup_file; }"$'\n'"teardown_file() { wine_teardown_file; }"$'\n'
            setup="    wine_require"$'\n'
        fi
        program="${spec#*:}${args:+ $args}"
        command="${envs:+env$envs }$bin${args:+ $args}"
        ;;
    esac
done <"$list"
emit

if [ "$out" = "$top/tests" ]; then
    # files of servers that left the list go too
    for f in "$top"/tests/[0-9][0-9]-*/suite-*.bats; do
        [ -f "$f" ] || continue
        rel="${f#"$top/tests/"}"
        [ -f "$stage/$rel" ] || { rm -f "$f"; echo "removed tests/$rel"; }
    done
fi
for rel in "${names[@]}"; do
    mkdir -p "$out/${rel%/*}"
    if ! cmp -s "$stage/$rel" "$out/$rel"; then
        cp "$stage/$rel" "$out/$rel"
        [ "$out" != "$top/tests" ] || echo "wrote tests/$rel"
    fi
done
