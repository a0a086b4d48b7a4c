# exercise-lib.sh: shared by ex.sh, hint.sh and progress.sh (sourced).

top="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Every exercise, in course order, as NN-slug/name.
exercise_list() {
    local d
    for d in "$top"/solutions/[0-9][0-9]-*/*/; do
        [ -f "$d/Makefile" ] || continue
        d="${d%/}"
        echo "${d#"$top"/solutions/}"
    done
}

# exercise_check EX: exit 2 with the list when EX is not an exercise.
exercise_check() {
    local ex="$1"
    if [ -z "$ex" ] || [ ! -f "$top/solutions/$ex/Makefile" ]; then
        [ -n "$ex" ] && echo "no exercise named '$ex'." >&2
        echo "usage: make $2 EX=NN-chapter/name   (one of:)" >&2
        exercise_list | sed 's/^/  /' >&2
        exit 2
    fi
}

# exercise_test EX IMPL LOG: build IMPL's copy and run its tests; output to LOG.
# Returns 0 when they pass, 3 when it does not compile, 1 when tests fail.
exercise_test() {
    local ex="$1" impl="$2" log="$3"
    local ch="${ex%%/*}" name="${ex#*/}"
    if ! make --no-print-directory -C "$top/$impl/$ex" QUIET_WHERE=1 >"$log" 2>&1; then
        return 3
    fi
    [ -f "$top/tests/$ch/$name.bats" ] || { echo "no tests/$ch/$name.bats" >>"$log"; return 1; }
    IMPL="$impl" bats --tap "$top/tests/$ch/$name.bats" >>"$log" 2>&1 || return 1
    # an echo server's exercise also runs the shared echo suite (generated
    # from tests/suite/servers.txt), once its own tests pass
    [ ! -f "$top/tests/$ch/suite-$name.bats" ] ||
        IMPL="$impl" bats --tap "$top/tests/$ch/suite-$name.bats" >>"$log" 2>&1
}
