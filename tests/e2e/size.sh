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

size_tests() {
	sz_text
	sz_json
	sz_write
	sz_memory
	sz_bad_input
}
