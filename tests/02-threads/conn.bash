# tests/02-threads/conn.bash: raw connections for the chapter's tests, with
# bash's /dev/tcp, so a test can hold clients open, idle, in any order.
#
#   load conn        (after ../helpers/common)

# conn_open VAR: connect to $PORT; store the new descriptor in VAR.
conn_open() {
    local _conn_fd
    exec {_conn_fd}<>"/dev/tcp/127.0.0.1/$PORT" || fail "could not connect to port $PORT"
    printf -v "$1" '%s' "$_conn_fd"
}

# expect_echo FD MESSAGE: send one line, require the same line back within 10 s.
expect_echo() {
    local line=""
    printf '%s\n' "$2" >&"$1"
    read -r -t 10 line <&"$1" || fail "no echo of '$2' within 10 s (fd $1)"
    [ "$line" = "$2" ] || fail "expected echo '$2', got '$line'"
}

# expect_line FD MESSAGE WHEN: the line MESSAGE, sent earlier, comes back within 10 s.
expect_line() {
    local line=""
    read -r -t 10 line <&"$1" || fail "no echo of '$2' within 10 s $3"
    [ "$line" = "$2" ] || fail "expected echo '$2' $3, got '$line'"
}

# expect_no_echo FD WHAT: nothing comes back on FD for a second.
expect_no_echo() {
    local line=""
    if read -r -t 1 line <&"$1"; then
        fail "$2 got an echo ('$line') while every worker was busy"
    fi
}

# stop_within SECONDS: SIGTERM, then require exit 0 within SECONDS.
stop_within() {
    local t0 t1 ms
    t0=$(date +%s%N)
    server_stop TERM
    t1=$(date +%s%N)
    ms=$(((t1 - t0) / 1000000))
    [ "$SERVER_STATUS" -eq 0 ] ||
        fail "expected exit status 0 after SIGTERM, got $SERVER_STATUS; stderr: $(cat "$SERVER_ERR")"
    [ "$ms" -le $(($1 * 1000)) ] || fail "expected exit within $1 s of SIGTERM, took $ms ms"
}
