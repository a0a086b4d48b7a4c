# SPDX-License-Identifier: MIT
# tests/02-threads/pool.bash: scenarios of echo-pool's starvation and
# shutdown that chapter.bats checks on the chapter's echo-pool, and the
# exercise files (worker-pool, pool-stop) on theirs.
#
#   load ../helpers/common
#   load pool
#
#   pool_third_client_waits BIN [LINE]   2 workers, 2 clients: the third waits
#   pool_served_in_turn BIN QUIET WHO    1 worker, 1 slot: 4 clients served in turn
#   pool_stop_when_full BIN              2 workers busy, 1 slot taken, SIGTERM: exit 0

# pool_third_client_waits BIN [LINE]: echo-pool BIN with 2 workers serves
# clients a and b; a third, c, connects (the kernel accepts it) and sends a
# line, which no worker reads until a leaves: then it comes back. With
# LINE, b is still served too: LINE comes back on it. SIGTERM then exits 0
# within 5 s.
pool_third_client_waits() {
    local a b c
    server_start "$1" -p 0 -w 2
    conn_open a
    conn_open b
    expect_echo "$a" one
    expect_echo "$b" two
    # The handshake completes (the kernel accepts), yet no worker reads.
    conn_open c
    printf 'three\n' >&"$c"
    expect_no_echo "$c" "the third client"
    exec {a}>&-
    expect_line "$c" three "on the third client once the first left"
    [ -z "${2:-}" ] || expect_echo "$b" "$2"
    stop_within 5
    exec {b}>&- {c}>&-
}

# pool_served_in_turn BIN QUIET WHO: echo-pool BIN with one worker and one
# queue slot (-w 1 -q 1): client a is served, b is queued, the main thread
# sleeps in push with c, and d waits in the kernel's accept backlog; each
# sends its own letter. Client QUIET (b, c or d; WHO names it in a failure)
# gets no echo yet. Then each leaves in turn and the next one gets its
# letter back; SIGTERM exits 0 within 5 s.
pool_served_in_turn() {
    local a b c d
    server_start "$1" -p 0 -w 1 -q 1
    conn_open a
    expect_echo "$a" a
    conn_open b
    conn_open c
    conn_open d
    printf 'b\n' >&"$b"
    printf 'c\n' >&"$c"
    printf 'd\n' >&"$d"
    expect_no_echo "${!2}" "$3"
    exec {a}>&-
    expect_line "$b" b "once a left"
    exec {b}>&-
    expect_line "$c" c "once b left"
    exec {c}>&-
    expect_line "$d" d "once c left"
    stop_within 5
    exec {d}>&-
}

# pool_stop_when_full BIN: echo-pool BIN with 2 workers and 1 queue slot,
# and 5 clients, their fds added to the test's fds array: clients 0 and 1
# are served, 2 is queued, the main thread waits in push with 3, and 4 waits
# in the kernel's backlog. SIGTERM then exits 0 within 5 s. The test closes
# the fds.
pool_stop_when_full() {
    local i fd
    server_start "$1" -p 0 -w 2 -q 1
    for ((i = 0; i < 5; i++)); do
        conn_open fd
        fds+=("$fd")
    done
    expect_echo "${fds[0]}" first
    expect_echo "${fds[1]}" second
    stop_within 5
}
