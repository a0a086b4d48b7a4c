# SPDX-License-Identifier: MIT
# tests/03-nonblocking/exercises.bash: what the tests of the exercises on
# echo-poll and echo-select share (eagain-read, half-close, poll-echo,
# select-sets). The clients need python3 (and the second, ss).
#
#   half_close_client PORT BYTES          send, half-close, wait, read slowly
#   half_closed_pauser PORT BYTES READY [PAUSE]  send, half-close, read slowly,
#                                         and pause once the server read the EOF
#   wait_for_file FILE PID                FILE appears while PID runs
#   faults_echo_and_load KIND...          1 MB and 10 busy clients under the faults
#                                         shim; fails unless each KIND was injected
#   (the valgrind check is the suite's: suite_valgrind_clean SECS)
#
# The clients give up after HALF_CLOSE_SECS seconds (30 unless set).

# half_close_client PORT BYTES: send BYTES of random data without reading,
# half-close, wait 1.5 s, then read to EOF, slowly. Prints "sent N got M
# intact BOOL". Its receive buffer is tiny and it reads slowly, so what the
# server cannot send waits in the server: in its socket's send buffer (at
# most tcp_wmem's maximum) and in the connection's pending output. A server
# that stops reading above its bound reads the client's EOF only once it
# drained below it, and a slow reader keeps output pending even then: the
# half-close finds it there, every time, not only on a quiet machine.
half_close_client() {
    timeout "${HALF_CLOSE_SECS:-30}" python3 - "$@" <<'PY'
import os, socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(("127.0.0.1", port))
data = os.urandom(n)
s.sendall(data)
s.shutdown(socket.SHUT_WR)
time.sleep(1.5)
got = bytearray()
while True:
    b = s.recv(4096)
    if not b:
        break
    got += b
    time.sleep(0.0005)  # a slow reader: the server's last bytes wait for it
print("sent", n, "got", len(got), "intact", bytes(got) == data)
PY
}

# half_closed_pauser PORT BYTES READY [PAUSE]: send BYTES without reading, half-close,
# then read slowly. As soon as the server has read everything the client
# sent (`ss`: its side in CLOSE-WAIT, nothing in its receive queue) and the
# echo it still holds in its own buffer is under CONN_PENDING_MAX (so
# nothing stops it from reading the EOF), stop reading for PAUSE seconds
# (1), touching READY. What the server holds is what was sent, less what the client got,
# less what sits in the two sockets. Prints "sent N got M intact BOOL
# paused BOOL". BYTES is more than the server's socket can hold (tcp_wmem's
# maximum), so some echo is still pending in the server at that moment.
half_closed_pauser() {
    timeout "${HALF_CLOSE_SECS:-30}" python3 - "$@" <<'PY'
import os, socket, subprocess, sys, time
port, n, ready = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
pause = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(("127.0.0.1", port))
data = os.urandom(n)
s.sendall(data)
s.shutdown(socket.SHUT_WR)
def server_holds(got):
    """The echo pending in the server once it read everything, else None."""
    srv = cli = None
    out = subprocess.run(["ss", "-Htn", "( sport = :%d or dport = :%d )" % (port, port)],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) < 5:
            continue
        if f[3].endswith(":%d" % port):
            srv = (f[0], int(f[1]), int(f[2]))
        elif f[4].endswith(":%d" % port):
            cli = (f[0], int(f[1]), int(f[2]))
    if not srv or not cli or srv[0] != "CLOSE-WAIT" or srv[1] != 0:
        return None
    return n - got - srv[2] - cli[1]
got, paused, k = bytearray(), False, 0
while True:
    b = s.recv(4096)
    if not b:
        break
    got += b
    k += 1
    if not paused and k % 16 == 0:  # every 64 KiB: ss costs a fork and an exec
        held = server_holds(len(got))
        if held is not None and 0 < held < 768 * 1024:
            paused = True
            open(ready, "w").close()
            time.sleep(pause)
    time.sleep(0.0005)
print("sent", n, "got", len(got), "intact", bytes(got) == data, "paused", paused)
PY
}

# wait_for_file FILE PID: wait up to HALF_CLOSE_SECS (30) for FILE to
# appear while PID runs.
wait_for_file() {
    local i
    for ((i = 0; i < ${HALF_CLOSE_SECS:-30} * 10; i++)); do
        [ -e "$1" ] && return 0
        kill -0 "$2" 2>/dev/null || break
        sleep 0.1
    done
    [ -e "$1" ]
}

# faults_echo_and_load KIND...: the server under the faults shim (short reads
# and writes, EINTR, EAGAIN) echoes 1 MB on one client and 100 messages on
# each of 10 busy ones, then stops cleanly; fails unless the shim injected
# each KIND (faults_injected's names: short_reads, short_writes, eintr, eagain).
faults_echo_and_load() {
    # shellcheck disable=SC2046 # one word per VAR=VALUE
    suite_start env $(faults_env FAULTS_SHORT_WRITE=50 FAULTS_SHORT_READ=30 FAULTS_EINTR=10 FAULTS_EAGAIN=20)
    payload "$BATS_TEST_TMPDIR/f1" 1000000
    # the reference: about 3 s for both, under the shim, on a loaded machine
    CLIENT_TIMEOUT=$((8 * SLOW)) suite_echo_file "$BATS_TEST_TMPDIR/f1"
    run timeout $((10 * SLOW)) "$(tool_bin echo-load)" -p "$PORT" -c 10 -n 100 -l 3000 -t $((8 * SLOW))
    # shellcheck disable=SC2154 # status and output are set by bats' run
    [ "$status" -eq 0 ] && [[ "$output" == *"errors 0"* ]] ||
        server_gone "echo-load under the faults shim (status $status): $output
--- server stderr ---
$(cat "$SERVER_ERR")"
    suite_stop_clean
    faults_injected "$@"
}
