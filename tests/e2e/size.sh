# size.sh - end-to-end tests of `kiln size` (issue 26): the text, the JSON
# (read by Python's json), the --write fragment validated inside a spec by
# `kiln validate`, the memory boundary (a full fine-tune of 70B on one node
# refused, LoRA fitting), and every bad input with its exact message.
# Sourced by run.sh after lib.sh; $KILN is the binary.

sz_err() { # EXPECTED MESSAGE: what kiln size prints on stderr
	printf 'kiln: size: %s\n' "$1"
}

sz_text() {
	check "size: 70B on 2T tokens within 30d recommends a cluster, its cost, time and runner-up" 0 \
		--out-has "recommended 103 × p5.48xlarge (824 H100): the cheapest on demand that meets the deadline" \
		--out-has "  time      29.8 days, 589583 GPU-hours at MFU 0.40 of 989.4 TFLOPS" \
		--out-has "  cost      \$7,245,973.99 on demand (\$10,126.96 an hour), \$3.62 per million tokens" \
		--out-has "runner-up   325 × p4d.24xlarge (2600 A100): 5.7% more than the recommended" \
		--out-has "fastest     2048 × p5.48xlarge (16384 H100)" \
		--out-has "storage     a checkpoint is 912.7 GiB; Lustre of 9600 GiB at 500 MB/s/TiB" \
		--out-has "MFU 0.40 for H100 in bf16 is an assumption" \
		--out-has "override it with --mfu or workload.mfu" \
		--out-has "Rajbhandari et al. 2020, ZeRO" \
		--err "" \
		-- "$KILN" size --params 70B --tokens 2T --deadline 30d
	check "size: a given MFU is used and said to be given" 0 \
		--out-has "at MFU 0.50 of 989.4 TFLOPS" --out-has "  - MFU 0.50, as given" --err "" \
		-- "$KILN" size --params 70B --tokens 2T --gpu H100 --mfu 0.5
}

sz_json() {
	check "size: --json prints the sizing" 0 --err "" \
		-- "$KILN" size --params 70B --tokens 2T --deadline 30d --json
	cp "$E2E_OUT" "$E2E_TMP/size.json"
	assert "size: the JSON has the fields kiln-size(1) lists, with the recommended cluster's figures" \
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("flops", "gpu_hours", "train_days", "instance_type", "gpu", "nodes", "gpus",
          "cost_usd", "usd_per_million_tokens", "mfu", "memory", "checkpoint_gib",
          "lustre", "runner_up", "fastest", "assumptions", "spot_cost_usd",
          "capacity_block_cost_usd", "skipped", "catalog"):
    assert k in d, k
assert d["instance_type"] == "p5.48xlarge" and d["nodes"] == 103 and d["gpus"] == 824, d
assert d["flops"] == 8.4e23 and d["cost_usd"] == 7245973.99, d
assert d["memory"] == {"state_gib": 1043.0, "per_gpu_gib": 7.348, "fits": True, "fit_gpus": 19}, d["memory"]
assert d["lustre"]["capacity_gib"] == 9600 and d["lustre"]["throughput_per_tib"] == 500, d["lustre"]
assert d["runner_up"]["instance_type"] == "p4d.24xlarge", d["runner_up"]
assert d["fastest"]["gpus"] == 16384, d["fastest"]
assert d["capacity_block_cost_usd"] is None
assert any("Kaplan et al. 2020" in a for a in d["assumptions"])
assert {"instance_type": "p3.2xlarge", "reason": "V100 has no bf16 tensor cores"} in d["skipped"]
' "$E2E_TMP/size.json"
}

sz_write() {
	sz_dir=$(mktemp -d "$E2E_TMP/size.XXXXXX")
	check "size: --write prints the compute: and storage: fragment" 0 --err "" \
		--out-has "compute:
  trainers:
    instance_type: p5.48xlarge
    count: 103
    gang: true
    market: on-demand
storage:
  scratch: {tier: lustre, capacity_gb: 9600, throughput_per_tib: 500, mount: /lustre}" \
		-- "$KILN" size --params 70B --tokens 2T --deadline 30d --write
	{
		printf 'kiln: 1\ncluster: sized\nprovider: {name: sim}\n'
		printf 'network: {cidr: 10.42.0.0/16, fabric: efa}\n'
		cat "$E2E_OUT"
	} >"$sz_dir/kiln.yaml"
	check "size: the fragment, pasted into a spec, validates" 0 \
		--out "ok $sz_dir/kiln.yaml" --err "" -- "$KILN" validate "$sz_dir/kiln.yaml"
}

sz_memory() {
	check "size: a full fine-tune of 70B on one 8-GPU node is refused as not fitting, with the numbers" 1 \
		--out "" \
		--err "$(sz_err "no instance type can run this workload: a full fine-tune of 70B needs 136.5 GiB per GPU on 1 × p5.48xlarge (8 GPUs of 80 GiB, 64.0 GiB usable with 20% left free); the smallest that fits is 3 × p5.48xlarge (24 GPUs)")" \
		-- "$KILN" size --params 70B --tokens 1B --kind finetune --gpu H100 --nodes 1
	check "size: a LoRA fine-tune of 70B fits on one 8-GPU node" 0 --err "" \
		--out-has "recommended 1 × p5.48xlarge (8 H100)" \
		--out-has "  memory    22.7 GiB a GPU of 80 GiB; fits on 3 GPUs or more" \
		-- "$KILN" size --params 70B --tokens 1B --kind finetune --method lora --gpu H100 --nodes 1
}

# sz_bad NAME MESSAGE ARGS...: kiln size ARGS exits 1 with exactly MESSAGE.
sz_bad() {
	sz_name=$1
	sz_msg=$2
	shift 2
	check "size: $sz_name" 1 --out "" --err "$(sz_err "$sz_msg")" -- "$KILN" size "$@"
}

sz_bad_input() {
	sz_bad "a size without a unit" \
		'--params "70" has no unit: write K, M, B or T after the number (thousand, million, billion, trillion), like 70B' \
		--params 70 --tokens 2T
	sz_bad "a size with another unit" \
		'--tokens "2TB" has the unit "TB": the unit is K, M, B or T (thousand, million, billion, trillion), like 70B' \
		--params 70B --tokens 2TB
	sz_bad "a zero count" \
		'--params "0B" is not more than zero: give a count above zero, like 7B' \
		--params 0B --tokens 2T
	sz_bad "a negative count" \
		'--tokens "-2T" is not more than zero: give a count above zero, like 7B' \
		--params 7B --tokens=-2T
	sz_bad "a count that is no number" \
		'--params "B" is not a count: write a number and a unit, like 70B or 350M' \
		--params B --tokens 2T
	sz_bad "an mfu above 1" \
		"--mfu 1.5 is outside (0, 1]: it is the fraction of the GPU's peak a run achieves, like 0.40" \
		--params 7B --tokens 1T --mfu 1.5
	sz_bad "an mfu of 0" \
		"--mfu 0 is outside (0, 1]: it is the fraction of the GPU's peak a run achieves, like 0.40" \
		--params 7B --tokens 1T --mfu 0
	sz_bad "active params above params" \
		'--active-params 80B is more than --params 70B: a mixture of experts activates at most all of its parameters; give --active-params at most 70B' \
		--params 70B --active-params 80B --tokens 1T
	sz_bad "lora with pretrain" \
		'--method lora with --kind pretrain: LoRA adapts a model that is already trained; use --kind finetune, or --method full to pretrain' \
		--params 7B --tokens 1T --method lora
	sz_bad "a deadline nothing meets names the fastest and its time" \
		'no cluster in the catalog meets the 1d deadline: the fastest, 2048 × p5.48xlarge (16384 H100), takes 1.5 days; give a deadline of at least 2d' \
		--params 70B --tokens 2T --deadline 1d
	sz_bad "a deadline nothing within the budget meets" \
		'no cluster in the catalog meets the 30d deadline within the budget: the fastest, 50 × p5.48xlarge (400 H100), takes 61.4 days; give a deadline of at least 62d, or a larger max_hourly_usd' \
		--params 70B --tokens 2T --deadline 30d --max-hourly-usd 5000
	# shellcheck disable=SC2016 # a dollar amount in the message, not an expansion
	sz_bad "a budget nothing fits" \
		'no cluster in the catalog fits max_hourly_usd 0.5: the cheapest an hour that runs it, 1 × g6.xlarge, costs $0.80 an hour; raise max_hourly_usd' \
		--params 7B --tokens 1B --kind finetune --method lora --max-hourly-usd 0.5
	sz_bad "a GPU the catalog lacks" \
		'the catalog has no GPU model "MI300X": it has H100, H200, A100, V100, L40S, L4, A10G, TRN1' \
		--params 7B --tokens 1T --gpu MI300X
	sz_bad "a GPU without a default MFU" \
		'no instance type can run this workload: kiln has no measured MFU for TRN1 in bf16: give an mfu to size it' \
		--params 7B --tokens 1T --gpu TRN1
	sz_bad "params missing" '--params is required: give the model'"'"'s size, like --params 70B' \
		--tokens 2T
	sz_bad "tokens missing" '--tokens is required: give the tokens it trains on, like --tokens 2T' \
		--params 7B
	sz_bad "a deadline that is no duration" \
		'--deadline "3x" is not a duration: write it like 30d, 72h or 1d12h' \
		--params 7B --tokens 1T --deadline 3x
	sz_bad "a kind that is neither" '--kind "train" is not pretrain or finetune' \
		--params 7B --tokens 1T --kind train
	sz_bad "a precision that is neither" '--precision "fp16" is not bf16 or fp8' \
		--params 7B --tokens 1T --precision fp16
	sz_bad "a method that is neither" '--method "qlora" is not full or lora' \
		--params 7B --tokens 1T --kind finetune --method qlora
	sz_bad "an mfu that is no number" '--mfu "abc" is not a number: give one like 0.40' \
		--params 7B --tokens 1T --mfu abc
	sz_bad "zero nodes" '--nodes "0" is not a whole number above zero, like 16' \
		--params 7B --tokens 1T --nodes 0
	sz_bad "a deadline of zero" '--deadline "0d" is not longer than zero, like 30d' \
		--params 7B --tokens 1T --deadline 0d
	sz_bad "a budget of zero" '--max-hourly-usd "0" is not above zero, like 1600' \
		--params 7B --tokens 1T --max-hourly-usd 0
	sz_bad "a negative dataset" '--dataset-size "-1" is not above zero: give GiB, like 20480' \
		--params 7B --tokens 1T --dataset-size=-1
	sz_bad "--json with --write" '--json and --write print different things: give one' \
		--params 7B --tokens 1T --json --write
	sz_bad "a provider kiln lacks" '--provider "nope" is not a provider: use aws or sim' \
		--params 7B --tokens 1T --provider nope
	sz_bad "an operand" "takes no arguments, got 'extra'" --params 7B --tokens 1T extra
	sz_bad "a GPU without the precision" \
		'no instance type can run this workload: A100 has no fp8 tensor cores' \
		--params 7B --tokens 1T --gpu A100 --precision fp8
	sz_bad "a GPU without bf16" 'no instance type can run this workload: V100 has no bf16 tensor cores' \
		--params 7B --tokens 1T --gpu V100
	sz_bad "a PCIe GPU past one node on kiln's default MFU" \
		"no instance type can run this workload: kiln's default MFU for L40S holds within one node (no published multi-node run): give an mfu to size more" \
		--params 70B --tokens 1T --gpu L40S
	sz_bad "activations that fill a GPU alone" \
		'no instance type can run this workload: the activations of one sequence of 1000000 tokens (391.4 GiB) fill the 112.8 usable GiB of one H200' \
		--params 7B --tokens 1T --seq-len 1000000
	sz_bad "a model past the largest cluster kiln sizes" \
		'no instance type can run this workload: pretraining needs 49608 GPUs of H100, more than the 16384 kiln sizes' \
		--params 200T --tokens 1T --seq-len 16 --gpu H100
	check "size: a type without EFA is skipped when the model needs more than one of its nodes" 0 \
		--err "" --out-has '"reason": "a full fine-tune needs 80 nodes of g5.xlarge, and g5.xlarge has no EFA to join them"' \
		-- "$KILN" size --params 70B --tokens 1B --kind finetune --gpu A10G --mfu 0.3 --json
}

# sz_spec DIR FABRIC COMPUTE STORAGE: a sim spec with the 70B workload in DIR/kiln.yaml.
sz_spec() {
	cat >"$1/kiln.yaml" <<EOF
kiln: 1
cluster: llm-70b
provider: {name: sim}
ttl: 72h
network: {fabric: $2}
workload:
  kind: pretrain
  params: 70B
  tokens: 2T
  deadline: 30d
  checkpoint: {every: 2h, write_within: 5m}
compute:
$3
storage:
$4
EOF
}

# A spec with workload: on sim: the count kiln derives, the Workload section
# in text, JSON (schema and fields read by python) and Markdown, apply, and
# kiln cost's run beside the hourly cost.
sz_workload_sim() {
	sz_dir=$(mktemp -d "$E2E_TMP/size.XXXXXX")
	cd "$sz_dir" || exit 1
	sz_spec "$sz_dir" efa "  trainers: {instance_type: p5.48xlarge}" \
		"  scratch: {tier: lustre, capacity_gb: 9600, throughput_per_tib: 500, mount: /lustre}"
	check "size: a spec with workload: plans the count it derives, and says so" 0 --err "" \
		--out-has "      count:            103" \
		--out-has "  • sim_node_group.trainers: count: count from the workload: 103 × p5.48xlarge, the fewest that train it within the 30d deadline (29.8 days)" \
		--out-has "Workload: pretrain 70B params on 2T tokens, bf16, within 30 days
  compute      8.4e+23 FLOPs; a checkpoint is 912.7 GiB
  this spec    compute.trainers: 103 × p5.48xlarge (824 H100): 29.8 days, 589600 GPU-hours, \$7,245,973.99 a run, \$3.62 per million tokens
  derived      compute.trainers: count from the workload: 103 × p5.48xlarge, the fewest that train it within the 30d deadline (29.8 days)
  recommended  103 × p5.48xlarge (824 H100): 29.8 days, 589600 GPU-hours, \$7,245,973.99 a run, \$3.62 per million tokens: the cheapest on demand that meets the deadline
  runner-up    325 × p4d.24xlarge (2600 A100): 30.0 days, 1870000 GPU-hours, \$7,659,194.71 a run, \$3.83 per million tokens: 5.7% more than the recommended
  lustre       storage.scratch writes a checkpoint in 3m29s at 4687.5 MB/s (within 5m: fast enough)
  lustre needs 9600 GiB at 500 MB/s/TiB writes a checkpoint in time
  assumptions
    - training costs 6·N·D FLOPs" \
		--out-has "    - MFU 0.40 for H100 in bf16 is an assumption (kiln's table of 2026-12-06)" \
		-- "$KILN" plan
	assert "size: a cluster that meets its workload has no KILN-WORK finding" \
		sh -c "! grep -q KILN-WORK '$E2E_OUT'"
	check "size: the workload's plan as JSON" 0 --err "" -- "$KILN" plan --json
	cp "$E2E_OUT" plan.json
	assert "size: the workload's JSON plan validates against the schema" \
		python3 "$E2E_ROOT/tests/check-plan-schema.py" plan.json
	assert "size: kiln.workload carries the sizing, the spec's run and the Lustre check" python3 -c '
import json, sys
k = json.load(open(sys.argv[1]))["kiln"]
w = k["workload"]
for f in ("flops", "gpu_hours", "train_days", "instance_type", "gpu", "nodes", "gpus", "cost_usd",
          "usd_per_million_tokens", "mfu", "memory", "checkpoint_gib", "lustre", "runner_up",
          "assumptions", "groups", "run", "checkpoint_stores"):
    assert f in w, f
assert w["flops"] == 8.4e23 and w["instance_type"] == "p5.48xlarge" and w["nodes"] == 103, w
assert w["runner_up"]["instance_type"] == "p4d.24xlarge", w["runner_up"]
run = w["run"]
assert run["group"] == "trainers" and run["nodes"] == 103 and run["meets_deadline"] is True, run
assert run["derived"].startswith("count from the workload: 103 × p5.48xlarge"), run
assert w["checkpoint_stores"][0]["fast_enough"] is True, w["checkpoint_stores"]
assert k["cost"]["run"] == {"group": "trainers", "instance_type": "p5.48xlarge", "nodes": 103,
                            "train_days": 29.81, "cost_usd": 7245973.99,
                            "usd_per_million_tokens": 3.62}, k["cost"]["run"]
assert any("Rajbhandari" in a for a in w["assumptions"])
' plan.json
	check "size: the workload's plan in Markdown has its Workload table" 0 --err "" \
		--out-has "### Workload

pretrain 70B params on 2T tokens, bf16, within 30 days: 8.4e+23 FLOPs, a checkpoint of 912.7 GiB.

| Cluster | Nodes | Days | GPU-hours | Cost of a run | Per million tokens | Why |" \
		--out-has "| recommended | 103 × p5.48xlarge | 29.8 | 589600 | \$7,245,973.99 | \$3.62 | the cheapest on demand that meets the deadline |" \
		--out-has "<details><summary>Assumptions</summary>" \
		-- "$KILN" plan --markdown
	check "size: the workload's cluster applies on sim" 0 --out-has "Apply complete" \
		-- "$KILN" apply --auto-approve
	check "size: kiln cost shows one run's cost beside the hourly one" 0 --err "" \
		--out-has "Run: one training run of the workload on compute.trainers (103 × p5.48xlarge) takes 29.8 days and costs \$7,245,973.99 on demand, \$3.62 per million tokens" \
		-- "$KILN" cost
	check "size: kiln cost --json carries the run" 0 --err "" \
		--out-has '"cost_usd": 7245973.99' --out-has '"train_days": 29.81' \
		-- "$KILN" cost --json
	cd "$E2E_ROOT" || exit 1
}

# A spec whose compute and storage miss the workload: the KILN-WORK findings, with their numbers.
sz_workload_findings() {
	sz_dir=$(mktemp -d "$E2E_TMP/size.XXXXXX")
	cd "$sz_dir" || exit 1
	sz_spec "$sz_dir" none "  trainers: {instance_type: p5.48xlarge, count: 16}" \
		"  scratch: {tier: lustre, capacity_gb: 2400, throughput_per_tib: 125, mount: /lustre}"
	check "size: a cluster short of its workload's deadline, Lustre and fabric gets the findings" 0 --err "" \
		--out-has "  warning  KILN-WORK-001   compute.trainers: 16 × p5.48xlarge finish in 191.9 days, past the 30-day deadline: 103 nodes meet it" \
		--out-has "  warning  KILN-WORK-002   storage.scratch: 2400 GiB at 125 MB/s/TiB writes 293.0 MB/s: a 912.7 GiB checkpoint takes 55m45s, past workload.checkpoint.write_within 5m, which needs 3266.7 MB/s; 9600 GiB at 500 MB/s/TiB writes it in time" \
		--out-has "  warning  KILN-WORK-003   the workload trains on 16 × p5.48xlarge and network.fabric is none: gradients cross between nodes over TCP, far below the MFU its time and cost assume" \
		--out-has "  this spec    compute.trainers: 16 × p5.48xlarge (128 H100): 191.9 days, 589600 GPU-hours, \$7,245,973.99 a run, \$3.62 per million tokens; past the deadline: 103 nodes meet it" \
		--out-has "  lustre       storage.scratch writes a checkpoint in 55m45s at 293.0 MB/s (within 5m: too slow)" \
		-- "$KILN" plan
	check "size: the Markdown Workload table says the group misses the deadline" 0 --err "" \
		--out-has "| compute.trainers | 16 × p5.48xlarge | 191.9 | 589600 | \$7,245,973.99 | \$3.62 | past the deadline: 103 nodes meet it |" \
		-- "$KILN" plan --markdown
	sz_spec "$sz_dir" efa "  trainers: {gang: true}" \
		"  scratch: {tier: lustre, capacity_gb: 9600, throughput_per_tib: 500, mount: /lustre}"
	check "size: a group with neither gpu nor instance_type gets the recommended type and count" 0 --err "" \
		--out-has '      instance_type:    "p5.48xlarge"' --out-has "      count:            103" \
		--out-has "  • sim_node_group.trainers: instance_type: instance_type p5.48xlarge and count from the workload: the cheapest on demand that meets the deadline (103 × p5.48xlarge, 29.8 days, \$7,245,973.99 a run)" \
		-- "$KILN" plan
	sz_spec "$sz_dir" efa "  trainers: {gpu: A100:8}" \
		"  scratch: {tier: lustre, capacity_gb: 9600, throughput_per_tib: 500, mount: /lustre}"
	check "size: a gpu: group without count gets the count of the type its GPUs resolve to" 0 --err "" \
		--out-has "  • sim_node_group.trainers: count: count from the workload: 325 × p4d.24xlarge, the fewest that train it within the 30d deadline (30.0 days)" \
		-- "$KILN" plan
	cd "$E2E_ROOT" || exit 1
}

# Every bad workload: value, with its exact message, from kiln validate and kiln plan.
sz_workload_bad() {
	for f in "$E2E_ROOT"/tests/specs/invalid/workload-*.yaml; do
		sz_rel=tests/specs/invalid/$(basename "$f")
		check "size: kiln validate $sz_rel says exactly its golden" 1 --out "" \
			--err-file "$f.expected" -- "$KILN" validate "$sz_rel"
	done
	sz_dir=$(mktemp -d "$E2E_TMP/size.XXXXXX")
	cp "$E2E_ROOT/tests/specs/invalid/workload-deadline-unmeetable.yaml" "$sz_dir/kiln.yaml"
	cd "$sz_dir" || exit 1
	check "size: plan refuses a workload no cluster meets, naming the fastest" 1 --out "" \
		--err-has "kiln.yaml:9:13: error: workload: no cluster in the catalog meets the 1d deadline: the fastest, 2048 × p5.48xlarge (16384 H100), takes 65.1 days; give a deadline of at least 66d" \
		-- "$KILN" plan
	cd "$E2E_ROOT" || exit 1
}

# The same on moto: plan with the Workload section, apply, kiln cost, destroy.
sz_workload_moto() {
	sz_moto=$E2E_TMP/moto-size
	aws_moto_up "size: workload on moto" "$sz_moto" || return 0
	sz_dir=$(mktemp -d "$E2E_TMP/size.XXXXXX")
	cd "$sz_dir" || exit 1
	cat >kiln.yaml <<'EOF'
kiln: 1
cluster: wl
provider: {name: aws, region: us-east-1, zone: us-east-1a}
ttl: 24h
vars:
  image: ami-1e749f67     # an Ubuntu image moto knows
network: {fabric: efa}
workload: {params: 7B, tokens: 20B, deadline: 2d}
compute:
  trainers: {instance_type: p5.48xlarge, image: "${var.image}"}
EOF
	check "size: on moto, a spec with workload: plans its derived count and the Workload section" 0 \
		--out-has "      count:            2" \
		--out-has "  this spec    compute.trainers: 2 × p5.48xlarge (16 H100): 1.5 days, 590 GPU-hours, \$7,245.97 a run, \$0.36 per million tokens" \
		--out-has "  recommended  2 × p5.48xlarge (16 H100): 1.5 days, 590 GPU-hours, \$7,245.97 a run, \$0.36 per million tokens: the cheapest on demand that meets the deadline" \
		-- "$KILN" plan
	"$KILN" plan --json >plan.json 2>/dev/null
	assert "size: on moto, the workload's JSON plan validates against the schema" \
		python3 "$E2E_ROOT/tests/check-plan-schema.py" plan.json
	check "size: on moto, the workload's cluster applies" 0 --out-has "Apply complete" \
		-- "$KILN" apply --auto-approve
	check "size: on moto, kiln cost shows the run" 0 --err "" \
		--out-has "Run: one training run of the workload on compute.trainers (2 × p5.48xlarge) takes 1.5 days and costs \$7,245.97 on demand, \$0.36 per million tokens" \
		-- "$KILN" cost
	check "size: on moto, it destroys" 0 -- "$KILN" destroy --auto-approve
	cd "$E2E_ROOT" || exit 1
	aws_moto_down "$sz_moto"
}

size_tests() {
	sz_text
	sz_json
	sz_write
	sz_memory
	sz_bad_input
	sz_workload_sim
	sz_workload_findings
	sz_workload_bad
	sz_workload_moto
}
