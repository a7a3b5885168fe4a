# Shared by the CLI test scripts (sourced, run from the repository root):
# expect NAME STATUS TEXT COMMAND... counts a pass when COMMAND exits with
# STATUS and its output (stdout and stderr) contains TEXT, else prints why.
passed=0; failed=0
expect() {
    name=$1; want=$2; text=$3; shift 3
    out=$("$@" 2>&1); rc=$?
    if [ "$rc" -eq "$want" ] && printf '%s' "$out" | grep -qF -- "$text"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)); echo "FAIL $name (exit $rc, wanted $want and '$text'): $(printf '%s' "$out" | tail -3)"
    fi
}
