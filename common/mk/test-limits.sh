# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# test-limits.sh: sourced by run-tests.sh before any test, server or
# wineserver starts (everything started after inherits the limits). Raises
# the soft limits on open files and locked memory to the hard ones, prints
# one line saying what the run has, and one more line for each limit still
# below what some tests need, with how to raise it.
#
# Root may raise any limit; an ordinary account at most to its hard limits,
# and Debian starts one with a soft limit of 1024 open files (the hard limit
# is higher). Tests hold 2,000 connections at once, in a server and in the
# client, and under Wine every socket is also a descriptor of the wineserver
# a test file starts: the soft limit is raised to the hard one. A hard limit
# of "unlimited" gives fs.nr_open, the most a process may have. Locked memory
# likewise: a process without CAP_IPC_LOCK pins io_uring's registered
# buffers against it, counted per user, and on some kernels its rings too
# (Linux 6.18 does; 5.12 moved them to the memory cgroup's account).
fd_was=$(ulimit -Sn) fd_hard=$(ulimit -Hn) fd_max=$fd_hard
if [ "$fd_hard" = unlimited ]; then
    fd_max=$(cat /proc/sys/fs/nr_open 2>/dev/null || sysctl -n kern.maxfilesperproc 2>/dev/null || echo "")
fi
if [ "$fd_was" != unlimited ] && [[ "$fd_max" =~ ^[0-9]+$ ]] && [ "$fd_was" -lt "$fd_max" ]; then
    ulimit -Sn "$fd_max" 2>/dev/null || true
fi
fd_now=$(ulimit -Sn)
if [ "$fd_now" != "$fd_was" ]; then
    fd_text="open files $fd_now (soft limit raised from $fd_was to the hard limit)"
    [ "$fd_hard" != unlimited ] || fd_text="open files $fd_now (soft limit raised from $fd_was; hard limit unlimited, fs.nr_open $fd_now)"
elif [ "$fd_now" = "$fd_hard" ]; then
    fd_text="open files $fd_now (soft limit = hard limit)"
else
    fd_text="open files $fd_now (hard limit $fd_hard)"
fi
kib() { if [ "$1" = unlimited ]; then echo unlimited; else echo "$1 KiB"; fi; }
ml_was=$(ulimit -Sl) ml_hard=$(ulimit -Hl)
if [ "$ml_was" != unlimited ] && { [ "$ml_hard" = unlimited ] || [ "$ml_was" -lt "$ml_hard" ]; }; then
    ulimit -Sl "$ml_hard" 2>/dev/null || true
fi
ml_now=$(ulimit -Sl)
ml_text="locked memory $(kib "$ml_now")"
[ "$ml_now" = "$ml_was" ] || ml_text+=" (soft limit raised from $(kib "$ml_was"))"
ml_counted=1
caps=$(awk '/^CapEff:/ { print $2 }' /proc/self/status 2>/dev/null)
if [[ "$caps" =~ ^[0-9a-f]+$ ]] && (((16#$caps >> 14) & 1)); then
    ml_text+=" (not counted: CAP_IPC_LOCK)"
    ml_counted=0
fi
echo "limits for $(id -un) (uid $(id -u)): $fd_text, $ml_text, processes $(ulimit -u)"
# Below what the tests need, say so at once. Open files: 2,000 idle
# connections plus 64 (require_fds in tests/helpers/echo_suite.bash), plus
# the wineserver's own 400 under Wine (tests/helpers/wine.bash); those
# tests skip below that. Locked memory, as an ordinary user on Linux 6.18:
# uring-cp -f needs 2,080 KiB (it skips below that), each io_uring server
# 96 to 256 KiB for its rings, all counted together for the user; 4096
# leaves room for the files that run at once.
fd_most=2464 ml_most=4096
if [ "$fd_now" != unlimited ] && [ "$fd_now" -lt "$fd_most" ]; then
    echo "  the tests that hold 2,000 connections need up to $fd_most open files, and skip with fewer;" \
        "to raise the hard limit: the line '$(id -un) hard nofile 4096' in /etc/security/limits.conf" \
        "(from the next login), or LimitNOFILE=4096 for a systemd unit"
fi
if [ "$ml_counted" = 1 ] && [ "$ml_now" != unlimited ] && [ "$ml_now" -lt "$ml_most" ]; then
    echo "  the io_uring tests pin memory, counted for all of $(id -un)'s processes together (uring-cp -f" \
        "2,080 KiB, each io_uring server up to 256 KiB): under $ml_most KiB some skip, and servers may fail" \
        "to create their rings (ENOMEM); to raise the hard limit: the line '$(id -un) hard memlock 8192'" \
        "in /etc/security/limits.conf, or LimitMEMLOCK=8M for a systemd unit"
fi
