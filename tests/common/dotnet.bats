#!/usr/bin/env bats
# test-long: two scratch builds of a C# program with the .NET SDK (about 35 s): a check of the build rules (dotnet.mk), not of the course's programs, which make builds and their own tests run
# common/mk/dotnet.mk, the build of the chapters' C# programs, on a scratch
# copy of the build rules with one small program: the apphost is built and
# linked beside the C programs, offline, with nothing written outside build/
# and no process left running; a second make does not start dotnet; without
# the SDK, with one older than 8, or in a sanitizer build, make says so in
# one line and succeeds.
#
#   bats tests/common/dotnet.bats

load ../helpers/common

setup() {
    require_dotnet
    SCRATCH="$BATS_TEST_TMPDIR/course"
    mkdir -p "$SCRATCH/common" "$SCRATCH/chapters/99-demo/dotnet/hello-dotnet" "$BATS_TEST_TMPDIR/home" \
        "$BATS_TEST_TMPDIR/tmp"
    cp -r "$TOP/common/mk" "$TOP/common/dotnet" "$SCRATCH/common/"
    cat >"$SCRATCH/chapters/99-demo/Makefile" <<'EOF'
PROGS :=
DOTNET_PROGS := hello-dotnet
include ../../common/mk/prog.mk
include ../../common/mk/dotnet.mk
EOF
    cat >"$SCRATCH/chapters/99-demo/dotnet/hello-dotnet/hello-dotnet.csproj" <<'EOF'
<Project Sdk="Microsoft.NET.Sdk">
  <Import Project="../../../../common/dotnet/Course.props" />
</Project>
EOF
    cat >"$SCRATCH/chapters/99-demo/dotnet/hello-dotnet/Program.cs" <<'EOF'
System.Console.WriteLine($"hello from .NET {System.Environment.Version}, args {string.Join(' ', args)}");
EOF
    OUT="$SCRATCH/build/chapters/99-demo"
}

# smake ARGS...: make in the scratch chapter, with its own build folder, HOME
# and TMPDIR (which the build must leave alone), and a mark in the
# environment of every process it starts.
smake() {
    env -u BUILD -u SAN -u MAKEFLAGS -u MAKELEVEL HOME="$BATS_TEST_TMPDIR/home" TMPDIR="$BATS_TEST_TMPDIR/tmp" \
        DOTNET_BUILD_MARK="$BATS_TEST_TMPDIR" timeout 300 \
        "${NETNS[@]}" make --no-print-directory -C "$SCRATCH/chapters/99-demo" "$@"
}

# left_running: the processes the build started that are still there.
left_running() {
    grep -lzsx "DOTNET_BUILD_MARK=$BATS_TEST_TMPDIR" /proc/[0-9]*/environ 2>/dev/null |
        sed 's|/proc/\([0-9]*\)/environ|\1|' | while read -r p; do
        ps -o pid=,args= -p "$p" 2>/dev/null
    done
}

@test "make builds a C# program into build/, offline, leaving HOME and TMPDIR alone and nothing running" {
    NETNS=()
    local offline="no network namespace here (unshare -n refused): built with the network as it is"
    if unshare -n true 2>/dev/null; then
        NETNS=(unshare -n) offline="built in a network namespace with no network at all"
    elif unshare -rn true 2>/dev/null; then
        NETNS=(unshare -rn) offline="built in a user and network namespace with no network at all"
    fi
    echo "# $offline" >&3
    run smake
    assert_success
    assert_output --partial "built chapters/99-demo (C#): hello-dotnet -> build/chapters/99-demo/"
    [ -L "$OUT/hello-dotnet" ] || fail "expected $OUT/hello-dotnet to be a link to the apphost"
    run "$OUT/hello-dotnet" one two
    assert_success
    assert_output --regexp '^hello from \.NET [0-9]+\.[0-9.]+, args one two$'
    [ -z "$(ls -A "$BATS_TEST_TMPDIR/home")" ] ||
        fail "the build wrote into HOME: $(find "$BATS_TEST_TMPDIR/home" | head)"
    [ -z "$(ls -A "$BATS_TEST_TMPDIR/tmp")" ] ||
        fail "the build wrote into TMPDIR: $(find "$BATS_TEST_TMPDIR/tmp" | head)"
    local src="$SCRATCH/chapters/99-demo/dotnet/hello-dotnet"
    [ -z "$(find "$src" -mindepth 1 ! -name Program.cs ! -name hello-dotnet.csproj)" ] ||
        fail "the build wrote into the source folder: $(ls -A "$src")"
    local left
    left=$(left_running)
    [ -z "$left" ] || fail "the build left processes running (an MSBuild node, a compiler server?):
$left"
}

@test "a second make starts no dotnet, and a changed source is built again" {
    NETNS=()
    run smake
    assert_success
    run smake -q "$OUT/hello-dotnet"
    [ "$status" -eq 0 ] || fail "make -q says the program is out of date right after a build (status $status)"
    # and with no SDK at all, a second make still succeeds: nothing to do
    run smake DOTNET="$BATS_TEST_TMPDIR/no-such-dotnet" "$OUT/hello-dotnet"
    assert_success
    sleep 1 # a new modification time, at the file system's resolution
    echo 'System.Console.WriteLine("changed");' >"$SCRATCH/chapters/99-demo/dotnet/hello-dotnet/Program.cs"
    run smake -q "$OUT/hello-dotnet"
    [ "$status" -eq 1 ] || fail "make -q should see the changed source (status $status)"
    run smake
    assert_success
    run "$OUT/hello-dotnet"
    assert_output "changed"
}

@test "without the SDK, with one older than 8, or in a sanitizer build, make skips the C# programs in one line and succeeds" {
    NETNS=()
    run smake DOTNET="$BATS_TEST_TMPDIR/no-such-dotnet"
    assert_success
    assert_output --partial "skipping the C# programs of chapters/99-demo (hello-dotnet): the .NET SDK (dotnet, 8 or newer) is not installed"
    [ "$(grep -c 'C#' <<<"$output")" -eq 1 ] || fail "expected one line about the C# programs, got: $output"
    # a dotnet whose newest SDK is too old for the programs (6 here)
    printf '#!/bin/sh\necho "6.0.428 [/usr/share/dotnet/sdk]"\n' >"$BATS_TEST_TMPDIR/old-dotnet"
    chmod +x "$BATS_TEST_TMPDIR/old-dotnet"
    run smake DOTNET="$BATS_TEST_TMPDIR/old-dotnet"
    assert_success
    assert_output --partial "skipping the C# programs of chapters/99-demo (hello-dotnet): they need the .NET SDK 8 or newer, and $BATS_TEST_TMPDIR/old-dotnet has SDK 6"
    run smake SAN=address
    assert_success
    assert_output --partial "skipping the C# programs of chapters/99-demo (hello-dotnet): SAN=address instruments C code only"
    [ ! -e "$OUT/hello-dotnet" ] || fail "a C# program was built anyway"
}
