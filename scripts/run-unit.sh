#!/bin/sh
# run-unit.sh - run every cmocka test binary; the exit status says whether all passed.
# Each binary prints cmocka's own summary; a total follows.
status=0
passed=0
failed=0
for t in "$@"; do
	if "$t"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		status=1
		echo "FAILED: $t" >&2
	fi
done
echo "unit test programs: $passed passed, $failed failed"
exit $status
