# Shared by the tool tests (sourced): a scratch directory removed on exit, fail, and expect_2 for misuse checks.
# Under `set -o pipefail`, end a pipe from a tool in `grep PATTERN >/dev/null`, not `grep -q`: grep -q exits at the
# first match, and a tool still writing (hipinductor-cache source prints ~40 kB) then dies of SIGPIPE and fails the
# pipe, depending on timing (seen under load).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_2 TOOL WHAT CMD...: CMD must exit 2 with exactly one line on stderr, starting with "TOOL: ".
expect_2() {
  local tool=$1 what=$2; shift 2
  set +e
  "$@" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  set -e
  [ $rc -eq 2 ] || { cat "$work/stderr"; fail "$what: exit $rc, expected 2"; }
  [ "$(wc -l <"$work/stderr")" -eq 1 ] || { cat "$work/stderr"; fail "$what: expected one line on stderr"; }
  grep -q "^$tool: " "$work/stderr" || fail "$what: message does not name the tool"
  echo "ok: $what: $(cat "$work/stderr")"
}
