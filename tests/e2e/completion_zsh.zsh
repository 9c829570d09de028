# completion_zsh.zsh SCRIPT_DIR LINE: what a real interactive zsh offers for
# TAB at the end of LINE, with the _kiln in SCRIPT_DIR loaded by compinit:
# the matches, sorted, one a line. The zsh runs on a pseudo-terminal
# (zsh/zpty); compadd is wrapped to write every match it is given to a file,
# since the terminal's redrawing is no output to compare. `kiln` is found on
# PATH. Used by tests/e2e/completion.sh.
zmodload zsh/zpty || exit 2
out=$(mktemp)
zpty comp "zsh -f -i"
zpty -w comp "fpath=($1 \$fpath); autoload -U compinit; compinit -u -D"
zpty -w comp "compadd() { local -a m; builtin compadd -O m \"\$@\"; print -rl -- \$m >>$out; builtin compadd \"\$@\"; }"
zpty -w comp "$2"$'\t'
# Completion runs kiln for dynamic names: give it time, then end the shell.
for i in {1..20}; do
	[[ -s $out ]] && break
	sleep 0.2
done
sleep 0.5
zpty -d comp
grep -v '^$' "$out" | LC_ALL=C sort -u
rm -f "$out"
