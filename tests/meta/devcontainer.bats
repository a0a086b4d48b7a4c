# test-long: reads the dev container's files against make deps and chapter 07 (a second; it builds no image)
# The dev container (.devcontainer/) is the set-up path for learners on
# Windows and macOS. Building its image needs a container runtime and the
# network, so these tests check what can drift without one: the image gets
# its packages from common/mk/deps.sh (the course's one list) and names no
# other beyond two of its own, and every option it is run with is one chapter
# 07 explains and gives what the course needs (io_uring allowed, ptrace for
# strace, descriptors for chapter 14's 10,000 connections, pinned memory for
# io_uring's registered buffers).
load ../helpers/common

DEVC=.devcontainer
DEPS=common/mk/deps.sh
CH07=chapters/07-io_uring-basics/README.md

# Packages the image installs besides make deps's, and why (git: the
# editor's source control runs in the container; ca-certificates: its https,
# and Microsoft's repository for the .NET SDK; sudo: the README's `sudo make
# setup`). Anything else belongs in deps.sh, so that a Debian machine gets it too.
EXTRAS="ca-certificates git sudo"

setup() {
    cd "$TOP"
    [ -f "$DEVC/devcontainer.json" ] || fail "$DEVC/devcontainer.json is missing"
    [ -f "$DEVC/Dockerfile" ] || fail "$DEVC/Dockerfile is missing"
    /usr/bin/python3 -c 'import json' 2>/dev/null || skip "python3 is not installed (make deps)"
}

# devc_json EXPR: a Python expression over `d`, devcontainer.json parsed
# (JSON with // comment lines, as VS Code reads it), printed.
devc_json() {
    /usr/bin/python3 -c '
import json, re, sys
text = open(sys.argv[1]).read()
d = json.loads("\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//")))
r = eval(sys.argv[2])
print("\n".join(r) if isinstance(r, list) else r)
' "$DEVC/devcontainer.json" "$1"
}

# canonical: every "--name value" and "--name=value" on stdin as
# "--name=value", one per line (how the options are compared below).
canonical() {
    /usr/bin/python3 -c '
import re, sys
for m in re.finditer(r"(--[a-z][a-z-]*)(?:[ =]+([^-\s`\\\\][^\s`\\\\]*))?", sys.stdin.read()):
    print(m.group(1) + ("=" + m.group(2) if m.group(2) else ""))
'
}

# The options devcontainer.json gives docker run, canonical.
devc_run_args() {
    devc_json '" ".join(d.get("runArgs", []))' | canonical
}

@test "devcontainer.json builds .devcontainer/Dockerfile with the repository as context, and adds no features" {
    run devc_json '[d["build"]["dockerfile"], d["build"]["context"], str(sorted(d.get("features", {})))]'
    assert_success
    assert_equal "${lines[0]}" Dockerfile
    assert_equal "${lines[1]}" ..
    # A feature installs software from outside make deps, which Debian
    # machines following the README would then lack.
    assert_equal "${lines[2]}" "[]"
}

@test "the image installs the course's packages by running common/mk/deps.sh, and no package deps.sh does not know" {
    grep -q "^COPY $DEPS " "$DEVC/Dockerfile" || fail "the Dockerfile does not copy $DEPS into the image"
    grep -qE '(bash|sh) [^ ]*deps\.sh' "$DEVC/Dockerfile" || fail "the Dockerfile does not run the deps.sh it copies"
    local known named unknown="" p
    known=$(bash -c 'eval "$(sed -n "/^apt_pkgs=(/,/)/p" "$1")"; printf "%s\n" "${apt_pkgs[@]}"' _ "$DEPS")
    [ "$(wc -l <<<"$known")" -gt 10 ] || fail "could not read apt_pkgs from $DEPS: got '$known'"
    known+=$'\n'"$(grep -oE 'dotnet-sdk-[0-9.]+' "$DEPS")"$'\n'"${EXTRAS// /$'\n'}"
    # Every package an apt-get install (or apt install) in the Dockerfile names.
    named=$(sed 's/\\$//' "$DEVC/Dockerfile" | tr '\n' ' ' | grep -oE 'apt(-get)? +install[^;&|]*' |
        tr ' ' '\n' | grep -vE '^(apt|apt-get|install|-.*|)$' | sort -u)
    [ -n "$named" ] || fail "found no apt-get install in the Dockerfile: is it read right?"
    for p in $named; do
        grep -qxF -- "$p" <<<"$known" || unknown+=" $p"
    done
    [ -z "$unknown" ] || fail "the Dockerfile installs what make deps does not:$unknown (add it to $DEPS, or to EXTRAS here with the reason)"
}

@test "every option the dev container runs with is one chapter 07 explains, and the Dockerfile's docker run line has the same" {
    local opts explained by_hand missing="" o
    opts=$(devc_run_args)
    [ -n "$opts" ] || fail "devcontainer.json has no runArgs"
    explained=$(canonical <"$CH07")
    by_hand=$(grep '^#' "$DEVC/Dockerfile" | sed -n '/docker run/,/^#$/p' | sed 's/^# *//' | canonical)
    for o in $opts; do
        grep -qxF -- "$o" <<<"$explained" || missing+=" $o (not in $CH07)"
    done
    for o in $opts; do
        grep -qxF -- "$o" <<<"$by_hand" || missing+=" $o (not in the Dockerfile's docker run example)"
    done
    for o in $(grep -E '^--(security-opt|cap-add|ulimit)=' <<<"$by_hand"); do
        grep -qxF -- "$o" <<<"$opts" || missing+=" $o (in the Dockerfile's example, not in devcontainer.json)"
    done
    [ -z "$missing" ] || fail "options out of step:$missing"
}

@test "the dev container's options give the course what it needs: io_uring, strace, 10,000 connections, 4 MiB pinned" {
    local opts seccomp profile nofile memlock wrong=""
    opts=$(devc_run_args)
    # io_uring: Docker's default seccomp profile refuses it since Docker 25,
    # Podman's too. unconfined, or a profile file that allows io_uring_setup.
    seccomp=$(sed -n 's/^--security-opt=seccomp[=:]//p' <<<"$opts")
    if [ -z "$seccomp" ]; then
        wrong+=$'\n'"  no --security-opt seccomp=...: the runtime's default profile refuses io_uring_setup"
    elif [ "$seccomp" != unconfined ]; then
        profile="$DEVC/${seccomp##*/}"
        /usr/bin/python3 - "$profile" <<'EOF' || wrong+=$'\n'"  the seccomp profile $seccomp does not allow io_uring_setup"
import json, sys
p = json.load(open(sys.argv[1]))
rules = [r for r in p.get("syscalls", []) if "io_uring_setup" in r.get("names", [])]
allow = "SCMP_ACT_ALLOW"
sys.exit(0 if all(r["action"] == allow for r in rules) and (rules or p["defaultAction"] == allow) else 1)
EOF
    fi
    grep -qxE -- '--cap-add=(SYS_PTRACE|CAP_SYS_PTRACE|ALL)' <<<"$opts" ||
        wrong+=$'\n'"  no --cap-add=SYS_PTRACE: strace cannot count the system calls of a server it attaches to"
    # Chapter 14's c10k.sh: 10,000 connections, a descriptor at each end, and
    # it asks for twice that plus 64 in each process.
    nofile=$(sed -n 's/^--ulimit=nofile=\([0-9]*\):\([0-9]*\)$/\2/p; s/^--ulimit=nofile=\([0-9]*\)$/\1/p' <<<"$opts")
    [ "${nofile:-0}" -ge 20064 ] ||
        wrong+=$'\n'"  --ulimit nofile hard limit '${nofile:-none}': chapter 14 needs 20064 (2 x 10,000 + 64)"
    # io_uring's registered buffers: the tests pin up to 4096 KiB (bytes here).
    memlock=$(sed -n 's/^--ulimit=memlock=[-0-9]*:\([-0-9]*\)$/\1/p; s/^--ulimit=memlock=\([-0-9]*\)$/\1/p' <<<"$opts")
    [ "${memlock:-0}" = -1 ] || [ "${memlock:-0}" -ge $((4096 * 1024)) ] ||
        wrong+=$'\n'"  --ulimit memlock hard limit '${memlock:-none}' bytes: the io_uring tests pin up to 4 MiB"
    [ -z "$wrong" ] || fail "devcontainer.json runArgs:$wrong"
}
