# init.sh - end-to-end tests of `kiln init` and the templates compiled into
# kiln: each template into a fresh directory, then validate, plan (aws ones
# with dummy credentials and --refresh=false, so nothing is sent anywhere),
# audit, and on sim-demo an apply; the defaults, the next steps, refusing to
# overwrite a spec (and then writing nothing at all), .gitignore handling, and
# every bad-input message. Sourced by run.sh after lib.sh; $KILN is the binary.

# A fresh empty directory, made the current one.
in_new_dir() {
	in_dir=$(mktemp -d "$E2E_TMP/init.XXXXXX")
	cd "$in_dir" || exit 1
	# Each directory its own user's configuration directory, for the state key.
	XDG_CONFIG_HOME=$in_dir.config
	in_key=$XDG_CONFIG_HOME/kiln/state.key
	in_key_made="created state key $in_key (mode 0600); keep a copy: the secrets sealed in the state open only with it"
	in_key_kept="state key $in_key already exists; left as it is"
}

# in_listing DIR: every path under DIR with its type and content digest, for
# "nothing was written" checks.
in_listing() {
	(cd "$1" && find . -print | LC_ALL=C sort | while IFS= read -r p; do
		if [ -f "$p" ]; then
			printf '%s %s\n' "$p" "$(cksum <"$p")"
		else
			printf '%s\n' "$p"
		fi
	done)
}

# in_refuses NAME WANT_ERR ARGS...: init exits 1 with exactly WANT_ERR on
# stderr and nothing on stdout, and the current directory is unchanged.
# $IN_ENV, when set, holds NAME=VALUE words to run it with.
in_refuses() {
	in_name=$1
	in_err=$2
	shift 2
	in_listing . >"$E2E_TMP/.init-before"
	# shellcheck disable=SC2086 # IN_ENV: NAME=VALUE words for env, or nothing
	check "$in_name" 1 --out "" --err "$in_err" -- env ${IN_ENV:-} "$KILN" init "$@"
	in_listing . >"$E2E_TMP/.init-after"
	compare "$in_name: nothing was written" "$E2E_TMP/.init-before" "$E2E_TMP/.init-after" \
		"the directory"
}

# Dummy credentials and an endpoint on loopback that nothing listens on: a
# plan with --refresh=false must not need either.
in_aws() {
	env -u AWS_PROFILE AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE \
		AWS_SECRET_ACCESS_KEY=e2e-dummy-secret AWS_ENDPOINT_URL=http://127.0.0.1:9 \
		HOME="$E2E_TMP" "$@"
}

in_list() {
	in_new_dir
	check "init: --list prints each template, its provider and its summary" 0 --err "" \
		--out "finetune        aws  Fine-tuning on AWS: one node of 4 x L40S, a bucket for datasets and one for the tuned weights
inference       aws  Inference on AWS: 2 nodes of 1 x L4, no fabric, model weights read from a bucket
llm-pretrain    aws  Multi-node LLM pre-training on AWS: 4 x 8 H100 on EFA, Lustre scratch over the dataset bucket
sim-demo        sim  A first cluster on the simulated sim provider: 2 x 8 H100 on EFA and a checkpoint bucket
slurm-pretrain  aws  Multi-node LLM pre-training under Slurm on AWS: 4 x 8 H100 on EFA, sbatch from the login node" \
		-- "$KILN" init --list
	cp "$E2E_OUT" "$E2E_TMP/.init-list"
	# The summaries are the templates' first lines, whatever the list's layout.
	for f in "$E2E_ROOT"/templates/*.yaml; do
		t=${f##*/}
		t=${t%.yaml}
		assert "init: --list shows $t with its first comment line" \
			grep -qF "$(sed -n '1s/^# //p' "$f")" "$E2E_TMP/.init-list"
	done
	check "init: --list --provider sim lists the sim templates only" 0 --err "" \
		--out "sim-demo        sim  A first cluster on the simulated sim provider: 2 x 8 H100 on EFA and a checkpoint bucket" \
		-- "$KILN" init --list --provider sim
	assert "init: --list writes nothing" sh -c '[ -z "$(ls -A)" ]'
}

in_each_template() {
	for f in "$E2E_ROOT"/templates/*.yaml; do
		t=${f##*/}
		t=${t%.yaml}
		p=$(awk '/^provider:/ { p = 1; next } p && $1 == "name:" { print $2; exit }' "$f")
		in_new_dir
		check "init: $t into a new directory" 0 --err "" \
			--out "created proj/kiln.yaml from template '$t' (provider $p)
created proj/.gitignore, which ignores .kiln/
created workspace 'default' in proj/.kiln/state.git
$in_key_made" \
			-- env CI=true "$KILN" init --template "$t" proj
		compare "init: $t: kiln.yaml is the template, byte for byte" "$f" proj/kiln.yaml
		printf '.kiln/\n' >"$E2E_TMP/.want-ignore"
		compare "init: $t: .gitignore ignores .kiln/" "$E2E_TMP/.want-ignore" proj/.gitignore
		check "init: $t: the workspace exists" 0 --out "* default" --err "" \
			-- "$KILN" -C proj workspace list
		check "init: $t: its creation is one commit" 0 \
			--out-has "init: workspace default, from template $t" -- "$KILN" -C proj log
		check "init: $t validates" 0 --out "ok kiln.yaml" --err "" -- "$KILN" -C proj validate
		# Only inference warns (its header says why): KILN-GPU-002, servers without EFA.
		findings="No findings: kiln.yaml passes every rule in kiln-rules(7)."
		[ "$t" = inference ] &&
			findings="Findings: 0 errors, 1 warning, 0 info, 0 waived
*  warning  KILN-GPU-002    compute.servers: 2 GPU nodes without EFA"
		if [ "$p" = aws ]; then
			check "init: $t plans with --refresh=false" 2 \
				--out-has "kiln plan: $t/default on aws" --out-has " to create, 0 to update" \
				-- in_aws "$KILN" -C proj plan --refresh=false --detailed-exitcode
			check "init: $t: audit finds no error" 0 --err "" \
				--out-has "${findings%%"$NL"*}" --out-has "${findings#*\*}" \
				-- in_aws "$KILN" -C proj audit --refresh=false
		else
			check "init: $t plans with --refresh=false" 2 \
				--out-has "kiln plan: $t/default on sim" --out-has " to create, 0 to update" \
				-- "$KILN" -C proj plan --refresh=false --detailed-exitcode
			check "init: $t: audit finds no error" 0 --err "" \
				--out-has "${findings%%"$NL"*}" --out-has "${findings#*\*}" \
				-- "$KILN" -C proj audit --refresh=false
		fi
		# The cost its header states is the one kiln computes.
		want=$(sed -n 's/.*: \(\$[0-9,.]*\) an hour.*/\1/p' "$f" | head -n 1)
		if [ "$p" = aws ]; then
			check "init: $t costs what its header says ($want an hour)" 0 \
				--out-has "Total" --out-has "$want" \
				-- in_aws "$KILN" -C proj cost --refresh=false
		else
			check "init: $t costs what its header says ($want an hour)" 0 \
				--out-has "Total" --out-has "$want" -- "$KILN" -C proj cost --refresh=false
		fi
		assert "init: $t: the header's hourly figure is the plan's total" \
			sh -c 'grep "^Total" "$1" | grep -qF "$2"' sh "$E2E_OUT" "$want"
	done
	cd "$E2E_ROOT" || exit 1
}

in_sim_demo_apply() {
	in_new_dir
	check "init: sim-demo by default, with the next steps" 0 --err "" \
		--out "created kiln.yaml from template 'sim-demo' (provider sim)
created .gitignore, which ignores .kiln/
created workspace 'default' in .kiln/state.git
$in_key_made

Next steps:
  kiln validate      check the spec
  kiln plan          see what would be made and what it costs an hour
  kiln up            create it (plan and apply); \`kiln down\` removes it" \
		-- "$KILN" init
	check "init: sim-demo: status before the first apply says there is no cluster yet" 1 --out "" \
		--err "kiln: status: workspace 'default' has no cluster yet: nothing has been applied; bring it up with \`kiln up\`" \
		-- "$KILN" status
	check "init: sim-demo: plan" 2 --out-has "Plan: 6 to create, 0 to update" \
		-- "$KILN" plan --detailed-exitcode
	assert "init: the state key is private to its owner" \
		sh -c '[ "$(stat -c %a "$1")" = 600 ]' sh "$in_key"
	assert "init: the state key is outside the project" sh -c '! grep -rq "$(cat "$1")" .' sh "$in_key"
	check "init: sim-demo: apply --auto-approve creates it, warning about nothing" 0 --err "" \
		--out-has "Apply complete: 6 created, 0 updated, 0 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve
	check "init: sim-demo: the secret is recorded, sealed with init's key" 0 \
		--out-has '"kiln_sealed": "AES-256-GCM"' -- "$KILN" state pull
	check "init: sim-demo: the key init made opens it" 0 --err "" \
		--out-has '"join_token":"' -- "$KILN" state show --show-sensitive sim_node_group.trainers
	assert "init: sim-demo: that value is shown opened" sh -c '! grep -q "(sensitive)" "$1"' sh "$E2E_OUT"
	check "init: sim-demo: then nothing is left to do" 0 \
		--out-has "No changes." -- "$KILN" plan --detailed-exitcode
	check "init: sim-demo: apply's commit follows init's" 0 \
		--out-has "init: workspace default, from template sim-demo" \
		--out-has "apply: 6 created" -- "$KILN" log
	check "init: sim-demo: destroy takes it down" 0 --out-has "Destroy complete" \
		-- "$KILN" destroy --auto-approve
	cd "$E2E_ROOT" || exit 1
}

in_defaults() {
	in_new_dir
	check "init: --provider aws starts from finetune; next steps with cd and the edit" 0 \
		--err "" --out "created a/kiln.yaml from template 'finetune' (provider aws)
created a/.gitignore, which ignores .kiln/
created workspace 'default' in a/.kiln/state.git
$in_key_made

Next steps:
  cd a
  \$EDITOR kiln.yaml  its header says what to change (vars: image AMI, addresses)
  kiln validate      check the spec
  kiln plan          see what would be made and what it costs an hour
  kiln up            create it (plan and apply); \`kiln down\` removes it" \
		-- "$KILN" init --provider aws a
	compare "init: --provider aws wrote finetune" "$E2E_ROOT/templates/finetune.yaml" a/kiln.yaml
	check "init: --provider sim starts from sim-demo" 0 --err "" \
		--out "created s/kiln.yaml from template 'sim-demo' (provider sim)
created s/.gitignore, which ignores .kiln/
created workspace 'default' in s/.kiln/state.git
$in_key_kept" \
		-- env KILN_IN_AUTOMATION=1 "$KILN" init --provider sim s
	check "init: --template with an agreeing --provider" 0 --err "" \
		--out-has "created l/kiln.yaml from template 'llm-pretrain' (provider aws)" \
		-- env CI=true "$KILN" init --provider aws --template llm-pretrain l
	check "init: a nested DIR is created" 0 --err "" \
		--out-has "created x/y/z/kiln.yaml from template 'sim-demo' (provider sim)" \
		-- env CI=true "$KILN" init x/y/z
	assert "init: the nested DIR holds the spec" test -f x/y/z/kiln.yaml
	check "init: -w names the workspace" 0 --err "" \
		--out-has "created workspace 'dev' in w/.kiln/state.git" \
		-- env CI=true "$KILN" init -w dev w
	check "init: -w: the workspace is there" 0 --out "* dev" -- "$KILN" -C w workspace list -w dev
	mkdir s2
	check "init: -C DIR then init" 0 --err "" \
		--out-has "created kiln.yaml from template 'sim-demo' (provider sim)" \
		-- env CI=true "$KILN" -C s2 init
	assert "init: -C DIR wrote into DIR" test -f s2/kiln.yaml -a -d s2/.kiln/state.git
	cd "$E2E_ROOT" || exit 1
}

in_key_choices() {
	in_new_dir
	check "init: KILN_STATE_KEY set: no key file is made" 0 --err "" \
		--out-has "state key: KILN_STATE_KEY is set, so kiln uses that key; no key file made" \
		-- env CI=true KILN_STATE_KEY="$(openssl rand -base64 32)" "$KILN" init
	assert "init: KILN_STATE_KEY set: no key file" test ! -e "$in_key"
	in_new_dir
	check "init: KILN_STATE_KEY_FILE set: no key file is made" 0 --err "" \
		--out-has "state key: KILN_STATE_KEY_FILE is set, so kiln uses that key; no key file made" \
		-- env CI=true KILN_STATE_KEY_FILE=/nonexistent "$KILN" init
	in_new_dir
	env CI=true KILN_STATE_KEY_FILE=/nonexistent "$KILN" init >/dev/null
	rm kiln.yaml
	check "init: never a key inside the state repository" 1 --out "" \
		--err "kiln: init: the state key $in_dir/.kiln/state.git/cfg/kiln/state.key would be inside the state repository $in_dir/.kiln/state.git, next to the secrets it seals; point XDG_CONFIG_HOME elsewhere, or set KILN_STATE_KEY_FILE to a key outside it" \
		-- env XDG_CONFIG_HOME="$in_dir/.kiln/state.git/cfg" "$KILN" init
	assert "init: no key was made there" test ! -e .kiln/state.git/cfg/kiln/state.key
	assert "init: nor the spec" test ! -e kiln.yaml
	cd "$E2E_ROOT" || exit 1
}

in_refusals() {
	in_new_dir
	printf 'kiln: 1\ncluster: mine\nprovider: {name: sim}\n' >kiln.yaml
	in_refuses "init: refuses to overwrite kiln.yaml" \
		"kiln: init: kiln.yaml already exists, and init never overwrites a spec; move it away first, or init another directory"
	in_refuses "init: refuses to overwrite kiln.yaml with --template" \
		"kiln: init: kiln.yaml already exists, and init never overwrites a spec; move it away first, or init another directory" \
		--template llm-pretrain
	mkdir d && cp kiln.yaml d/ && printf 'build/\n' >d/.gitignore
	in_refuses "init: refuses to overwrite DIR/kiln.yaml" \
		"kiln: init: d/kiln.yaml already exists, and init never overwrites a spec; move it away first, or init another directory" \
		--provider aws d

	in_new_dir
	in_refuses "init: a misspelled template suggests the closest and lists them all" \
		"kiln: init: there is no template 'llm-pretrian'; did you mean 'llm-pretrain'? The templates are finetune, inference, llm-pretrain, sim-demo and slurm-pretrain (kiln init --list)" \
		--template llm-pretrian
	in_refuses "init: an unknown template lists them all" \
		"kiln: init: there is no template 'gpt'; the templates are finetune, inference, llm-pretrain, sim-demo and slurm-pretrain (kiln init --list)" \
		--template gpt proj
	in_refuses "init: an aws template with --provider sim names both" \
		"kiln: init: template 'llm-pretrain' is for provider aws, not sim; drop --provider sim, or choose one of the sim templates: sim-demo" \
		--template llm-pretrain --provider sim
	in_refuses "init: the sim template with --provider aws names both" \
		"kiln: init: template 'sim-demo' is for provider sim, not aws; drop --provider aws, or choose one of the aws templates: finetune, inference, llm-pretrain, slurm-pretrain" \
		--provider aws --template sim-demo proj
	in_refuses "init: an unknown provider" \
		"kiln: init: --provider 'gcp' is not a provider; use aws or sim" --provider gcp
	in_refuses "init: a misspelled provider" \
		"kiln: init: --provider 'awz' is not a provider; did you mean 'aws'?" --provider awz
	in_refuses "init: --list with a DIR" \
		"kiln: init: --list takes no --template and no DIR; use \`kiln init --list [--provider aws|sim]\`" \
		--list proj
	in_refuses "init: two DIRs" "kiln: init: takes at most one DIR, got 2" a b
	in_refuses "init: a bad workspace name" \
		"kiln: init: '-x' is not a workspace name; use 1 to 64 of letters, digits, '.', '_' and '-', not starting with '.' or '-', and neither HEAD nor only hex digits" \
		-w -x proj
	IN_ENV=KILN_WORKSPACE=beef
	in_refuses "init: a bad KILN_WORKSPACE" \
		"kiln: init: 'beef' is not a workspace name; use 1 to 64 of letters, digits, '.', '_' and '-', not starting with '.' or '-', and neither HEAD nor only hex digits" \
		--template sim-demo proj
	IN_ENV=
	in_refuses "init: an unknown option" \
		"kiln: init: unknown option '--tempalte'; did you mean '--template'?" --tempalte sim-demo
	: >afile
	in_refuses "init: DIR is a file" \
		"kiln: init: afile is not a directory; pass a directory (kiln init creates a missing one)" \
		afile
	rm -f afile
	mkdir .gitignore
	in_refuses "init: a .gitignore that is not a file" \
		"kiln: init: .gitignore is not a regular file; make it a file, or remove it"
	cd "$E2E_ROOT" || exit 1
}

in_gitignore() {
	in_new_dir
	printf 'node_modules/\n*.log' >.gitignore
	check "init: .kiln/ is appended to a .gitignore without it" 0 --err "" \
		--out "created kiln.yaml from template 'sim-demo' (provider sim)
added .kiln/ to .gitignore
created workspace 'default' in .kiln/state.git
$in_key_made" -- env CI=true "$KILN" init
	printf 'node_modules/\n*.log\n.kiln/\n' >"$E2E_TMP/.want-ignore"
	compare "init: the other lines are kept, a missing final newline added" \
		"$E2E_TMP/.want-ignore" .gitignore

	in_new_dir
	printf '# build\nbuild/\n' >.gitignore
	check "init: appended after a final newline" 0 --err "" --out-has "added .kiln/ to .gitignore" \
		-- env CI=true "$KILN" init
	printf '# build\nbuild/\n.kiln/\n' >"$E2E_TMP/.want-ignore"
	compare "init: .gitignore gains exactly one line" "$E2E_TMP/.want-ignore" .gitignore

	in_new_dir
	printf 'build/\n/.kiln\n' >.gitignore
	cp .gitignore "$E2E_TMP/.want-ignore"
	check "init: a .gitignore that ignores .kiln already is left alone" 0 --err "" \
		--out-has ".gitignore already ignores .kiln/" -- env CI=true "$KILN" init
	compare "init: that .gitignore is unchanged" "$E2E_TMP/.want-ignore" .gitignore

	# kiln.yaml removed, the state kept: init again keeps the workspace.
	rm kiln.yaml
	check "init: an existing workspace is left as it is" 0 --err "" \
		--out "created kiln.yaml from template 'sim-demo' (provider sim)
.gitignore already ignores .kiln/
workspace 'default' already exists in .kiln/state.git; left as it is
$in_key_kept" \
		-- env CI=true "$KILN" init
	n=$("$KILN" log | grep -c "init: workspace default")
	assert "init: a second init adds no commit" test "$n" = 1
	cd "$E2E_ROOT" || exit 1
}

in_help() {
	check "init: kiln help init" 0 --err "" \
		--out-has "Usage: kiln init [--template NAME] [--provider aws|sim] [--json] [DIR]" \
		--out-has "--list" -- "$KILN" help init
	check "init: kiln --help lists init as a command" 0 \
		--out-has "  init           start a project from a template: kiln.yaml, .gitignore, state" \
		-- "$KILN" --help
	assert "init: init is no longer reserved" sh -c \
		'! "$1" --help | sed -n "/^Reserved/,/^\$/p" | grep -q "^  init "' sh "$KILN"
}

init_tests() {
	in_config=$XDG_CONFIG_HOME
	in_list
	in_each_template
	in_sim_demo_apply
	in_defaults
	in_key_choices
	in_refusals
	in_gitignore
	in_help
	XDG_CONFIG_HOME=$in_config
}
