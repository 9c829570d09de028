# approve.sh - end-to-end tests of approvals on the sim provider: kiln
# approve signs a saved plan, kiln show lists the approvals, and kiln apply
# --require-approvals applies only a plan with enough valid approvals from
# trusted keys, refusing, before it takes a lock or calls anything, a plan
# without them, one approved by an unknown key, and one changed after it was
# approved. Keys are made with openssl, as a user would. Sourced by run.sh
# after lib.sh; $KILN is the binary under test.

ap_py() { # SCRIPT ARGS...: run a python snippet from approve_py.py
	python3 "$E2E_ROOT/tests/e2e/approve_py.py" "$@"
}

ap_keys() { # make alice, bob and mallory (Ed25519, openssl); trust alice and bob
	mkdir trusted
	for who in alice bob mallory; do
		openssl genpkey -algorithm ed25519 -out $who.key 2>/dev/null
		chmod 600 $who.key
		openssl pkey -in $who.key -pubout -out $who.pub 2>/dev/null
	done
	cp alice.pub bob.pub trusted/
	printf 'The approvers of the quickstart cluster.\n' >trusted/README
}

ap_key_id() { # PUBFILE: sha256: and the hex SHA-256 of its DER SubjectPublicKeyInfo
	printf 'sha256:%s' "$(openssl pkey -pubin -in "$1" -outform DER | sha256sum | cut -d' ' -f1)"
}

ap_sign_and_show() {
	en_new_dir examples/quickstart.yaml
	ap_keys
	"$KILN" plan --out p.kiln >/dev/null 2>&1
	digest=$(ap_py digest p.kiln)

	check "approve: signs a plan with an openssl Ed25519 key" 0 \
		--out-has "Approved p.kiln as alice at " \
		--out-has "with key $(ap_key_id alice.pub)." \
		--out-has "Digest: $digest" \
		--out-has "Plan: 5 to create, 0 to update, 0 to replace, 0 to delete, 0 to adopt." \
		--out-has "The plan file holds 1 approval." --err "" \
		-- "$KILN" approve p.kiln --key alice.key --signer alice
	assert "approve: the plan and its digest are unchanged" \
		test "$(ap_py digest p.kiln)" = "$digest"
	assert "approve: the plan file stays private (0600)" \
		sh -c '[ "$(stat -c %a p.kiln)" = 600 ]'
	assert "approve: the approval names the key by the SHA-256 of its DER public key" \
		test "$(ap_py field p.kiln 0 key_id)" = "$(ap_key_id alice.pub)"
	ap_py message p.kiln 0 msg.bin sig.bin
	check "approve: openssl verifies the signature over the documented message" 0 \
		--out "Signature Verified Successfully" \
		-- openssl pkeyutl -verify -pubin -inkey alice.pub -rawin -in msg.bin -sigfile sig.bin
	assert "approve: the plan file still validates (tests/check-plan-schema.py)" \
		python3 "$E2E_ROOT/tests/check-plan-schema.py" p.kiln
	check "approve: the same key again replaces its approval" 0 \
		--out-has "The plan file holds 1 approval (this key's earlier one was replaced)." \
		-- "$KILN" approve p.kiln --key alice.key --signer alice
	check "approve: the signer defaults to KILN_AUTHOR" 0 \
		--out-has "Approved p.kiln as E2E <e2e@example.com> at " \
		--out-has "The plan file holds 2 approvals." \
		-- "$KILN" approve p.kiln --key mallory.key
	assert "approve: the default signer is recorded" \
		test "$(ap_py field p.kiln 1 signer)" = "E2E <e2e@example.com>"

	t_alice=$(ap_py field p.kiln 0 time)
	t_mallory=$(ap_py field p.kiln 1 time)
	id_alice=$(ap_key_id alice.pub)
	id_mallory=$(ap_key_id mallory.pub)
	check "show: a plan file's approvals follow the plan" 0 \
		--out-has "  + sim_node_group.trainers  create" \
		--out-has "Approvals: 2 (2 with a valid signature, from distinct keys; trust not checked: give --trusted-keys DIR)" \
		--out-has "  1. alice at $t_alice, key $id_alice: valid signature; trust not checked" \
		-- "$KILN" show p.kiln
	check "show: --approvals --trusted-keys says which keys are trusted" 0 --err "" \
		--out "Approvals: 2 (1 valid, from distinct keys trusted in trusted)
  1. alice at $t_alice, key $id_alice: valid, by trusted key alice.pub
  2. E2E <e2e@example.com> at $t_mallory, key $id_mallory: unknown key: no *.pub file in trusted holds it" \
		-- "$KILN" show p.kiln --approvals --trusted-keys trusted
	check "show: KILN_TRUSTED_KEYS stands for --trusted-keys" 0 \
		--out-has "1. alice at $t_alice, key $id_alice: valid, by trusted key alice.pub" \
		-- env KILN_TRUSTED_KEYS=trusted "$KILN" show p.kiln --approvals
	check "show: --approvals --json" 0 --err "" \
		-- "$KILN" show p.kiln --approvals --json --trusted-keys trusted
	cp "$E2E_OUT" approvals.json
	assert "show: the JSON lists each approval, its status and the trusted key" \
		ap_py show-json approvals.json "$digest" "$id_alice" "$id_mallory"
	check "show: --json of a plan file is still the plan document" 0 \
		--out-has '"format_version": "1.2"' -- "$KILN" show --json p.kiln
	check "show: --approvals needs a plan file" 1 --out "" \
		--err "kiln: show: --approvals and --trusted-keys are for a plan file, and default is not one; give the plan file that kiln plan --out wrote" \
		-- "$KILN" show default --approvals
	cd "$E2E_ROOT" || exit 1
}

ap_apply() {
	en_new_dir examples/quickstart.yaml
	ap_keys
	"$KILN" plan --out p.kiln >/dev/null 2>&1
	req="--require-approvals 2 --trusted-keys trusted"

	check "apply: a plan with no approvals is refused" 1 --out "" \
		--err "kiln: apply: p.kiln is not approved: it has no approvals, 2 from trusted keys required (--require-approvals 2); nothing was changed
  hint: 2 more approvals are needed from keys in trusted: each approver runs kiln approve p.kiln --key KEY" \
		-- "$KILN" apply p.kiln $req
	"$KILN" approve p.kiln --key alice.key --signer alice >/dev/null
	t_alice=$(ap_py field p.kiln 0 time)
	id_alice=$(ap_key_id alice.pub)
	check "apply: one approval where two are required is refused" 1 --out "" \
		--err "kiln: apply: p.kiln is not approved: 1 valid approval from trusted keys, 2 required (--require-approvals 2); nothing was changed
  approval 1: alice at $t_alice, key $id_alice: valid, by trusted key alice.pub
  hint: 1 more approval is needed from keys in trusted: each approver runs kiln approve p.kiln --key KEY" \
		-- "$KILN" apply p.kiln $req
	assert "apply: a refusal takes no lock and makes no state or cloud" test ! -e .kiln

	"$KILN" approve p.kiln --key mallory.key --signer mallory >/dev/null
	t_mallory=$(ap_py field p.kiln 1 time)
	check "apply: an approval by a key that is not trusted does not count" 1 --out "" \
		--err "kiln: apply: p.kiln is not approved: 1 valid approval from trusted keys, 2 required (--require-approvals 2); nothing was changed
  approval 1: alice at $t_alice, key $id_alice: valid, by trusted key alice.pub
  approval 2: mallory at $t_mallory, key $(ap_key_id mallory.pub): unknown key: no *.pub file in trusted holds it
  hint: 1 more approval is needed from keys in trusted: each approver runs kiln approve p.kiln --key KEY" \
		-- "$KILN" apply p.kiln $req
	check "apply: the wrong key alone is refused" 1 \
		--err-has "kiln: apply: p.kiln is not approved: 0 valid approvals from trusted keys, 1 required (--require-approvals 1); nothing was changed" \
		--err-has "unknown key: no *.pub file in only-bob holds it" \
		-- sh -c 'mkdir -p only-bob && cp bob.pub only-bob/ && "$1" apply p.kiln --require-approvals 1 --trusted-keys only-bob' sh "$KILN"

	"$KILN" approve p.kiln --key bob.key --signer bob >/dev/null
	cp p.kiln edited.kiln
	cp p.kiln reserialised.kiln
	cp p.kiln malformed.kiln
	cp p.kiln forged.kiln

	# One byte of the plan changed: the digest no longer matches.
	sed -i '0,/"count": 2/s//"count": 3/' edited.kiln
	check "apply: a plan with one byte changed after approval is refused" 1 --out "" \
		--err-has "kiln: apply: edited.kiln has been modified since kiln wrote it: its contents do not match its digest" \
		--err-has "  hint: a plan file must not be edited, and its approvals are for the plan as it was signed; make a new one with kiln plan --out FILE and have it approved again" \
		-- "$KILN" apply edited.kiln $req
	# The same change, written back with a digest that matches: the signatures do not.
	assert "apply: (the test recomputes kiln's digest exactly)" \
		ap_py retamper reserialised.kiln
	check "apply: a changed plan with its digest recomputed fails every signature" 1 --out "" \
		--err-has "kiln: apply: reserialised.kiln is not approved: 0 valid approvals from trusted keys, 2 required (--require-approvals 2); nothing was changed" \
		--err-has "  approval 1: alice at $t_alice, key $id_alice: bad signature: it does not verify over this plan with its signer and time, so the plan or the approval changed after signing" \
		--err-has "  hint: an approval that does not verify was made for another plan or edited since; 2 more approvals are needed from keys in trusted: each approver runs kiln approve reserialised.kiln --key KEY" \
		-- "$KILN" apply reserialised.kiln $req
	ap_py set malformed.kiln 2 signature AAAA
	check "apply: a malformed approval is named" 1 --out "" \
		--err-has "kiln: apply: malformed.kiln is not approved: 1 valid approval from trusted keys, 2 required" \
		--err-has "  approval 3: bob at " \
		--err-has ": malformed: its signature is not the base64 of a 64-byte Ed25519 signature" \
		-- "$KILN" apply malformed.kiln $req
	ap_py set forged.kiln 0 signer "alice (forged)"
	check "apply: an approval whose signer was changed fails its signature" 1 --out "" \
		--err-has "  approval 1: alice (forged) at $t_alice, key $id_alice: bad signature" \
		-- "$KILN" apply forged.kiln $req
	assert "apply: none of the refusals took a lock or changed anything" test ! -e .kiln

	check "apply: two valid approvals from trusted keys apply the plan" 0 \
		--out-has "Approvals: 2 valid from trusted keys in trusted (--require-approvals 2): alice (alice.pub), bob (bob.pub)." \
		--out-has "Apply complete: 5 created, 0 updated, 0 replaced, 0 deleted." \
		-- "$KILN" apply p.kiln $req
	check "apply: the commit names each approval that counted" 0 \
		--out-has "Kiln-Approval: $id_alice $t_alice alice" \
		--out-has "Kiln-Approval: $(ap_key_id bob.pub) " \
		-- "$KILN" show default
	en_inspect "apply: after an approved apply the sim holds exactly what the state records"

	sed -i 's/count: 2/count: 3/' kiln.yaml
	"$KILN" plan --out q.kiln >/dev/null 2>&1
	"$KILN" approve q.kiln --key bob.key --signer bob >/dev/null
	check "apply: KILN_REQUIRE_APPROVALS and KILN_TRUSTED_KEYS stand for the options" 1 \
		--err-has "kiln: apply: q.kiln is not approved: 1 valid approval from trusted keys, 2 required (KILN_REQUIRE_APPROVALS=2); nothing was changed" \
		-- env KILN_REQUIRE_APPROVALS=2 KILN_TRUSTED_KEYS=trusted "$KILN" apply q.kiln
	check "apply: --require-approvals 1 with one trusted approval applies" 0 \
		--out-has "Approvals: 1 valid from trusted keys in trusted (KILN_REQUIRE_APPROVALS=1): bob (bob.pub)." \
		--out-has "Apply complete: 0 created, 1 updated" \
		-- env KILN_REQUIRE_APPROVALS=1 KILN_TRUSTED_KEYS=trusted "$KILN" apply q.kiln
	check "apply: KILN_REQUIRE_APPROVALS refuses an apply from a spec" 1 --out "" \
		--err "kiln: apply: approvals are required (KILN_REQUIRE_APPROVALS=1), and kiln.yaml is a spec, which carries none; nothing was changed
  hint: save the plan for review: kiln plan kiln.yaml --out plan.kiln, have it approved (kiln approve plan.kiln --key KEY), then kiln apply plan.kiln" \
		-- env KILN_REQUIRE_APPROVALS=1 KILN_TRUSTED_KEYS=trusted "$KILN" apply --auto-approve
	check "apply: KILN_REQUIRE_APPROVALS refuses kiln destroy, which takes a spec" 1 --out "" \
		--err "kiln: destroy: approvals are required (KILN_REQUIRE_APPROVALS=1), and kiln.yaml is a spec, which carries none; nothing was changed
  hint: save the plan for review: kiln plan --destroy kiln.yaml --out destroy.kiln, have it approved (kiln approve destroy.kiln --key KEY), then kiln apply destroy.kiln" \
		-- env KILN_REQUIRE_APPROVALS=1 "$KILN" destroy --auto-approve
	check "apply: --log-format json: refusing a spec where approvals are required is JSON, its hint in a field" 1 --out "" \
		--err-has '"@message":"kiln: apply: approvals are required (KILN_REQUIRE_APPROVALS=1), and kiln.yaml is a spec, which carries none; nothing was changed"' \
		--err-has '"hint":"save the plan for review: kiln plan kiln.yaml --out plan.kiln, have it approved (kiln approve plan.kiln --key KEY), then kiln apply plan.kiln"' \
		-- env KILN_REQUIRE_APPROVALS=1 "$KILN" --log-format json apply --auto-approve
	check "apply: --require-approvals 0 requires none" 0 --out-has "Nothing to apply." \
		-- env KILN_REQUIRE_APPROVALS=1 "$KILN" apply --auto-approve --require-approvals 0
	cd "$E2E_ROOT" || exit 1
}

ap_errors() {
	en_new_dir examples/quickstart.yaml
	ap_keys
	"$KILN" plan --out p.kiln >/dev/null 2>&1
	check "apply: --require-approvals with a spec is an error" 1 --out "" \
		--err "kiln: apply: approvals are required (--require-approvals 1), and kiln.yaml is a spec, which carries none; nothing was changed
  hint: save the plan for review: kiln plan kiln.yaml --out plan.kiln, have it approved (kiln approve plan.kiln --key KEY), then kiln apply plan.kiln" \
		-- "$KILN" apply kiln.yaml --auto-approve --require-approvals 1 --trusted-keys trusted
	check "apply: --require-approvals needs trusted keys" 1 --out "" \
		--err "kiln: apply: approvals are required (--require-approvals 1), but no trusted keys are given; give --trusted-keys DIR, a directory of the approvers' *.pub keys (or set KILN_TRUSTED_KEYS)" \
		-- "$KILN" apply p.kiln --require-approvals 1
	check "apply: --trusted-keys alone is an error" 1 --out "" \
		--err "kiln: apply: --trusted-keys is used only with --require-approvals N; give the number of approvals required, such as --require-approvals 1" \
		-- "$KILN" apply p.kiln --trusted-keys trusted
	check "apply: --require-approvals takes a number" 1 --out "" \
		--err "kiln: apply: --require-approvals 'two' is not a number from 0 to 100; give the number of approvals a plan needs, such as 2" \
		-- "$KILN" apply p.kiln --require-approvals two --trusted-keys trusted
	check "apply: a bad KILN_REQUIRE_APPROVALS is named" 1 --out "" \
		--err "kiln: apply: KILN_REQUIRE_APPROVALS '-1' is not a number from 0 to 100; give the number of approvals a plan needs, such as 2" \
		-- env KILN_REQUIRE_APPROVALS=-1 "$KILN" apply p.kiln
	check "apply: a missing trusted keys directory is named" 1 --out "" \
		--err "kiln: apply: cannot read the trusted keys directory nokeys: No such file or directory
  hint: give a directory that holds a PEM public key per *.pub file" \
		-- "$KILN" apply p.kiln --require-approvals 1 --trusted-keys nokeys
	printf 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA carol@laptop\n' >trusted/carol.pub
	check "apply: a *.pub file that is not a PEM public key is refused" 1 --out "" \
		--err "kiln: apply: trusted key trusted/carol.pub is not a PEM public key
  hint: write the public key of a signing key with: openssl pkey -in KEY -pubout -out trusted/carol.pub" \
		-- "$KILN" apply p.kiln --require-approvals 1 --trusted-keys trusted
	rm trusted/carol.pub
	assert "apply: and none of them took a lock or changed anything" test ! -e .kiln

	check "approve: help" 0 --out-has "Usage: kiln approve PLANFILE --key KEY [--signer NAME] [--json] | --generate-key FILE [--json]" \
		-- "$KILN" help approve
	check "approve: needs --key" 1 --out "" \
		--err "kiln: approve: needs --key KEY, the Ed25519 private key to sign with; make a key with kiln approve --generate-key FILE (or openssl genpkey -algorithm ed25519 -out FILE)" \
		-- "$KILN" approve p.kiln
	check "approve: needs a plan file" 1 --out "" \
		--err "kiln: approve: needs the plan file to approve; write kiln approve PLANFILE --key KEY" \
		-- "$KILN" approve --key alice.key
	check "approve: a spec is not a plan file" 1 --out "" \
		--err-has "kiln: approve: kiln.yaml is not a kiln plan file: " \
		-- "$KILN" approve kiln.yaml --key alice.key
	chmod 644 alice.key
	check "approve: a key others can read is refused" 1 --out "" \
		--err "kiln: approve: signing key alice.key may be read by group or others (mode 0644); kiln signs only with a key that is private to its owner
  hint: chmod 600 alice.key" \
		-- "$KILN" approve p.kiln --key alice.key
	chmod 600 alice.key
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ec.key 2>/dev/null
	chmod 600 ec.key
	check "approve: a key that is not Ed25519 is refused" 1 --out "" \
		--err "kiln: approve: signing key ec.key holds a key of type EC, not Ed25519; kiln approvals are Ed25519 signatures
  hint: make an Ed25519 key with: kiln approve --generate-key FILE (or openssl genpkey -algorithm ed25519 -out FILE)" \
		-- "$KILN" approve p.kiln --key ec.key
	check "approve: a public key is not a signing key" 1 --out "" \
		--err "kiln: approve: signing key alice.pub is a public key; --key takes the private key
  hint: the .pub file goes in the trusted keys directory of whoever applies; sign with the key it was made from" \
		-- "$KILN" approve p.kiln --key alice.pub
	check "approve: a signer with a control character is refused" 1 --out "" \
		--err "kiln: approve: the signer name from --signer is not 1 to 200 bytes of UTF-8 without control characters; give another with --signer NAME" \
		-- "$KILN" approve p.kiln --key alice.key --signer "$(printf 'a\tb')"
	assert "approve: a refused approval leaves the plan file as it was" \
		test "$(ap_py count p.kiln)" = 0

	check "approve: --generate-key writes a key and its public key" 0 \
		--out-has "Wrote the signing key carol (mode 0600: keep it private) and its public key carol.pub." \
		--out-has "Key id: " -- "$KILN" approve --generate-key carol
	assert "approve: the generated key is private (0600)" sh -c '[ "$(stat -c %a carol)" = 600 ]'
	assert "approve: openssl reads the generated keys, and the id is of the public key" \
		sh -c 'openssl pkey -in carol -noout && grep -qF "Key id: $1" "$2"' sh \
		"$(ap_key_id carol.pub)" "$E2E_OUT"
	check "approve: --generate-key does not overwrite" 1 --out "" \
		--err "kiln: approve: carol already exists; kiln does not overwrite a key
  hint: choose another file name, or remove the old key first" \
		-- "$KILN" approve --generate-key carol
	check "approve: a generated key signs" 0 --out-has "The plan file holds 1 approval." \
		-- "$KILN" approve p.kiln --key carol
	cd "$E2E_ROOT" || exit 1
}

approve_tests() {
	if ! $HAVE_PY || ! command -v openssl >/dev/null 2>&1; then
		skip "approve" "python3 or openssl is not installed"
		return
	fi
	(
		unset KILN_SIM_DIR KILN_SIM_FAIL_RATE KILN_SIM_CAPACITY KILN_SIM_LATENCY_MS KILN_STATE \
			KILN_WORKSPACE KILN_STATE_KEY KILN_STATE_KEY_FILE KILN_REQUIRE_APPROVALS \
			KILN_TRUSTED_KEYS
		export KILN_AUTHOR="E2E <e2e@example.com>" KILN_SIM_READY_MS=20
		ap_sign_and_show
		ap_apply
		ap_errors
		echo "$E2E_PASSED $E2E_FAILED" >"$E2E_TMP/.approve-counts"
	)
	read -r E2E_PASSED E2E_FAILED <"$E2E_TMP/.approve-counts"
}
