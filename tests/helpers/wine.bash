# SPDX-License-Identifier: MIT
# tests/helpers/wine.bash: run the course's Windows programs (chapters 09, 11) under Wine.
#
#   load ../helpers/common
#   load ../helpers/echo_suite
#   load ../helpers/wine
#   setup_file() { wine_setup_file; }
#   teardown_file() { wine_teardown_file; }
#   setup() { wine_require; SERVER_CMD=("$WINE" "$(chapter_bin echo-iocp.exe)"); }
#
# One Wine prefix per build folder, $BUILD/wine/prefix: creating one takes
# about 9 s and 700 MB (Wine 8 copies its DLLs into it), starting a program
# in an existing one well under a second. Each test file starts that
# prefix's wineserver itself, detached from bats' file descriptors, and
# stops it (with every Windows process of the prefix) when the file is done.
# Every socket of a Windows program is a descriptor of the wineserver: it
# starts with the soft limit on open files raised to the hard one, and
# require_fds (common.bash) skips a test it has no room for.
#
# Stopping servers: under Wine, SIGINT reaches a Windows program as Ctrl-C
# (CTRL_C_EVENT, which its SetConsoleCtrlHandler() handler turns into a
# clean shutdown), but SIGTERM ends the process at once with status 143 and
# no handler run, as TerminateProcess() would. So every server here is
# stopped with SIGINT: suite_stop_clean, which the shared echo suite calls at
# the end of each case, sends SUITE_STOP_SIGNAL, set to INT below.

MINGW_CC="${MINGW_CC:-x86_64-w64-mingw32-gcc}"

# wine_find: the wine loader that runs 64-bit programs (Debian puts wine64
# in /usr/lib/wine, off PATH), or nothing.
wine_find() {
    local c
    for c in wine64 wine; do
        command -v "$c" && return 0
    done
    for c in /usr/lib/wine/wine64 /usr/lib64/wine/wine64 /usr/lib/wine/wine /opt/wine-stable/bin/wine64; do
        [ -x "$c" ] && { echo "$c"; return 0; }
    done
    return 1
}

# wineserver_find WINE: the wineserver that goes with that loader.
wineserver_find() {
    local dir c
    dir="$(dirname "$(readlink -f "$1")")"
    for c in "${WINESERVER:-}" "$dir/wineserver64" "$dir/wineserver" "$(command -v wineserver)"; do
        [ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return 0; }
    done
    return 1
}

wine_setup_file() {
    export WINE_SKIP=""
    if ! command -v "$MINGW_CC" >/dev/null; then
        export WINE_SKIP="$MINGW_CC not installed (make deps)"
        return 0
    fi
    if ! WINE="$(wine_find)" || ! WINESERVER="$(wineserver_find "$WINE")"; then
        export WINE_SKIP="wine64 not installed (make deps)"
        return 0
    fi
    export WINE WINESERVER
    export WINEPREFIX="$BUILD/wine/prefix" WINEDEBUG=-all
    # no Mono or Gecko installer on the first start, and no window anywhere
    export WINEDLLOVERRIDES="mscoree=;mshtml="
    unset DISPLAY WAYLAND_DISPLAY
    if [ -n "${WINE_PREFIX_TEMPLATE:-}" ]; then
        # Many copies of the course, each a prefix (the mutant runner): one
        # prefix is made once and each copy's is linked to it, but for the
        # registry files, which Wine rewrites in place.
        wine_prefix_make "$WINE_PREFIX_TEMPLATE" || return 1
        mkdir -p "$BUILD/wine"
        (
            flock 9
            if [ ! -f "$BUILD/wine/prefix.ok" ]; then
                rm -rf "$WINEPREFIX"
                cp -al "$WINE_PREFIX_TEMPLATE/prefix" "$WINEPREFIX" &&
                    for r in "$WINEPREFIX"/*.reg; do cp --remove-destination "$WINE_PREFIX_TEMPLATE/prefix/${r##*/}" "$r" || exit 1; done &&
                    touch "$BUILD/wine/prefix.ok"
            fi
        ) 9>"$BUILD/wine/prefix.lock"
    fi
    wine_prefix_make "$BUILD/wine" || return 1
    # A wineserver (and Wine's own services) started by a test would inherit
    # bats' descriptors and keep the test waiting: start them here, with none.
    # (It exits at once, with an error, when one is running already: fine.)
    # The wineserver holds a descriptor for every socket of every Windows
    # program: it gets a soft limit on open files as high as the hard limit
    # allows, as make test gives every test (bats run by hand may have 1024).
    (
        ulimit -Sn "$(course_fd_hard)" 2>/dev/null
        exec "$WINESERVER" -p
    ) </dev/null >/dev/null 2>&1 3>&- || true
    "$WINE" cmd.exe /c exit 0 </dev/null >/dev/null 2>&1 3>&- || true
    # What it got, for wine_require_fds (empty where it cannot be read).
    WINESERVER_PID="" WINESERVER_FDS=""
    if WINESERVER_PID=$(wineserver_pid); then
        WINESERVER_FDS=$(awk '/^Max open files/ { print $4 }' "/proc/$WINESERVER_PID/limits" 2>/dev/null)
    fi
    export WINESERVER_PID WINESERVER_FDS
}

# wine_prefix_make DIR: make the Wine prefix DIR/prefix unless DIR/prefix.ok
# says it is there (wineboot, then wait for its wineserver to end), under a
# lock: the files of a run share their build folder's prefix.
wine_prefix_make() {
    mkdir -p "$1"
    (
        flock 9
        if [ ! -f "$1/prefix.ok" ]; then
            echo "# creating the Wine prefix $1/prefix (once per build folder, about 10 s)" >&3
            rm -rf "$1/prefix"
            local t0=$SECONDS
            WINEPREFIX="$1/prefix" timeout 300 "$WINE" wineboot -i >"$1/prefix.log" 2>&1 </dev/null 3>&- 9>&- &&
                WINEPREFIX="$1/prefix" timeout 60 "$WINESERVER" -w 9>&- && touch "$1/prefix.ok"
            echo "# the Wine prefix took $((SECONDS - t0)) s to create" >&3
        fi
    ) 9>"$1/prefix.lock"
    [ -f "$1/prefix.ok" ] ||
        { echo "could not create the Wine prefix $1/prefix:" >&2; cat "$1/prefix.log" >&2; return 1; }
}

# wineserver_pid: the pid of the wineserver of $WINEPREFIX, if one runs. It
# works in a folder named for the prefix's device and inode numbers.
wineserver_pid() {
    local dev ino want p c
    read -r dev ino < <(stat -c '%d %i' "$WINEPREFIX" 2>/dev/null) || return 1
    want=$(printf 'server-%x-%x' "$dev" "$ino")
    for p in /proc/[0-9]*; do
        read -r c 2>/dev/null <"$p/comm" || continue
        [[ "$c" == wineserver* ]] || continue
        if [[ "$(readlink "$p/cwd" 2>/dev/null)" == */"$want" ]]; then
            echo "${p#/proc/}"
            return 0
        fi
    done
    return 1
}

# wine_require_fds N (require_fds calls it in a Wine file): under Wine the
# sockets of a Windows program are descriptors of the wineserver, another
# process, with the limit it started with. Skip at once where it cannot
# hold N of them beside its own: 245 with echo-iocp.exe listening, and
# 2,224 with 2,000 idle connections to it (measured with Wine 8, Debian 12).
WINESERVER_OWN_FDS=400
wine_require_fds() {
    local need=$(($1 + WINESERVER_OWN_FDS))
    [ -z "${WINE_SKIP:-}" ] || skip "$WINE_SKIP"
    [ -n "${WINESERVER_FDS:-}" ] || return 0 # not known: the test will tell
    if [ "$WINESERVER_FDS" != unlimited ] && [ "$WINESERVER_FDS" -lt "$need" ]; then
        if [ "$(course_fd_hard)" -lt "$need" ]; then
            skip "under Wine every socket is also a descriptor of the wineserver: this test needs about $need open files there, and the hard limit here is $(course_fd_hard) (ulimit -Hn): $(course_fd_advice "$need")"
        fi
        skip "under Wine every socket is also a descriptor of the wineserver: this test needs about $need open files there, and the wineserver of $WINEPREFIX (pid $WINESERVER_PID), started before this file with a soft limit of $WINESERVER_FDS, has fewer; stop it (WINEPREFIX=$WINEPREFIX $WINESERVER -k) and run the tests again"
    fi
}

wine_teardown_file() {
    [ -n "${WINE_SKIP:-}" ] || [ -z "${WINESERVER:-}" ] && return 0
    "$WINESERVER" -k 2>/dev/null || true
    timeout 30 "$WINESERVER" -w 2>/dev/null || true
}

# wine_require: skip this test, with the reason, where Wine or mingw is missing.
wine_require() {
    [ -z "${WINE_SKIP:-}" ] || skip "$WINE_SKIP"
}

# wine_exec SECONDS PROGRAM [ARGS...]: timeout SECONDS "$WINE" PROGRAM
# ARGS, for `run`. Every course program says something, when it succeeds
# and when it fails; a non-zero exit with no output at all is Wine failing
# to start the program (seen once in a run of every test, six files at
# once), and it is started once more, with a note. A program that is wrong
# fails twice.
wine_exec() {
    local secs="$1" out="$BATS_TEST_TMPDIR/wine-exec.out" status=0
    shift
    timeout "$secs" "$WINE" "$@" >"$out" 2>&1 </dev/null || status=$?
    if [ "$status" -ne 0 ] && [ "$status" -ne 124 ] && [ ! -s "$out" ]; then
        echo "# Wine exited with status $status and no output before ${1##*/} said a word: started it again" >&3
        status=0
        timeout "$secs" "$WINE" "$@" >"$out" 2>&1 </dev/null || status=$?
    fi
    cat "$out"
    return "$status"
}

# Stop the server under test with SIGINT (see above) and require exit 0.
# shellcheck disable=SC2034 # read by echo_suite.bash
SUITE_STOP_SIGNAL=INT
