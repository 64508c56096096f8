# Sourced by the runners of test/fuzz, test/model, test/histories and
# test/enumerate.
# summary_add LOG WHAT: adds LOG's last "N passed, N failed" line to the
# caller's $passed and $failed, or one failure when WHAT ended without it.
summary_add() {
    local line p q
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$1" | tail -1)
    if [ -z "$line" ]; then
        echo "$2 ended without its summary: counted as a failure" >&2
        failed=$((failed + 1)); return
    fi
    read -r p _ q _ <<<"$line"
    passed=$((passed + p)); failed=$((failed + q))
}
