#!/usr/bin/env bats
# Exercise 04-epoll/spare-fd: EMFILE answered with a spare fd (-E spare):
# the clients over the limit are accepted and closed at once, and the spare
# is taken back for the next time. Runs against $IMPL (solutions by default;
# `make ex` uses exercises).

load ../helpers/common
load ../helpers/echo_suite

setup() {
    SERVER_CMD=("$(impl_bin spare-fd echo-epoll-lt)" -E spare)
}

# over_limit_sees_eof FD WHO: the client on FD reads EOF within 5 s.
over_limit_sees_eof() {
    local line="" status=0
    read -r -t 5 line <&"$1" || status=$?
    if [ "$status" -ne 1 ] || [ -n "$line" ]; then
        server_exited && server_gone "the server died while out of fds"
        fail "$2: expected EOF at once (read status 1), got status $status, line '$line' (status > 128: still waiting after 5 s)"
    fi
}

# start_at_limit WHO: the server under ulimit -n 12, and 10 clients, their
# fds added to the test's fds array: the first is served, and the 10th, over
# the limit, reads EOF at once (WHO names it in a failure).
start_at_limit() {
    local i fd
    server_start bash -c 'ulimit -n 12 && exec "$@"' _ "${SERVER_CMD[@]}" -p 0
    for ((i = 0; i < 10; i++)); do
        conn_open fd
        fds+=("$fd")
    done
    expect_echo "${fds[0]}" "first client"
    over_limit_sees_eof "${fds[9]}" "$1"
}

@test "spare-fd: under ulimit -n 12, a client over the limit reads EOF at once instead of waiting" {
    local fds=() fd
    start_at_limit "the 10th client, over the limit"
    grep -q 'closing waiting connections at once' "$SERVER_ERR" ||
        fail "expected the shedding to be logged, got: $(cat "$SERVER_ERR")"
    for fd in "${fds[@]}"; do exec {fd}>&-; done
    suite_stop_clean
}

@test "spare-fd: the spare is taken back: later clients over the limit are turned away at once too" {
    local fds=() more=() i fd
    start_at_limit "the 10th client"
    for ((i = 0; i < 3; i++)); do
        conn_open fd
        more+=("$fd")
        over_limit_sees_eof "$fd" "client $((11 + i)), after the spare was spent once"
    done
    expect_echo "${fds[0]}" "the first client is still served"
    for fd in "${fds[@]}" "${more[@]}"; do exec {fd}>&-; done
    suite_stop_clean
}

@test "spare-fd: a client that takes a freed slot is served, and shedding later clients leaves it alone (under the faults shim)" {
    local fds=() i fd a
    # Every write of the echoes is short, some reads too, and some calls fail
    # with EINTR or EAGAIN: the served clients must not notice. The shim's
    # log proves it injected them.
    # shellcheck disable=SC2207 # faults_env prints words for env(1)
    SERVER_CMD=(env $(faults_env FAULTS_SHORT_READ=30 FAULTS_SHORT_WRITE=100 FAULTS_EINTR=20 FAULTS_EAGAIN=20) "${SERVER_CMD[@]}")
    start_at_limit "the 10th client"
    # one client leaves: its slot goes to the next one, which must be served
    fd=${fds[1]}
    exec {fd}>&-
    sleep 0.3
    conn_open a
    expect_echo "$a" "I took a freed slot"
    # more clients over the limit: each is turned away, and only they are
    for ((i = 0; i < 3; i++)); do
        conn_open fd
        over_limit_sees_eof "$fd" "client $((11 + i)), over the limit again"
        exec {fd}>&-
    done
    expect_echo "$a" "still connected after the others were turned away"
    expect_echo "${fds[0]}" "the first client too"
    exec {a}>&-
    for i in 0 2 3 4 5 6 7 8 9; do
        fd=${fds[$i]}
        exec {fd}>&-
    done
    suite_stop_clean    faults_injected short_writes eintr eagain
}

@test "spare-fd: under ulimit -n 64 with 100 connection attempts it neither dies nor spins, and serves again" {
    suite_fd_limit_no_spin
}
