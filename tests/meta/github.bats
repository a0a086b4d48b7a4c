# The GitHub workflow (.github/workflows/ci.yml) cannot run on this machine:
# its macOS and Windows runners exist only on GitHub. What can be checked here
# is that it stays in step with the course: it parses, its Linux job runs
# .ci/run, and every folder it builds and program it runs still exists under
# those names (a chapter renamed would otherwise break it unseen).
load ../helpers/common

WORKFLOW=.github/workflows/ci.yml

setup() {
    cd "$TOP"
}

@test "ci.yml parses as YAML, with a Linux job that runs .ci/run and a macOS and a Windows job" {
    /usr/bin/python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed (make deps)"
    run /usr/bin/python3 -c '
import sys, yaml
w = yaml.safe_load(open(sys.argv[1]))
for name, job in w["jobs"].items():
    print(name, job["runs-on"], " | ".join(s.get("run", s.get("uses", "")) for s in job["steps"]))
' "$WORKFLOW"
    assert_success
    assert_line --regexp '^linux ubuntu-latest .*\./\.ci/run'
    assert_line --regexp '^macos-kqueue macos-latest '
    assert_line --regexp '^windows-iocp windows-latest '
}

@test "every folder ci.yml builds exists, and every program it runs is one that folder builds" {
    local dir exe missing=""
    for dir in $(grep -o 'make -C [^ ]*' "$WORKFLOW" | awk '{print $3}'); do
        [ -f "$dir/Makefile" ] || missing+=" $dir (no Makefile)"
    done
    # The Windows programs: the same Makefiles cross-compile them here.
    for exe in $(grep -o 'build/[^ "]*\.exe' "$WORKFLOW" | sort -u); do
        [ -f "$BUILD/${exe#build/}" ] || missing+=" $exe (not built by make here)"
    done
    # The macOS job's test programs: the same names on Linux.
    ls "$BUILD"/common/kqueue-linux/tests/test-kq-* >/dev/null 2>&1 || missing+=" build/common/kqueue-linux/tests/test-kq-*"
    [ -z "$missing" ] || fail "ci.yml names what the course does not have:$missing"
}
