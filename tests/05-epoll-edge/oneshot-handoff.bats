#!/usr/bin/env bats
# Exercise 05-epoll-edge/oneshot-handoff: worker threads share one epoll with
# EPOLLONESHOT; after serving a connection a worker re-arms it and lets go.
# Runs against $IMPL (solutions by default: the chapter's own
# echo-epoll-oneshot.c; `make ex` uses exercises).

load ../helpers/common
load ../helpers/echo_suite
load ../04-epoll/event-loop

setup() {
    SERVER_CMD=("$(impl_bin oneshot-handoff echo-epoll-oneshot)" -w 4)
    gate_setup
}

teardown() {
    gate_teardown
}

# owner_check_clean: after the server stopped, no event found its connection
# held by another worker (a second owner aborts the server with a message),
# and the server printed its owner check line. Sets WAITED: how many events
# found the previous owner still inside its re-arm.
owner_check_clean() {
    ! grep -q 'still serves it' "$SERVER_ERR" || fail "$(cat "$SERVER_ERR")"
    grep -Eq '^owner check: none of [1-9][0-9]* events found its connection held by another worker' "$SERVER_OUT" ||
        fail "no owner check line: $(cat "$SERVER_OUT")"
    WAITED=$(sed -n 's/.*(\([0-9]*\) waited for a re-arm to finish).*/\1/p' "$SERVER_OUT")
}

@test "oneshot-handoff: messages come back again and again on one connection (re-armed after each event)" {
    GATE=1
    suite_start
    echoes_on_one_conn 5
    suite_stop_clean
}

# The race, forced. Each message is 100 KB: one read (64 KiB) leaves bytes in
# the socket, so the re-arm reports the connection again at once, to a
# worker waiting in epoll_wait(). ONESHOT_REARM_DELAY_US holds the
# re-arming worker 2 ms inside its re-arm, so that other worker's event
# arrives, every time, before the first has let go. It must wait for the
# release (the owner check counts it), never take the connection as its own.
@test "oneshot-handoff: with every re-arm slowed by 2 ms, the next worker's event always comes before the release: it waits, and never finds the connection owned" {
    local out
    SERVER_CMD=(env ONESHOT_REARM_DELAY_US=2000 "${SERVER_CMD[@]}")
    suite_start
    out=$(timeout 60 "$(tool_bin echo-load)" -p "$PORT" -c 2 -n 10 -l 100000 -t $((10 * $(san_slowdown))) 2>&1) ||
        server_gone "echo-load failed: $out"
    grep -q 'errors 0' <<<"$out" || fail "echo-load saw errors: $out"
    suite_stop_clean
    owner_check_clean
    echo "# $WAITED events waited for a re-arm to finish" >&3
    [ "${WAITED:-0}" -gt 0 ] ||
        fail "no event arrived while its connection was being re-armed: the test forced nothing ($(tail -n 1 "$SERVER_OUT"))"
}

@test "oneshot-handoff: 96 KiB sent in one go to a paused server come back whole (the re-arm reports what is left)" {
    GATE=1
    suite_drains_message_sent_while_paused 98304
}

@test "oneshot-handoff: idle with a client connected, its workers do not wake (EPOLLOUT re-armed only while output waits)" {
    # With EPOLLONESHOT, a re-arm for EPOLLOUT on a socket with room reports
    # it at once: armed with nothing to send, the workers take turns at it
    # for ever. The reference's 4 workers: 0 wake-ups in 2 s; the bound
    # leaves room for ThreadSanitizer's helper thread (SAN=thread).
    idle_wakeups_all_threads_at_most 40
}

@test "oneshot-handoff: 16 MiB to a slow reader come back intact within 10 s (re-armed for EPOLLOUT while output waits)" {
    suite_start
    slow_reader_mib 16 $((10 * $(san_slowdown))) bytes
    suite_stop_clean
}

@test "oneshot-handoff: 4 workers, 100 clients: no event ever finds its connection still held by another worker" {
    local out
    suite_start
    out=$(timeout 120 "$(tool_bin echo-load)" -p "$PORT" -c 100 -n 200 -l 200 -D 4 -t $((20 * $(san_slowdown))) 2>&1) ||
        server_gone "echo-load failed: $out"
    grep -q 'errors 0' <<<"$out" || fail "echo-load saw errors: $out"
    suite_stop_clean
    owner_check_clean
}

@test "oneshot-handoff: every byte survives short reads and writes, EINTR and EAGAIN from the faults shim, within 10 s" {
    # A fake EAGAIN is harmless here: the re-arm looks at the socket as it
    # is, and reports again what is still there.
    faults_echo_within 10 FAULTS_SHORT_READ=30 FAULTS_SHORT_WRITE=50 FAULTS_EINTR=10 FAULTS_EAGAIN=10
    faults_injected short_reads short_writes eintr eagain
}
