#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# deps.sh: install the system packages the course needs.
#
# Debian/Ubuntu (apt) is the reference platform; Fedora (dnf) and macOS
# (brew) get the closest equivalents. Uses sudo when not root. Packages
# already installed are left alone.
set -euo pipefail

apt_pkgs=(build-essential pkg-config liburing-dev bats bats-support bats-assert bats-file
    parallel strace socat valgrind cppcheck clang-format shellcheck iproute2 procps
    gcc-mingw-w64-x86-64 wine64 pandoc graphviz fonts-dejavu-core chromium gnuplot-nox
    curl wrk libuv1-dev python3-yaml inotify-tools epubcheck redis-server redis-tools
    clang libclang-rt-14-dev linux-perf)
dnf_pkgs=(gcc make pkgconf-pkg-config liburing-devel bats parallel strace socat valgrind
    cppcheck clang-tools-extra ShellCheck iproute procps-ng mingw64-gcc wine pandoc graphviz dejavu-sans-fonts
    chromium gnuplot curl wrk libuv-devel python3-pyyaml inotify-tools epubcheck redis clang compiler-rt perf)
brew_pkgs=(bats-core bats-core/bats-core/bats-support bats-core/bats-core/bats-assert
    bats-core/bats-core/bats-file parallel socat cppcheck clang-format shellcheck mingw-w64 pandoc
    graphviz gnuplot curl wrk libuv epubcheck redis llvm)

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "deps: not root and no sudo; run as root" >&2; exit 1; }
    sudo="sudo"
fi

# The .NET SDK is optional (the C# companion programs; their tests skip
# without it). Installed only from the distribution's own packages: Ubuntu
# has dotnet-sdk-8.0 (22.04 and later) and newer ones, Fedora too; Debian does
# not package it, and Microsoft's own repository is not added behind your back.
dotnet_note() {
    echo "deps: the .NET SDK (optional: the C# companion programs, skipped without it) is not packaged by $1."
    echo "      To add it: https://learn.microsoft.com/dotnet/core/install/linux (Microsoft's packages"
    echo "      for your distribution, or dotnet-install.sh), SDK 8 or newer; then make."
}
have_dotnet() { command -v "${DOTNET:-dotnet}" >/dev/null; }

if command -v apt-get >/dev/null; then
    missing=()
    for p in "${apt_pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    # the newest .NET SDK package this distribution has, if any; asked after
    # apt-get update when one runs, for a fresh machine's lists are empty
    dotnet_pkg() {
        have_dotnet && return 0
        for p in dotnet-sdk-10.0 dotnet-sdk-9.0 dotnet-sdk-8.0; do
            if apt-cache show "$p" 2>/dev/null | grep '^Version:' >/dev/null; then
                missing+=("$p")
                return 0
            fi
        done
        dotnet_note "$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-this distribution}")"
    }
    [ ${#missing[@]} -gt 0 ] || dotnet_pkg
    if [ ${#missing[@]} -eq 0 ]; then
        echo "deps: every package is installed."
        exit 0
    fi
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q
    [[ " ${missing[*]} " == *" dotnet-sdk-"* ]] || dotnet_pkg
    # One name the archive lacks would fail the whole install: leave it out,
    # and say so (Ubuntu has no chromium deb, only a snap; make doctor says
    # what each package is for, and the tests that need it skip).
    available=()
    for p in "${missing[@]}"; do
        # (not grep -q: apt-cache would die of SIGPIPE, and pipefail fail the test)
        if apt-cache show "$p" 2>/dev/null | grep '^Version:' >/dev/null; then
            available+=("$p")
        else
            echo "deps: $p is not in this distribution's archive: left out"
        fi
    done
    [ ${#available[@]} -gt 0 ] || exit 0
    echo "deps: installing ${available[*]}"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${available[@]}"
elif command -v dnf >/dev/null; then
    have_dotnet || dnf_pkgs+=(dotnet-sdk-8.0)
    echo "deps: installing with dnf: ${dnf_pkgs[*]}"
    echo "deps: (bats-support/bats-assert/bats-file are not packaged on Fedora: install them"
    echo "       from their releases into /usr/lib/bats, or set BATS_LIB_PATH)"
    $sudo dnf install -y "${dnf_pkgs[@]}"
elif command -v brew >/dev/null; then
    have_dotnet || brew_pkgs+=(dotnet)
    echo "deps: installing with brew: ${brew_pkgs[*]}"
    echo "deps: macOS runs the portable chapters and the kqueue chapter natively;"
    echo "      epoll, io_uring and the faults tests need Linux (a VM or container)."
    echo "      (brew has no inotify: make watch checks your files once a second instead.)"
    brew install "${brew_pkgs[@]}"
else
    echo "deps: no apt-get, dnf or brew here. Install by hand: ${apt_pkgs[*]} (Debian names)" >&2
    exit 1
fi
