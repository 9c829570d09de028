#!/usr/bin/env python3
"""check-spec-schema.py SCHEMA [ROOT]: `kiln schema`'s JSON Schema against
the specs kiln reads, with a real validator (python3-jsonschema, Draft 7).

- The schema is a valid Draft 7 schema.
- Every example, template and valid spec under tests/specs/valid validates.
- Every golden of tests/specs/invalid whose refusal a schema can express (an
  unknown key, a wrong type, a word not in an enumeration, a number out of
  the loader's bounds, a name's pattern, a missing required key) is refused,
  with an error at the path named in CHECKED.
- Every other golden is listed in NOT_EXPRESSIBLE under the reason a schema
  cannot say it; a golden in neither list fails the check, so a new one is
  sorted when it is added.

YAML is read as yaml-language-server reads it (YAML 1.2's core schema: no
timestamps, and yes/no/on/off are text), not with PyYAML's YAML 1.1 types.
Prints one line per problem and a summary; exits 1 on any problem.
"""
import glob
import json
import os
import re
import sys

import jsonschema
import yaml


class Yaml12Loader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2 core scalars, as editors read them."""


Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers
            if tag not in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:bool")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))

# golden -> the path ('/'-joined keys and indexes; "" for the document) of
# the value the schema must refuse in it.
CHECKED = {
    "boot-health-gpu.yaml": "compute/trainers/health/gpu",
    "boot-step-wrong-type.yaml": "compute/trainers/bootstrap/1/run",
    "budget-negative.yaml": "budget/max_hourly_usd",
    "budget-not-mapping.yaml": "budget",
    "budget-not-number.yaml": "budget/max_hourly_usd",
    "cidr-not-cidr.yaml": "network/cidr",
    "cluster-name-too-long.yaml": "cluster",
    "cluster-name-trailing-hyphen.yaml": "cluster",
    "cluster-name-uppercase.yaml": "cluster",
    "comments-only.yaml": "",
    "count-fraction.yaml": "compute/workers/count",
    "count-negative.yaml": "compute/trainers/count",
    "count-not-number.yaml": "compute/workers/count",
    "count-too-large.yaml": "compute/workers/count",
    "deletion-bad.yaml": "storage/datasets/deletion",
    "disk-not-mapping.yaml": "compute/trainers/disk",
    "disk-size-small.yaml": "compute/trainers/disk/size_gb",
    "disk-type-bad.yaml": "compute/trainers/disk/type",
    "empty.yaml": "",
    "endpoint-not-url.yaml": "provider/endpoint",
    "fabric-unknown.yaml": "network/fabric",
    "fabric-uppercase.yaml": "network/fabric",
    "format-zero.yaml": "kiln",
    "future-format.yaml": "kiln",
    "gang-yes.yaml": "compute/trainers/gang",
    "gpu-and-instance-type.yaml": "compute/trainers",
    "group-name-underscore.yaml": "compute",
    "idle-bad.yaml": "compute/trainers/idle/gpu_below",
    "ingress-missing-from.yaml": "network/ingress/1",
    "ingress-missing-port.yaml": "network/ingress/0",
    "ingress-not-list.yaml": "network/ingress",
    "ingress-port-name.yaml": "network/ingress/0/port",
    "ingress-port-zero.yaml": "network/ingress/0/port",
    "ingress-protocol-bad.yaml": "network/ingress/0/protocol",
    "key-wrong-tier.yaml": "storage/datasets",
    "lustre-throughput-bad.yaml": "storage/scratch/throughput_per_tib",
    "lustre-unencrypted.yaml": "storage/scratch",
    "mapping-expected.yaml": "network",
    "market-bad.yaml": "compute/trainers/market",
    "missing-cluster.yaml": "",
    "missing-kiln.yaml": "",
    "missing-provider.yaml": "",
    "neither-gpu-nor-instance-type.yaml": "compute/trainers",
    "null-value.yaml": "compute/tuners/count",
    "provider-is-string.yaml": "provider",
    "provider-missing-name.yaml": "provider",
    "provider-typo.yaml": "provider/name",
    "provider-unknown.yaml": "provider/name",
    "public-not-bool.yaml": "compute/login/public",
    "role-allow-no-resources.yaml": "iam/roles/trainer/allow/0",
    "role-allow-not-list.yaml": "iam/roles/trainer/allow",
    "role-allow-not-mapping.yaml": "iam/roles/trainer/allow/0",
    "role-not-mapping.yaml": "iam/roles/trainer",
    "role-read-not-list.yaml": "iam/roles/trainer/read",
    "role-unknown-key.yaml": "iam/roles/trainer",
    "root-is-list.yaml": "",
    "root-is-string.yaml": "",
    "scheduler-type-bad.yaml": "scheduler/type",
    "several-errors-same-line.yaml": "storage/checkpoints/expire_noncurrent_after",
    "several-errors.yaml": "compute/trainers/market",
    "store-missing-tier.yaml": "storage/datasets",
    "store-name-uppercase.yaml": "storage",
    "store-tier-typo.yaml": "storage/scratch/tier",
    "store-unknown-tier.yaml": "storage/datasets/tier",
    "tag-reserved-prefix.yaml": "tags",
    "tag-value-list.yaml": "tags/owners",
    "tags-too-many.yaml": "tags",
    "ttl-bad-unit.yaml": "ttl",
    "ttl-with-space.yaml": "ttl",
    "unknown-key-in-group-with-suggestion.yaml": "compute/tuners",
    "unknown-key-in-iam.yaml": "iam",
    "unknown-key-in-provider.yaml": "provider",
    "unknown-key-in-store.yaml": "storage/checkpoints",
    "unknown-top-level-key.yaml": "",
    "vars-bad-name.yaml": "vars",
    "vars-not-scalar.yaml": "vars/image",
    "waive-not-a-list.yaml": "waive",
    "waive-shape.yaml": "waive/0",
    "zone-duplicate.yaml": "provider/zone",
    "zone-empty-list.yaml": "provider/zone",
    "workload-kind-bad.yaml": "workload/kind",
    "workload-unknown-key.yaml": "workload",
    "workload-params-missing.yaml": "workload",
    "workload-mfu-zero.yaml": "workload/mfu",
    "workload-mfu-not-a-number.yaml": "workload/mfu",
}

NOT_EXPRESSIBLE = {
    "the file is not the YAML a schema sees (syntax, encoding, duplicate keys, "
    "aliases and nesting, which kiln's reader refuses before any key is read)": [
        "alias-recursive.yaml", "alias-undefined.yaml", "bad-indentation.yaml",
        "billion-laughs.yaml", "deep-nesting.yaml", "duplicate-key-three-times.yaml",
        "duplicate-key.yaml", "key-is-list.yaml", "merge-not-mapping.yaml", "not-utf8.yaml",
        "nul-byte.yaml", "tabs-indentation.yaml", "two-documents.yaml",
        "unclosed-flow-mapping.yaml", "utf16-bom.yaml",
    ],
    "a rule between values, keys or sections (a reference to a store, role or "
    "group, two mounts, zones against the region, the scheduler's groups, a "
    "setting that needs another)": [
        "boot-local-no-instance-store.yaml", "boot-two-stores-one-mount.yaml",
        "capacity-block-no-ceiling.yaml", "disk-unencrypted.yaml",
        "efa-multizone-non-gang.yaml", "expire-without-versioning.yaml",
        "image-missing-aws.yaml", "import-not-object-lustre.yaml", "import-not-object.yaml",
        "import-undefined.yaml", "ingress-port-range-bad.yaml", "lustre-missing-capacity.yaml",
        "mount-duplicate-default.yaml", "mount-duplicate.yaml", "role-allow-sid-twice.yaml",
        "role-read-undefined-store.yaml", "role-typo.yaml", "role-undefined.yaml",
        "role-write-undefined-store.yaml", "scheduler-controller-count.yaml",
        "workload-active-above-params.yaml", "workload-lora-pretrain.yaml",
        "workload-write-within-longer.yaml",
        "scheduler-controller-unknown.yaml", "scheduler-group-without-role.yaml",
        "scheduler-no-partition.yaml", "scheduler-on-sim.yaml",
        "scheduler-partition-alone.yaml", "scheduler-partition-twice.yaml",
        "scheduler-two-defaults.yaml", "store-unencrypted.yaml", "waive-unusable.yaml",
        "zone-not-in-region.yaml", "zone-region-prefix.yaml",
    ],
    "the provider's own rules or its catalog (region and AMI names, instance "
    "types, GPU models, IAM grammar, the cloud's tag rules, user data size)": [
        "aws-region-bad.yaml", "boot-user-data-too-big.yaml", "gpu-count-not-in-catalog.yaml",
        "gpu-not-in-catalog.yaml", "image-ami-short.yaml", "image-not-ami.yaml",
        "instance-type-bad.yaml", "instance-type-no-size.yaml", "role-allow-bad-action.yaml",
        "role-allow-bad-arn.yaml", "tag-aws-prefix.yaml", "tag-aws-provider.yaml",
        "tag-key-empty.yaml", "tag-too-long.yaml", "tag-value-markup.yaml",
        "workload-deadline-unmeetable.yaml", "workload-group-cannot-run.yaml",
    ],
    "arithmetic or parsing inside a value (CIDR host bits and prefix bounds, "
    "clean mount paths, control characters, key files, GPU counts, Lustre sizes, "
    "duration bounds, dates)": [
        "access-key-comment-control.yaml", "boot-mount-relative.yaml", "boot-step-control.yaml",
        "cidr-host-bits.yaml", "cidr-prefix-too-wide.yaml", "expire-not-days.yaml",
        "gpu-bad-format.yaml", "gpu-count-too-many.yaml", "gpu-count-zero.yaml",
        "ingress-from-host-bits.yaml", "lustre-capacity-bad.yaml", "lustre-capacity-small.yaml",
        "mount-bad-char.yaml", "mount-dotdot.yaml", "mount-relative.yaml",
        "mount-system-dir.yaml", "mount-trailing-slash.yaml", "ttl-too-long.yaml",
        "ttl-zero.yaml", "waive-bad-until.yaml", "workload-dataset-size-bad.yaml",
        "workload-deadline-zero.yaml", "workload-mfu-above-one.yaml",
        "workload-params-bad-unit.yaml", "workload-params-no-unit.yaml",
        "workload-params-not-a-count.yaml", "workload-tokens-negative.yaml",
        "workload-tokens-zero.yaml",
    ],
    "${var.NAME} substitution, which kiln resolves before it reads a value": [
        "var-null.yaml", "var-quoted-column.yaml", "var-unset-no-vars.yaml", "var-unset.yaml",
        "var-unsupported-expr.yaml", "var-unterminated.yaml",
    ],
    "today's date": ["waive-expired.yaml"],
}


def leaf_paths(error):
    """The paths of an error and of every error inside its anyOf/oneOf."""
    yield "/".join(str(p) for p in error.absolute_path)
    for sub in error.context or ():
        yield from leaf_paths(sub)


def main():
    schema_path = sys.argv[1]
    root = sys.argv[2] if len(sys.argv) > 2 else "."
    os.chdir(root)
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    problems = []

    valid = sorted(glob.glob("examples/*.yaml") + glob.glob("templates/*.yaml")
                   + glob.glob("tests/specs/valid/*.yaml"))
    for path in valid:
        with open(path, encoding="utf-8") as f:
            doc = yaml.load(f, Loader=Yaml12Loader)
        for e in validator.iter_errors(doc):
            problems.append(f"{path}: refused: {'/'.join(map(str, e.absolute_path))}: "
                            f"{e.message[:200]}")

    not_expressible = {name for names in NOT_EXPRESSIBLE.values() for name in names}
    goldens = sorted(os.path.basename(p) for p in glob.glob("tests/specs/invalid/*.yaml"))
    for name in goldens:
        if name in CHECKED and name in not_expressible:
            problems.append(f"{name}: both checked and not expressible")
        elif name not in CHECKED and name not in not_expressible:
            problems.append(f"{name}: neither checked nor listed as not expressible")
    for name in sorted(set(CHECKED) | not_expressible):
        if name not in goldens:
            problems.append(f"{name}: listed, but tests/specs/invalid has no such golden")

    for name, want in sorted(CHECKED.items()):
        path = os.path.join("tests/specs/invalid", name)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            doc = yaml.load(f, Loader=Yaml12Loader)
        paths = {p for e in validator.iter_errors(doc) for p in leaf_paths(e)}
        if not paths:
            problems.append(f"{name}: accepted, but kiln validate refuses it")
        elif want not in paths:
            problems.append(f"{name}: refused, but not at '{want}' (at {sorted(paths)})")

    for p in problems:
        print(p)
    print(f"schema: {len(valid)} specs valid, {len(CHECKED)} refusals checked, "
          f"{len(not_expressible)} goldens not expressible, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
