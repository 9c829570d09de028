# docs.sh - end-to-end tests of the documentation's links
# (scripts/check-docs.sh): the tree's own README.md, HACKING.md,
# bench/README.md and docs/ hold, and a copy broken on purpose is refused
# with the exact message, so the check is seen to fail. Sourced by run.sh
# after lib.sh; run from the repository root.

# A copy of the documentation (not the code) to break.
docs_copy() {
	docs_dir=$(mktemp -d "$E2E_TMP/docs.XXXXXX")
	cp -R README.md HACKING.md docs man examples templates "$docs_dir/"
	mkdir -p "$docs_dir/bench" && cp bench/README.md "$docs_dir/bench/"
}

docs_tests() {
	cd "$E2E_ROOT" || return
	check "docs: every link of the README, HACKING.md, bench/ and docs/ holds; every man page is linked" 0 \
		--out "" --err "" -- scripts/check-docs.sh .

	docs_copy
	sed 's#(docs/tutorial.md)#(docs/tutorials.md)#' README.md >"$docs_dir/README.md"
	check "docs: a README link to a missing guide is refused, naming it" 1 \
		--out-has "README.md:" --out-has ": docs/tutorials.md: no such file" \
		-- scripts/check-docs.sh "$docs_dir"

	docs_copy
	sed 's#(man/kiln-ttl.1)#(man/kiln-ttl.8)#g' README.md >"$docs_dir/README.md"
	check "docs: a man page the README does not link is refused, naming it" 1 \
		--out-has ": man/kiln-ttl.8: no such file" \
		--out-has "README.md: man/kiln-ttl.1 is not linked" \
		-- scripts/check-docs.sh "$docs_dir"

	docs_copy
	sed 's#(state-and-locks.md\#sensitive-values)#(state-and-locks.md\#sensitive-value)#' \
		docs/tutorial.md >"$docs_dir/docs/tutorial.md"
	check "docs: a link inside docs/ to a missing heading is refused, naming it" 1 \
		--out-has ": state-and-locks.md#sensitive-value: no heading '#sensitive-value' in docs/state-and-locks.md" \
		-- scripts/check-docs.sh "$docs_dir"

	docs_copy
	docs_line=$(($(wc -l <docs/sim.md) + 2))
	printf '\nSee [the guide](../docs/nowhere.md).\n' >>"$docs_dir/docs/sim.md"
	check "docs: a relative link inside docs/ to a missing file is refused" 1 \
		--out "docs/sim.md:$docs_line: ../docs/nowhere.md: no such file" \
		-- scripts/check-docs.sh "$docs_dir"
}
