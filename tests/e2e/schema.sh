# schema.sh - end-to-end tests of `kiln schema`: the JSON Schema it prints
# is checked with python3-jsonschema by tests/check-spec-schema.py (every
# example, template and valid spec validates; each invalid golden whose
# refusal a schema can express is refused at its path; the others are listed
# with the reason), a spec `kiln init` writes carries the yaml-language-server
# line and validates against it, and the bad-input message. Sourced by run.sh
# after lib.sh; $KILN is the binary.

schema_tests() {
	cd "$E2E_ROOT" || return
	sc_dir=$(mktemp -d "$E2E_TMP/schema.XXXXXX")
	# shellcheck disable=SC2016 # the JSON key "$schema", not an expansion
	check "schema: kiln schema prints a JSON Schema (draft-07)" 0 --err "" \
		--out-has '"$schema": "http://json-schema.org/draft-07/schema#"' \
		-- "$KILN" schema
	"$KILN" schema >"$sc_dir/kiln.schema.json"
	if python3 -c 'import jsonschema, yaml' 2>/dev/null; then
		check "schema: examples, templates and valid specs validate; expressible refusals are refused" 0 \
			--err "" --out-has "0 problems" \
			-- python3 tests/check-spec-schema.py "$sc_dir/kiln.schema.json" .
		(cd "$sc_dir" && "$KILN" init --template sim-demo proj >/dev/null 2>&1)
		check "schema: a spec kiln init writes carries the yaml-language-server line" 0 \
			--out "# yaml-language-server: \$schema=/usr/local/share/kiln/kiln.schema.json" \
			-- grep -F 'yaml-language-server' "$sc_dir/proj/kiln.yaml"
		check "schema: a spec kiln init writes validates against the schema" 0 --out "" --err "" \
			-- python3 -c 'import json, sys, yaml, jsonschema
jsonschema.validate(yaml.safe_load(open(sys.argv[2])), json.load(open(sys.argv[1])))' \
			"$sc_dir/kiln.schema.json" "$sc_dir/proj/kiln.yaml"
	else
		fail "schema: python3 cannot import jsonschema and yaml (scripts/deps.sh installs python3-jsonschema, python3-yaml)"
	fi
	check "schema: an operand is refused, with how to save the schema" 1 --out "" \
		--err "kiln: schema: takes no operand, got 'kiln.yaml'; write it to a file with kiln schema > kiln.schema.json" \
		-- "$KILN" schema kiln.yaml
}
