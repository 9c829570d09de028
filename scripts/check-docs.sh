#!/bin/sh
# check-docs.sh [ROOT] - the links of kiln's documentation hold.
#
#   - every relative link in README.md, HACKING.md, bench/README.md and
#     docs/*.md names a file that exists, and its #anchor, when it names a
#     Markdown file, a heading there (GitHub's rule: lower case, punctuation
#     dropped, spaces to '-', a repeated heading gets -1, -2...);
#   - every man page under man/ is linked from README.md.
#
# Prints one line per problem, "FILE:LINE: ...", and exits 1 if there is any.
# Run by the end-to-end tests (tests/e2e/run.sh) and `make check-docs`.
set -u

root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2

# anchors FILE: the anchors of a Markdown file's headings, one a line.
anchors() {
	awk '
	/^```/ { fence = !fence; next }
	fence || !/^#+ / { next }
	{
		h = $0
		sub(/^#+ +/, "", h)
		h = tolower(h)
		gsub(/[^a-z0-9_ -]/, "", h)
		gsub(/ /, "-", h)
		n = seen[h]++
		print (n ? h "-" n : h)
	}' "$1"
}

# links FILE: "LINE TARGET" for every inline link outside code blocks.
links() {
	awk '
	/^```/ { fence = !fence; next }
	fence { next }
	{
		s = $0
		while (match(s, /\]\([^) ]+\)/)) {
			print NR, substr(s, RSTART + 2, RLENGTH - 3)
			s = substr(s, RSTART + RLENGTH)
		}
	}' "$1"
}

problems=0
problem() {
	printf '%s\n' "$1"
	problems=$((problems + 1))
}

for f in README.md HACKING.md bench/README.md docs/*.md; do
	[ -f "$f" ] || { problem "$f: missing"; continue; }
	dir=$(dirname "$f")
	links "$f" >"${TMPDIR:-/tmp}/check-docs.$$"
	while read -r line target; do
		case $target in
		http://* | https://* | mailto:*) continue ;;
		esac
		path=${target%%#*}
		anchor=
		case $target in *'#'*) anchor=${target#*#} ;; esac
		if [ -z "$path" ]; then
			file=$f
		else
			file=$dir/$path
			if [ ! -e "$file" ]; then
				problem "$f:$line: $target: no such file"
				continue
			fi
		fi
		if [ -n "$anchor" ]; then
			case $file in
			*.md) anchors "$file" | grep -qxF "$anchor" ||
				problem "$f:$line: $target: no heading '#$anchor' in $file" ;;
			esac
		fi
	done <"${TMPDIR:-/tmp}/check-docs.$$"
	rm -f "${TMPDIR:-/tmp}/check-docs.$$"
done

for m in man/*.[1-8]; do
	[ -e "$m" ] || continue
	grep -qF "](${m})" README.md || problem "README.md: $m is not linked"
done

[ "$problems" -eq 0 ]
