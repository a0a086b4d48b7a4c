# Chapter 14: the scripts that measure every server. Short versions of the
# real runs: two servers, one-second points, 1,000 connections instead of
# 10,000. The full benchmark and the full C10K run are `make bench` and
# `make -C chapters/14-c10k c10k`, not tests.
load ../helpers/common

CH14="$TOP/chapters/14-c10k"
FIX="$BATS_TEST_DIRNAME/fixtures"

# bench.sh and c10k.sh make build/ themselves; in another build (a
# sanitizer one) they use what is there. Figures there mean nothing.
skip_if_sanitized() {
    case "$BUILD" in */san-*) skip "$1 measures the normal build" ;; esac
}

# csv_rows FILE: the data rows of a CSV (no "#" header, no column names).
csv_rows() {
    grep -v '^#' "$1" | tail -n +2
}

# ---- the servers ---------------------------------------------------------------------

@test "the benchmarked servers of common/servers.txt are programs the build makes that answer -h" {
    local name ch kind needs cmd bin n=0
    cd "$TOP" && source "$CH14/lib.bash"
    while IFS='|' read -r name ch kind needs cmd; do
        n=$((n + 1))
        [[ "$kind" =~ ^(events|threads)$ ]] || fail "$name: kind '$kind' is not events or threads"
        cmd=$(sed -E 's/^([A-Z_]+=[^ ]* +)*//' <<<"$cmd")
        bin="$BUILD/${cmd%% *}"
        if [[ "$name" == echo-uv || "$name" == echo-dotnet-* ]] && [ ! -x "$bin" ]; then
            continue # built only with libuv1-dev, or the .NET SDK
        fi
        [ -x "$bin" ] || fail "$name: ${bin#"$TOP"/} is not built (make)"
        run "$bin" -h
        [ "$status" -eq 0 ] || fail "$name: ${bin#"$TOP"/} -h exited with $status: $output"
    done < <(cd "$TOP" && c10k_table)
    [ "$n" -ge 19 ] || fail "expected the 19 servers of chapters 02 to 13, found $n"
    # a filter picks a whole name, or every backend of a name no server has
    c10k_load_servers "echo-aio,echo-uring"
    assert_equal "${C10K_NAME[*]}" "echo-uring echo-aio-uring echo-aio-epoll echo-aio-kqueue echo-aio-poll"
    run c10k_load_servers "echo-nothing"
    assert_equal "$status" 2
    assert_output --partial "-s: no server called 'echo-nothing'"
}

# ---- bench.sh ------------------------------------------------------------------------

@test "bench.sh: two servers at 1 and 50 connections give a CSV with the machine, one row per server and point, and system calls at 50" {
    skip_if_sanitized bench.sh
    local csv="$BATS_TEST_TMPDIR/bench.csv" key
    run timeout 120 "$CH14/bench.sh" -s echo-poll,echo-epoll-lt -c "1 50" -k none -o "$csv"
    [ "$status" -eq 0 ] || fail "bench.sh exited with $status: $output"
    assert_output --partial "echo-epoll-lt"
    assert_output --partial "system calls per echoed message"
    assert_output --partial "CSV: $csv"
    for key in kernel cpu cores liburing gcc date method; do
        grep -q "^# $key: ." "$csv" || fail "no '# $key:' line in the CSV header:
$(grep '^#' "$csv")"
    done
    [ "$(grep -v '^#' "$csv" | head -n 1)" = \
        "server,chapter,kind,conns,msg_bytes,run,seconds,requests,errors,req_per_s,p50_us,p99_us,max_us,user_us_per_msg,sys_us_per_msg,syscalls_per_msg" ] ||
        fail "unexpected columns: $(grep -v '^#' "$csv" | head -n 1)"
    [ "$(csv_rows "$csv" | wc -l)" -eq 4 ] || fail "expected 2 servers x 2 points x 1 run = 4 rows:
$(csv_rows "$csv")"
    # every row: no error, some requests, CPU figures; the system calls at 50
    # connections: a readiness server needs about two per message (read, write)
    run awk -F, '$9 != 0 || $10 <= 0 || $14 == "" || $15 == "" { print "bad row: " $0 }
        $4 == 50 && ($16 < 1.5 || $16 > 4) { print "system calls per message out of [1.5, 4]: " $0 }
        $4 == 1 && $16 != "" { print "system calls on a row at 1 connection: " $0 }' <(csv_rows "$csv")
    [ -z "$output" ] || fail "$output"
}

@test "bench.sh: an unknown server, option or count says so and exits 2" {
    run timeout 10 "$CH14/bench.sh" -s echo-nothing
    [ "$status" -eq 2 ] || fail "expected exit 2, got $status: $output"
    assert_output --partial "no server called 'echo-nothing'"
    assert_output --partial "  echo-epoll-oneshot"
    run timeout 10 "$CH14/bench.sh" --fast
    [ "$status" -eq 2 ] && assert_output --partial "unknown argument --fast"
    run timeout 10 "$CH14/bench.sh" -d 0
    [ "$status" -eq 2 ] && assert_output --partial "positive whole number"
    run timeout 10 "$CH14/bench.sh" -k lots
    [ "$status" -eq 2 ] && assert_output --partial "-k takes connection counts"
    run env BENCH=slow timeout 10 "$CH14/bench.sh"
    [ "$status" -eq 2 ] && assert_output --partial "BENCH=slow: quick or full"
}

# ---- bench-check.sh ------------------------------------------------------------------

@test "bench-check: the committed baseline compared with itself passes" {
    run "$CH14/bench-check.sh" "$CH14/baseline.csv"
    [ "$status" -eq 0 ] || fail "expected exit 0, got $status: $output"
    assert_output --partial "(the reference)"
    assert_output --regexp "[1-9][0-9]* ratios compared, 0 fell by more than"
}

@test "bench-check: one server's requests/s cut to a third fails with exit 1 and names it" {
    local csv="$BATS_TEST_TMPDIR/collapsed.csv"
    # echo-poll's req/s divided by 3 at every point, everything else as it was
    awk -F, -v OFS=, '$1 == "echo-poll" { $10 = int($10 / 3) } { print }' "$CH14/baseline.csv" >"$csv"
    run "$CH14/bench-check.sh" "$csv"
    [ "$status" -eq 1 ] || fail "expected exit 1, got $status: $output"
    # one line per point (four), all of them echo-poll's, at -66.7%
    run grep FELL <<<"$output"
    [ "${#lines[@]}" -eq 4 ] || fail "expected echo-poll to fall at its 4 points, got: $output"
    run grep -v '^echo-poll .* -66\.[0-9]%  FELL$' <<<"$output"
    [ -z "$output" ] || fail "a line that should not say FELL, or not so: $output"
}

@test "bench-check: no CSV yet exits 2 and says to run make bench; nor does it take any file" {
    mkdir -p "$BATS_TEST_TMPDIR/empty"
    run env BENCH_OUT="$BATS_TEST_TMPDIR/empty" "$CH14/bench-check.sh"
    [ "$status" -eq 2 ] || fail "expected exit 2, got $status: $output"
    assert_output --partial "run make bench first"
    run "$CH14/bench-check.sh" "$TOP/common/servers.txt"
    [ "$status" -eq 2 ] && assert_output --partial "not a CSV written by bench.sh"
    grep -v '^echo-epoll-lt,' "$CH14/baseline.csv" >"$BATS_TEST_TMPDIR/noref.csv"
    run "$CH14/bench-check.sh" "$BATS_TEST_TMPDIR/noref.csv"
    [ "$status" -eq 2 ] && assert_output --partial "echo-epoll-lt, the reference, is not in it"
    run "$CH14/bench-check.sh" -m 0
    [ "$status" -eq 2 ] && assert_output --partial "-m takes a percentage"
}

# ---- charts.sh -----------------------------------------------------------------------

@test "charts.sh draws the five charts from a CSV, with every server in them" {
    command -v gnuplot >/dev/null || skip "gnuplot is not installed (make deps installs gnuplot-nox)"
    local d="$BATS_TEST_TMPDIR/charts" c
    mkdir -p "$d"
    run "$CH14/charts.sh" -b "$FIX/bench.csv" -m "$FIX/c10k.csv" -o "$d"
    [ "$status" -eq 0 ] || fail "charts.sh exited with $status: $output"
    for c in requests p99 cpu syscalls memory; do
        [ -s "$d/$c.svg" ] || fail "no $c.svg"
        grep -q '^<svg' "$d/$c.svg" && grep -q '</svg>' "$d/$c.svg" || fail "$c.svg is not a whole SVG"
        grep -q '>echo-uring<' "$d/$c.svg" || [ "$c" = memory ] || fail "$c.svg does not name echo-uring"
        grep -q '>echo-threads<' "$d/$c.svg" || fail "$c.svg does not name echo-threads"
        # deterministic: no date or time of drawing in the file
        ! grep -qE '20[0-9]{2}-[0-9]{2}-[0-9]{2}T|[0-9]{2}:[0-9]{2}:[0-9]{2}' "$d/$c.svg" || fail "$c.svg holds a time"
    done
    # the same tables twice give the same files
    mkdir -p "$d/again"
    "$CH14/charts.sh" -b "$FIX/bench.csv" -m "$FIX/c10k.csv" -o "$d/again" >/dev/null
    for c in requests p99 cpu syscalls memory; do
        cmp -s "$d/$c.svg" "$d/again/$c.svg" || fail "$c.svg differs between two drawings of the same CSV"
    done
}

@test "the committed charts are what charts.sh draws from the committed CSVs" {
    run "$CH14/charts.sh" --check
    [ "$status" -ne 77 ] || skip "$output"
    [ "$status" -eq 0 ] || fail "$output"
}

# ---- c10k.sh ---------------------------------------------------------------------------

@test "c10k.sh -n 1000: two event-driven servers hold every connection, say what each costs, and serve a new client" {
    local csv="$BATS_TEST_TMPDIR/c10k.csv"
    require_fds 1064 # c10k.sh: n + 64 in the server, as many in echo-load
    run timeout 120 "$CH14/c10k.sh" -n 1000 -s echo-epoll-lt,echo-uring -o "$csv"
    [ "$status" -eq 0 ] || fail "c10k.sh exited with $status: $output"
    assert_output --partial "target: at most 4096 bytes of server memory per idle connection"
    [ "$(grep -v '^#' "$csv" | head -n 1)" = \
        "server,chapter,kind,phase,conns,held,rss_before_kb,rss_after_kb,bytes_per_conn,heap_kb,anon_kb,other_kb,vmsize_kb,threads,kernel_stack_kb,slab_kb,new_client_ms,result" ] ||
        fail "unexpected columns: $(grep -v '^#' "$csv" | head -n 1)"
    grep -q '^echo-epoll-lt,04,events,hold,1000,1000,' "$csv" || fail "no echo-epoll-lt row holding 1000:
$(cat "$csv")"
    # each server: all held, a figure per connection, the new client served, ok
    run awk -F, '$6 != 1000 || $9 !~ /^-?[0-9]+$/ || $17 !~ /^[0-9]+$/ || $18 != "ok" { print "bad row: " $0 }' \
        <(csv_rows "$csv")
    [ -z "$output" ] || fail "$output"
}

@test "c10k.sh stops with how to raise the limit when the hard fd limit is too low" {
    run bash -c "ulimit -n 500 && exec timeout 30 '$CH14/c10k.sh' -n 1000 -s echo-poll"
    [ "$status" -eq 1 ] || fail "expected exit 1, got $status: $output"
    assert_output --partial "the hard limit here is 500 (ulimit -Hn)"
    assert_output --partial "/etc/security/limits.conf"
    assert_output --partial "LimitNOFILE="
    assert_output --partial "-n 436"
}

@test "c10k.sh: bad arguments say so and exit 2" {
    local args
    for args in "-n 0" "-n many" "-T 0" "-s echo-nothing" "--all" "-n"; do
        run timeout 10 "$CH14/c10k.sh" $args
        [ "$status" -eq 2 ] || fail "c10k.sh $args: expected exit 2, got $status: $output"
        [ -n "$output" ] || fail "c10k.sh $args: no message"
    done
}
