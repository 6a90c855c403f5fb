#!/usr/bin/env bash
# check-commit-subjects.sh: checks every commit in BASE..HEAD as .githooks/commit-msg checks a new
# one: a subject (first line) of at most 72 characters, and a blank line between it and the body.
# Usage: scripts/check-commit-subjects.sh [BASE]
# BASE defaults to the last commit made before the rule (older subjects predate it).
set -euo pipefail
DEFAULT_BASE=779e0531333c834ed7807de70daeaef3a04e4531
base=${1:-$DEFAULT_BASE}
if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
	echo "check-commit-subjects: $base is not a commit here" >&2
	exit 2
fi
bad=0
n=0
for c in $(git rev-list --no-merges "$base..HEAD"); do
	n=$((n + 1))
	msg=$(git log -1 --format=%B "$c")
	subject=$(printf '%s\n' "$msg" | sed -n 1p)
	second=$(printf '%s\n' "$msg" | sed -n 2p)
	len=$(printf '%s' "$subject" | wc -m)
	if [ "$len" -gt 72 ]; then
		echo "${c:0:12}: subject of $len characters (at most 72): $subject" >&2
		bad=$((bad + 1))
	fi
	if [ -n "$second" ]; then
		echo "${c:0:12}: no blank line between the subject and the body: $subject" >&2
		bad=$((bad + 1))
	fi
done
if [ "$bad" -ne 0 ]; then
	echo "check-commit-subjects: $bad problem(s) in $n commit(s) since ${base:0:12}; see docs/development.md" >&2
	exit 1
fi
echo "check-commit-subjects: $n commit(s) since ${base:0:12}: subjects ok"
