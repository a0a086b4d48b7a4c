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

@test "the classroom's autograding.json is what make grade would list: one test per exercise, worth its level's points" {
    run "$TOP/common/mk/grade.sh" --autograding
    assert_success
    diff <(echo "$output") .github/classroom/autograding.json ||
        fail "run: common/mk/grade.sh --autograding > .github/classroom/autograding.json"
    run /usr/bin/python3 - <<'PY'
import json
tests = json.load(open(".github/classroom/autograding.json"))["tests"]
print(len(tests), sum(t["points"] for t in tests))
for t in tests:
    assert t["run"].startswith("make -s grade EX="), t
PY
    assert_success
    # (an exercise has a level: line; the capstone's program folder has none)
    assert_output "$(grep -l '^level:' solutions/[0-9][0-9]-*/*/exercise.txt | wc -l) $(cat solutions/[0-9][0-9]-*/*/exercise.txt |
        awk '/^level:/ { p += ($2 == "warm-up") ? 1 : ($2 == "core") ? 2 : 3 } END { print p }')"
}

@test "classroom.yml parses, runs the autograding action and keeps make grade's JUnit report" {
    /usr/bin/python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed (make deps)"
    run /usr/bin/python3 -c '
import yaml
w = yaml.safe_load(open(".github/workflows/classroom.yml"))
for s in w["jobs"]["autograding"]["steps"]:
    print(s.get("run", s.get("uses", "")), s.get("with", {}).get("path", ""))
'
    assert_success
    assert_line --regexp '^education/autograding@v1'
    assert_line --regexp '^make grade'
    assert_line --regexp '^actions/upload-artifact@v[0-9]+ build/grade/junit.xml$'
}
