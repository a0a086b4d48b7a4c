#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# doctor.sh: say, in plain words, what this machine has and lacks for the course.
set -uo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd)"
missing=0

have() { # have LABEL PURPOSE CMD...: run CMD quietly, report
    local label="$1" purpose="$2"
    shift 2
    if "$@" >/dev/null 2>&1; then
        printf '  ok       %-22s %s\n' "$label" "$purpose"
    else
        printf '  MISSING  %-22s %s\n' "$label" "$purpose"
        missing=$((missing + 1))
    fi
}

echo "Tools"
have "C compiler (gcc)" "builds every chapter" command -v gcc
have make "the course's entry point" command -v make
have bats "runs the tests" command -v bats
have "bats-support/assert" "test helpers" test -d /usr/lib/bats/bats-assert -o -d /usr/local/lib/bats-assert
have bats-file "test helpers" test -d /usr/lib/bats/bats-file -o -d /usr/local/lib/bats-file
have "GNU parallel" "bats --jobs" command -v parallel
have inotifywait "make watch (without it, it polls)" command -v inotifywait
have liburing "io_uring chapters (07, 08, 11)" test -f /usr/include/liburing.h
have strace "counts syscalls in tests" command -v strace
have socat "test peers" command -v socat
have valgrind "memory checks" command -v valgrind
have clang-format "make lint" command -v clang-format
have cppcheck "make lint" command -v cppcheck
have shellcheck "make lint" command -v shellcheck
have mingw-w64 "IOCP chapters (09, 11)" command -v x86_64-w64-mingw32-gcc
have wine64 "runs the IOCP chapter" test -x /usr/lib/wine/wine64 -o -x /usr/bin/wine64
have pandoc "make book" command -v pandoc
have graphviz "book diagrams" command -v dot
have chromium "checks the book in a browser" command -v chromium
have epubcheck "checks the book's EPUB" command -v epubcheck
have curl "HTTP tests (13)" command -v curl
have wrk "HTTP load test (13)" command -v wrk
have libuv "the libuv reference server (13)" test -f /usr/include/uv.h
have gnuplot "benchmark charts (14)" command -v gnuplot
have redis-server "the real Redis, compared (15)" command -v redis-server
have redis-cli "redis-tools: clients (15)" command -v redis-cli
have perf "linux-perf: profiles and counts (04, 05, 07, 15)" command -v perf
have libFuzzer "clang's fuzzer: the RESP parser's fuzz target (15)" sh -c \
    'printf "int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n" |
        clang -fsanitize=fuzzer -x c - -o /dev/null'
# The .NET SDK is optional: without it the C# companion programs are not
# built and their tests skip, so it is not counted as missing.
dotnet_sdk=$("${DOTNET:-dotnet}" --list-sdks 2>/dev/null | sed -n 's/^\([0-9][0-9.a-z-]*\) .*/\1/p' | sort -V | tail -n 1)
if [ -n "$dotnet_sdk" ] && [ "${dotnet_sdk%%.*}" -ge 8 ]; then
    printf '  ok       %-22s %s\n' ".NET SDK $dotnet_sdk" "the C# companion programs (optional)"
elif [ -n "$dotnet_sdk" ]; then
    printf '  old      %-22s %s\n' ".NET SDK $dotnet_sdk" "the C# companion programs need 8 or newer: they are skipped"
else
    printf '  absent   %-22s %s\n' ".NET SDK" "optional: without it the C# companion programs are skipped; make deps says how to get it"
fi

# What kind of machine this is. Where io_uring is switched off, and so the
# setting to change when it is refused, depends on it: a container's seccomp
# profile, WSL's kernel, or the kernel's own sysctl. Sets machine_kind
# (container, wsl, vm or metal) and machine_what (in words, with the evidence).
machine_detect() {
    local ct="" vm="" runtime="" product="" ev=() vm_ev=()
    if command -v systemd-detect-virt >/dev/null; then
        ct=$(systemd-detect-virt --container 2>/dev/null) || ct=""
        vm=$(systemd-detect-virt --vm 2>/dev/null) || vm=""
    fi
    [ -e /.dockerenv ] && runtime=docker ev+=(/.dockerenv)
    [ -e /run/.containerenv ] && runtime=podman ev+=(/run/.containerenv)
    case "$(cat /proc/1/cgroup 2>/dev/null)" in
    */docker[/-]*) runtime=${runtime:-docker} ev+=("docker in /proc/1/cgroup") ;;
    */libpod*) runtime=${runtime:-podman} ev+=("libpod in /proc/1/cgroup") ;;
    */kubepods*) runtime=${runtime:-kubernetes} ev+=("kubepods in /proc/1/cgroup") ;;
    */lxc*) runtime=${runtime:-lxc} ev+=("lxc in /proc/1/cgroup") ;;
    esac
    case "$ct" in
    "" | none | wsl) ;; # systemd-detect-virt calls WSL a container; it is not one here
    *) runtime=${runtime:-$ct} ev+=("systemd-detect-virt: $ct") ;;
    esac
    [ -n "$vm" ] && [ "$vm" != none ] && vm_ev+=("systemd-detect-virt: $vm")
    product=$(cat /sys/class/dmi/id/product_name 2>/dev/null)
    case "$product" in
    *VirtualBox* | *VMware* | *KVM* | *QEMU* | "Virtual Machine" | "Standard PC"* | *Parallels* | *BHYVE* | *HVM* | "Google Compute Engine")
        vm_ev+=("product name \"$product\"") ;;
    esac
    grep -qw hypervisor /proc/cpuinfo 2>/dev/null && vm_ev+=("the hypervisor flag in /proc/cpuinfo")

    if [ "$(uname -s)" != Linux ]; then
        machine_kind=other
        machine_what="$(uname -s), not Linux: epoll, io_uring and the faults shim need the dev container or a Linux VM (README.md)"
    elif [ -n "$runtime" ]; then
        machine_kind=container
        machine_what="a $runtime container ($(machine__join "${ev[@]}"))"
        [ ${#vm_ev[@]} -gt 0 ] && machine_what+=", on a virtual machine ($(machine__join "${vm_ev[@]}"))"
    elif grep -qi microsoft /proc/version 2>/dev/null || [ -n "${WSL_DISTRO_NAME:-}" ] || [ "$ct" = wsl ]; then
        machine_kind=wsl
        # WSL 1 translates system calls itself: no epoll worth the name, no io_uring.
        if grep -qE 'WSL2|microsoft-standard' /proc/version 2>/dev/null; then
            machine_what="WSL 2 (Windows' Linux VM${WSL_DISTRO_NAME:+, distribution $WSL_DISTRO_NAME}), Microsoft's kernel $(uname -r)"
        else
            machine_what="WSL 1${WSL_DISTRO_NAME:+ ($WSL_DISTRO_NAME)}: no Linux kernel, the course needs WSL 2 (in PowerShell: wsl --set-version ${WSL_DISTRO_NAME:-NAME} 2)"
        fi
    elif [ ${#vm_ev[@]} -gt 0 ]; then
        machine_kind=vm machine_what="a virtual machine ($(machine__join "${vm_ev[@]}"))"
    else
        machine_kind=metal machine_what="bare metal (no sign of a container, WSL or a hypervisor)"
    fi
}
machine__join() { local IFS=';'; printf '%s' "$*" | sed 's/;/; /g'; }

# The one setting to change here when the probe says io_uring is refused
# (PROBE: what it printed).
machine_uring_fix() {
    local probe="$1" sysctl
    sysctl=$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)
    case "$machine_kind:$sysctl:$probe" in
    container:[12]:*)
        echo "To change in a container: the host's sysctl (a container shares its host's kernel,"
        echo "and cannot change it): on the host, sudo sysctl kernel.io_uring_disabled=0" ;;
    container:*)
        echo "To change in a container: its seccomp profile. Start it with --security-opt"
        echo "seccomp=unconfined (or a profile that allows io_uring_setup, io_uring_enter and"
        echo "io_uring_register), as .devcontainer/devcontainer.json does. (Podman's profile answers"
        echo "ENOSYS to what it refuses; the probe tells that from a kernel without io_uring by the"
        echo "Seccomp: line of /proc/self/status.)" ;;
    wsl:[12]:*) echo "To change on WSL: the sysctl, sudo sysctl kernel.io_uring_disabled=0" ;;
    wsl:*)
        echo "To change on WSL: the kernel. In PowerShell, wsl --update installs Microsoft's current"
        echo "one (built with io_uring), then wsl --shutdown; a kernel= line in .wslconfig must name"
        echo "one built with CONFIG_IO_URING=y" ;;
    *:*:*ENOSYS*)
        echo "To change: the kernel, for one built with io_uring (CONFIG_IO_URING=y, 5.1 or newer),"
        echo "as Debian's and Ubuntu's are" ;;
    *:*:*seccomp*)
        echo "To change: the sandbox this shell runs in (a systemd unit's SystemCallFilter=, a snap,"
        echo "a flatpak): run the course outside it" ;;
    *) echo "To change: the sysctl, sudo sysctl kernel.io_uring_disabled=0 (a file in /etc/sysctl.d/ keeps it)" ;;
    esac
}

machine_detect
echo
echo "Machine"
echo "  $machine_what"

echo
echo "Kernel"
echo "  $(uname -s) $(uname -r) on $(uname -m), $(nproc 2>/dev/null || echo '?') CPUs"
if [ "$(uname -s)" = Linux ]; then
    major=$(uname -r | cut -d. -f1) minor=$(uname -r | cut -d. -f2)
    # The versions are those of chapter 07's table ("Which kernel runs what").
    if [ "$major" -gt 6 ] || { [ "$major" -eq 6 ] && [ "$minor" -ge 1 ]; }; then
        echo "  6.1 or newer: every io_uring program of the course runs, with DEFER_TASKRUN (chapter 08)."
    elif [ "$major" -eq 6 ]; then
        echo "  6.0: every io_uring program of the course runs; echo-uring goes without DEFER_TASKRUN (6.1)."
    elif [ "$major" -eq 5 ] && [ "$minor" -ge 19 ]; then
        echo "  5.19: no multishot recv (6.0): echo-uring, echo-uring-sqpoll and uring-rules (chapter 08)"
        echo "  exit 77 and their tests skip; chapter 07, echo-uring-basic and chapters 11 and 13 run."
    elif [ "$major" -eq 5 ] && [ "$minor" -ge 6 ]; then
        echo "  5.$minor: chapter 07 and echo-uring-basic run; what needs 5.19 or 6.0 does not (chapter 08's"
        echo "  other servers say so and exit 77; chapter 07's table says which release added what)."
    else
        echo "  older than 5.6: the io_uring tests skip (chapter 07's table says which release added what)."
    fi

    echo
    echo "io_uring"
    if [ -r /proc/sys/kernel/io_uring_disabled ]; then
        case "$(cat /proc/sys/kernel/io_uring_disabled)" in
        0) echo "  kernel.io_uring_disabled = 0: allowed for every process." ;;
        1) echo "  kernel.io_uring_disabled = 1: only for processes in the io_uring_group (or CAP_SYS_ADMIN)." ;;
        2) echo "  kernel.io_uring_disabled = 2: disabled for everyone." ;;
        esac
    fi
    probe_dir="${BUILD:-$top/build}/doctor"
    mkdir -p "$probe_dir" 2>/dev/null
    if cc_err=$(gcc -std=c11 -D_GNU_SOURCE -O1 -o "$probe_dir/uring-allowed" "$top/common/mk/uring-allowed.c" 2>&1); then
        if msg=$("$probe_dir/uring-allowed" 2>&1); then
            echo "  probe: $msg"
        else
            echo "  probe: $msg"
            echo "  The io_uring tests (chapters 07, 08, and the io_uring backends later) will skip."
            machine_uring_fix "$msg" | sed 's/^/  /'
        fi
    else
        echo "  probe: could not compile the probe into $probe_dir: $(head -n 1 <<<"${cc_err:-no C compiler?}")"
    fi
fi

echo
echo "Limits of $(id -un) (make test raises each soft limit to the hard one)"
fd_hard=$(ulimit -Hn)
echo "  open files (ulimit -n): $(ulimit -Sn) soft, $fd_hard hard"
# 2,000 idle connections + 64, + 400 for the wineserver (tests/helpers/wine.bash)
if [ "$fd_hard" != unlimited ] && [ "$fd_hard" -lt 2464 ]; then
    echo "  The tests that hold 2,000 connections need up to 2464 open files: they will skip."
    echo "  To raise the hard limit: the line '$(id -un) hard nofile 4096' in /etc/security/limits.conf"
    echo "  (from the next login), or LimitNOFILE=4096 for a systemd unit."
fi
ml_hard=$(ulimit -Hl)
caps=$(awk '/^CapEff:/ { print $2 }' /proc/self/status 2>/dev/null)
if [[ "$caps" =~ ^[0-9a-f]+$ ]] && (((16#$caps >> 14) & 1)); then
    echo "  locked memory (ulimit -l): $(ulimit -Sl) soft, $ml_hard hard (KiB); not counted here (CAP_IPC_LOCK)"
else
    echo "  locked memory (ulimit -l): $(ulimit -Sl) soft, $ml_hard hard (KiB); io_uring's registered buffers"
    echo "  count against it (its rings too on some kernels, 6.18 among them), for all of $(id -un)'s processes together"
    if [ "$ml_hard" != unlimited ] && [ "$ml_hard" -lt 4096 ]; then
        echo "  The io_uring tests pin up to about 4096 KiB at once: with less, some skip and some fail (ENOMEM)."
        echo "  To raise the hard limit: the line '$(id -un) hard memlock 8192' in /etc/security/limits.conf,"
        echo "  or LimitMEMLOCK=8M for a systemd unit."
    fi
fi
echo "  processes (ulimit -u): $(ulimit -u); chapter 02's tests start 2,000 threads at once"
if [ -r /proc/sys/kernel/yama/ptrace_scope ]; then
    case "$(cat /proc/sys/kernel/yama/ptrace_scope)" in
    0 | 1) echo "  kernel.yama.ptrace_scope = $(cat /proc/sys/kernel/yama/ptrace_scope): strace may trace the programs it starts." ;;
    *) echo "  kernel.yama.ptrace_scope = $(cat /proc/sys/kernel/yama/ptrace_scope): strace may not trace here; the tests that count system calls will skip." ;;
    esac
fi

echo
if [ "$missing" -eq 0 ]; then
    echo "Everything the course uses is here."
else
    echo "$missing missing: run 'sudo make deps' (or 'sudo make setup' to also build)."
    exit 1
fi
