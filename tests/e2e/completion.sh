# completion.sh - end-to-end tests of `kiln completion`: the bash script is
# sourced into a real bash and its function called at several word positions
# (COMP_WORDS/COMP_CWORD, then COMPREPLY), workspace, template and group names
# come from kiln at TAB time, every option `kiln help CMD` lists completes, the
# scripts pass shellcheck, `zsh -n` and `fish --no-execute`, fish's own
# `complete -C` answers from its script, and every bad-input message. Sourced
# by run.sh after lib.sh; $KILN is the binary.
# shellcheck disable=SC2016 # the sh -c and bash -c scripts expand their own arguments

# comp_bash WORD...: the bash script's completions, one a line, for the last
# WORD (the word under the cursor; '' for an empty one) of `kiln WORD...`.
comp_bash() {
	bash -c 'source <("$0" completion bash) || exit 9
		COMP_WORDS=("$0" "$@")
		COMP_CWORD=$#
		_kiln
		printf "%s\n" "${COMPREPLY[@]}"' "$KILN" "$@"
}

# comp_lines TEXT...: TEXT one a line, the output a check wants.
comp_lines() {
	printf '%s\n' "$@"
}

# comp_options_drift: each command's options as `kiln help CMD` prints them,
# against the words the bash script offers after `kiln CMD -`; prints what
# differs, nothing when every command agrees.
comp_options_drift() {
	for cmd in $("$KILN" --help | sed -n 's/^  \([a-z-]*\)  .*/\1/p'); do
		"$KILN" help "$cmd" | sed -n 's/^  \(-[a-zA-Z], \|    \)\(--[a-z][a-z-]*\).*/\2/p' |
			LC_ALL=C sort -u >"$E2E_TMP/.help-opts"
		comp_bash "$cmd" - | grep -- '^--' | LC_ALL=C sort -u >"$E2E_TMP/.comp-opts"
		diff "$E2E_TMP/.help-opts" "$E2E_TMP/.comp-opts" | sed "s/^/$cmd: /" | grep -- ': [<>]'
	done
	return 0
}

completion_bash_tests() {
	check "completion: bash: the script registers _kiln for kiln" 0 \
		--out "complete -F _kiln kiln" --err "" \
		-- bash -c 'source <("$0" completion bash) && complete -p kiln' "$KILN"
	check "completion: bash: the script passes shellcheck" 0 --err "" \
		-- sh -c '"$0" completion bash | shellcheck -s bash -' "$KILN"
	check "completion: bash: the first word completes to commands" 0 \
		--out "$(comp_lines validate)" --err "" -- comp_bash va
	check "completion: bash: after a global option's value, commands still" 0 \
		--out "$(comp_lines status state)" --err "" -- comp_bash -C /tmp sta
	check "completion: bash: a command's options, from its option table" 0 \
		--out "$(comp_lines --template)" --err "" -- comp_bash init --te
	check "completion: bash: an option's words from its argument name" 0 \
		--out "$(comp_lines text json sarif)" --err "" -- comp_bash audit --format ''
	check "completion: bash: the same after --format= (= is a word of its own)" 0 \
		--out "$(comp_lines json)" --err "" -- comp_bash audit --format = j
	check "completion: bash: subcommands" 0 \
		--out "$(comp_lines list show rm pull push rekey takeover)" --err "" -- comp_bash state ''
	check "completion: bash: kiln help completes command names" 0 \
		--out "$(comp_lines plan)" --err "" -- comp_bash help pl
	check "completion: bash: completion's own shells" 0 \
		--out "$(comp_lines bash zsh fish)" --err "" -- comp_bash completion ''
	check "completion: bash: template names from kiln init --list" 0 \
		--out "$(comp_lines finetune inference llm-pretrain sim-demo slurm-pretrain)" --err "" \
		-- comp_bash init --template ''
	check "completion: bash: groups of the spec given with --spec" 0 \
		--out "$(comp_lines trainers)" --err "" \
		-- comp_bash ssh --spec "$E2E_ROOT/examples/quickstart.yaml" ''
	check "completion: bash: groups of a .yaml operand, after --group" 0 \
		--out "$(comp_lines trainers)" --err "" \
		-- comp_bash user-data "$E2E_ROOT/examples/quickstart.yaml" --group ''

	comp_dir=$(mktemp -d "$E2E_TMP/completion.XXXXXX")
	(cd "$comp_dir" && "$KILN" workspace new staging >/dev/null && "$KILN" workspace new prod >/dev/null)
	check "completion: bash: workspace names from kiln workspace list" 0 \
		--out "$(comp_lines prod staging)" --err "" \
		-- comp_bash_at "$comp_dir" status -w ''
	cp "$E2E_ROOT/examples/quickstart.yaml" "$comp_dir/kiln.yaml"
	check "completion: bash: groups of ./kiln.yaml when the line names no spec" 0 \
		--out "$(comp_lines trainers)" --err "" \
		-- comp_bash_at "$comp_dir" hosts ''

	comp_options_drift >"$E2E_TMP/.drift"
	check "completion: bash: every command completes exactly the options its help lists" 0 \
		--out "" -- cat "$E2E_TMP/.drift"
}

completion_other_shell_tests() {
	if command -v zsh >/dev/null 2>&1; then
		check "completion: zsh: the script parses (zsh -n)" 0 --out "" --err "" \
			-- sh -c '"$0" completion zsh >"$1/_kiln" && zsh -n "$1/_kiln"' "$KILN" "$E2E_TMP"
		check "completion: zsh: the script is a #compdef function for kiln" 0 \
			--out-has "#compdef kiln" -- "$KILN" completion zsh
		check "completion: zsh: TAB in a real zsh completes a command's option" 0 \
			--out "--template" -- comp_zsh 'kiln init --te'
		check "completion: zsh: TAB after --template offers the templates" 0 \
			--out "$(comp_lines finetune inference llm-pretrain sim-demo slurm-pretrain)" \
			-- comp_zsh 'kiln init --template '
		check "completion: zsh: TAB after kiln state offers its subcommands" 0 \
			--out "$(comp_lines list pull push rekey rm show takeover)" -- comp_zsh 'kiln state '
		check "completion: zsh: TAB after --spec FILE offers its groups" 0 \
			--out "trainers" -- comp_zsh 'kiln ssh --spec examples/quickstart.yaml '
	else
		fail "completion: zsh: zsh is not installed (scripts/deps.sh installs it)"
	fi
	if command -v fish >/dev/null 2>&1; then
		check "completion: fish: the script parses (fish --no-execute)" 0 --out "" --err "" \
			-- sh -c '"$0" completion fish >"$1/kiln.fish" && fish --no-execute "$1/kiln.fish"' \
			"$KILN" "$E2E_TMP"
		check "completion: fish: complete -C offers a command's options from its script" 0 \
			--out-has "--template${TAB}" --err "" \
			-- fish -c 'source $argv[1]; complete -C "kiln init --te"' "$E2E_TMP/kiln.fish"
		check "completion: fish: template names from kiln init --list" 0 \
			--out-has "sim-demo" --err "" \
			-- fish -c 'source $argv[1]; complete -C "$argv[2] init --template "' \
			"$E2E_TMP/kiln.fish" "$KILN"
		check "completion: fish: subcommands of kiln state" 0 \
			--out "$(comp_lines list pull push rekey rm show takeover)" --err "" \
			-- fish -c 'source $argv[1]; complete -C "kiln state "' "$E2E_TMP/kiln.fish"
	else
		fail "completion: fish: fish is not installed (scripts/deps.sh installs it)"
	fi
}

completion_error_tests() {
	check "completion: no shell named is refused with an example" 1 --out "" \
		--err "kiln: completion: which shell: bash, zsh or fish?; for example: source <(kiln completion bash)" \
		-- "$KILN" completion
	check "completion: a misspelt shell gets did-you-mean" 1 --out "" \
		--err "kiln: completion: kiln completes bash, zsh and fish, not 'bsh'; did you mean 'bash'?" \
		-- "$KILN" completion bsh
	check "completion: a shell kiln does not complete names the three" 1 --out "" \
		--err "kiln: completion: kiln completes bash, zsh and fish, not 'powershell'; use bash, zsh or fish" \
		-- "$KILN" completion powershell
	check "completion: --groups takes at most one spec" 1 --out "" \
		--err "kiln: completion: --groups takes at most one SPEC, got 2; give one spec, or none for kiln.yaml" \
		-- "$KILN" completion --groups a.yaml b.yaml
	check "completion: --groups of an unreadable spec prints nothing, quietly" 0 --out "" --err "" \
		-- "$KILN" completion --groups "$E2E_TMP/no-such.yaml"
}

# comp_zsh LINE: what a real zsh offers for TAB after LINE, kiln on PATH.
comp_zsh() {
	mkdir -p "$E2E_TMP/comp-path" && ln -sf "$KILN" "$E2E_TMP/comp-path/kiln"
	PATH=$E2E_TMP/comp-path:$PATH zsh -f tests/e2e/completion_zsh.zsh "$E2E_TMP" "$1"
}

# comp_bash_at DIR WORD...: comp_bash run in DIR, for its state and kiln.yaml.
comp_bash_at() {
	(cd "$1" && shift && comp_bash "$@")
}

completion_tests() {
	cd "$E2E_ROOT" || return
	TAB=$(printf '\t')
	completion_bash_tests
	completion_other_shell_tests
	completion_error_tests
}
