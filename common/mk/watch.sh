#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# watch.sh [EX]: test an exercise each time you save one of its files.
#
# Runs `make ex EX=...` (ex.sh) at once, then again after every save of a
# file in exercises/NN-slug/NAME/, clearing the screen first; each run ends
# with ex.sh's one-line verdict. Without EX it takes the next unfinished
# exercise (the one make progress calls next; it runs no test to choose, so
# an exercise changed since its last run counts as unfinished until it has
# run), says which, and moves on to the one after it when it passes. Ctrl-C
# stops it, with exit status 0.
#
# How it notices a save: inotifywait (inotify-tools, installed by make deps)
# watches the folder for close_write, moved_to, create, delete and
# moved_from, since editors save by writing in place or by writing a new
# file and renaming it (vim's backupcopy, most IDEs); a burst of events is
# one save (it waits until the files stop changing for 0.3 s); editor swap,
# backup and lock files are ignored (exercise_droppings in exercise-lib.sh).
# A save runs the tests even when it changed no byte (a file's time, size
# and inode are compared): saving again is how to run them again.
# Where inotifywait is missing (macOS, where brew has no inotify) or fails (a
# folder inotify cannot watch, such as some network or container mounts), it
# compares the files' times and sizes once a second instead, and says so;
# POLL=1 asks for that from the start.
#
# Ctrl-C: make, which runs this script, is in the terminal's foreground
# process group, so a Ctrl-C would reach make too, and make dies of it
# ("make: *** Interrupt", exit status 130) whatever the script does. So on
# a terminal the script first moves into a process group of its own and
# makes that the terminal's foreground group (perl's POSIX setpgid and
# tcsetpgrp; without perl it stays where it is and make reports the
# Ctrl-C). A Ctrl-C then reaches the script and what it runs, not make: the
# script stops (its INT trap), gives the terminal back to make's group and
# exits 0. Ctrl-Z is ignored (a stopped group that its shell does not know
# about would hang the terminal). SIGINT or SIGTERM sent to the script
# alone stops it once the command it waits for ends: within a second when
# it is waiting for a save, after the run when it is testing.
set -uo pipefail
. "$(dirname "$0")/exercise-lib.sh"

command -v bats >/dev/null || { echo "bats is not installed: run 'make deps'" >&2; exit 1; }

# On a terminal: a process group of its own, in the terminal's foreground
# (see above). The script runs again, through perl, as that group's leader;
# WATCH_TTY_PGRP holds make's group, to give the terminal back at the end.
if [ -t 0 ] && [ -z "${WATCH_TTY_PGRP:-}" ] && perl -MPOSIX -e 1 2>/dev/null; then
    exec perl -MPOSIX -e '
        my $orig = POSIX::tcgetpgrp(0);
        exec @ARGV if !defined($orig) || $orig < 0 || !POSIX::setpgid(0, 0);
        local $SIG{TTOU} = "IGNORE";    # a background group may take the terminal only so
        if (POSIX::tcsetpgrp(0, POSIX::getpgrp())) {
            $ENV{WATCH_TTY_PGRP} = $orig;
        } else {
            POSIX::setpgid(0, $orig);   # back where it was
        }
        $SIG{TTOU} = "DEFAULT";
        exec @ARGV' "$0" "$@"
fi
tty_back() { # give the terminal back to make's process group
    [ -n "${WATCH_TTY_PGRP:-}" ] && [ -t 0 ] &&
        perl -MPOSIX -e '$SIG{TTOU} = "IGNORE"; POSIX::tcsetpgrp(0, $ARGV[0])' "$WATCH_TTY_PGRP" 2>/dev/null
    return 0
}

stop() {
    echo
    echo "make watch: stopped."
    exit 0
}
trap stop INT TERM
trap '' TSTP

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"; tty_back' EXIT

# run_fg ERR CMD...: run CMD with its stderr in the file ERR ("-": where it
# was); when a Ctrl-C ended it, stop (ex.sh exits 130 then).
run_fg() {
    local err="$1" st
    shift
    if [ "$err" = - ]; then
        "$@"
    else
        "$@" 2>"$err"
    fi
    st=$?
    [ "$st" -eq 130 ] && stop
    return "$st"
}

follow_next=0
if [ -n "${1:-}" ]; then
    ex="$(exercise_resolve "$1" watch)" || exit 2
else
    fresh="$(exercise_fresh_all)" ||
        { echo "watch: could not generate the shipped exercises (make exercises says why)" >&2; exit 1; }
    ex="$(exercise_next "$fresh")"
    if [ -z "$ex" ]; then
        echo "Every exercise you can do here is done. make watch EX=NN-slug/NAME watches one of them."
        exit 0
    fi
    follow_next=1
    echo "make watch: no EX given: watching the next unfinished exercise, $ex (make progress calls it next)."
fi

# How saves are noticed: inotifywait, else polling.
mode=inotify
why_poll=""
if [ "${POLL:-0}" = 1 ]; then
    mode=poll why_poll="POLL=1"
elif ! command -v inotifywait >/dev/null; then
    mode=poll
    if [ "$(uname -s)" = Linux ]; then
        why_poll="inotifywait is not installed (make deps installs inotify-tools)"
    else
        why_poll="no inotifywait on $(uname -s)"
    fi
fi

# snapshot DIR: one line per file (path, modification time, size, inode),
# droppings left out: two saves differ in at least one of them.
if find . -maxdepth 0 -printf '' >/dev/null 2>&1; then
    snapshot() {
        [ -d "$1" ] || return 0
        find "$1" -type f -printf '%P\t%T@\t%s\t%i\n' | grep -Ev "$exercise_droppings_ere_tab" | LC_ALL=C sort
    }
else
    # BSD find has no -printf (macOS): perl's stat, with sub-second times
    snapshot() {
        [ -d "$1" ] || return 0
        perl -MFile::Find -MTime::HiRes=stat -e '
            my $top = shift;
            find({ no_chdir => 1, wanted => sub {
                return unless -f $_;
                my @s = stat($_);
                (my $rel = $_) =~ s{^\Q$top\E/?}{};
                print "$rel\t$s[9]\t$s[7]\t$s[1]\n";
            } }, $top);' "$1" | grep -Ev "$exercise_droppings_ere_tab" | LC_ALL=C sort
    }
fi
# the droppings' regex, anchored at the end of a snapshot line's path field
exercise_droppings_ere_tab="${exercise_droppings_ere%\$}"$'\t'

# changed_files OLD NEW: the files that differ between two snapshots, on one line
changed_files() {
    diff <(printf '%s\n' "$1") <(printf '%s\n' "$2") |
        awk -F'\t' '/^[<>] / { print substr($1, 3) }' | LC_ALL=C sort -u | paste -sd' ' -
}

# wait_for_save: return once the files of $dir differ from $last.
wait_for_save() {
    local now st fails=0
    while :; do
        if [ ! -d "$dir" ]; then
            echo "${dir#"$top"/}/ is gone: make reset EX=$ex brings it back as shipped. Waiting for it."
            while [ ! -d "$dir" ]; do run_fg - sleep 1; done
            return 0
        fi
        if [ "$mode" = inotify ]; then
            # one event, or 1 s (then compare anyway: no save is lost
            # between two inotifywait runs, and a signal is seen quickly)
            run_fg "$tmp/inotify.err" inotifywait -qq -r -t 1 -e close_write,moved_to,create,delete,moved_from \
                --exclude "$exercise_droppings_ere" "$dir"
            st=$?
            if [ "$st" -ne 0 ] && [ "$st" -ne 2 ]; then
                fails=$((fails + 1))
                if [ "$fails" -ge 3 ]; then
                    mode=poll why_poll="inotifywait failed: $(head -n 1 "$tmp/inotify.err")"
                    echo "make watch: $why_poll; checking for changes once a second instead."
                fi
                run_fg - sleep 1
            fi
        else
            run_fg - sleep 1
        fi
        now="$(snapshot "$dir")"
        [ "$now" != "$last" ] && return 0
    done
}

# settle: wait until the files stop changing (an editor's save is a burst of
# writes and renames), at most 3 s.
settle() {
    local a b
    a="$(snapshot "$dir")"
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        run_fg - sleep 0.3
        b="$(snapshot "$dir")"
        [ "$a" = "$b" ] && return 0
        a="$b"
    done
}

run=0
run_tests() { # run_tests WHY
    run=$((run + 1))
    [ -t 1 ] && printf '\033[H\033[2J\033[3J'
    echo "make watch: $ex, run $run at $(date +%H:%M:%S)${1:+ ($1)}"
    if [ "$mode" = inotify ]; then
        echo "watching ${dir#"$top"/}/ for saves; Ctrl-C stops."
    else
        echo "watching ${dir#"$top"/}/ for saves (once a second: $why_poll); Ctrl-C stops."
    fi
    echo
    run_fg - "$top/common/mk/ex.sh" "$ex"
}

# the folder you edit: the exercise's, or for a stage of the capstone the
# program every stage grows
dir="$top/exercises/$(exercise_program "$ex")"
last="$(snapshot "$dir")"
run_tests "started"
status=$?
while :; do
    if [ "$status" -eq 0 ] && [ "$follow_next" = 1 ]; then
        nxt="$(exercise_next "$fresh" "$ex")"
        echo
        if [ -z "$nxt" ]; then
            echo "make watch: that was the last unfinished exercise. Ctrl-C stops; saving here runs it again."
        else
            ex="$nxt" dir="$top/exercises/$(exercise_program "$nxt")"
            last="$(snapshot "$dir")"
            echo "make watch: next: $ex ($(exercise_meta "$ex" kind), $(exercise_meta "$ex" level)): $(exercise_meta "$ex" title)"
            echo "the task: exercises/$ex/README.md. Watching it now: save a file of it to run its tests."
        fi
    fi
    wait_for_save
    settle
    now="$(snapshot "$dir")"
    saved="$(changed_files "$last" "$now")"
    last="$now"
    run_tests "${saved:+saved: $saved}"
    status=$?
done
