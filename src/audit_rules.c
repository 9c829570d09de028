/*
 * audit_rules.c - the rule catalogue: every rule kiln audit has, with its
 * severity, what it finds, why that matters, the fix, and the Checkov and
 * Trivy checks that find the same thing (only ids checked against their
 * documentation; NULL where neither tool has one). man/kiln-rules.7 says the
 * same in prose; a rule's id is never renumbered or reused.
 */
#include "audit.h"

#include <string.h>

const struct audit_rule audit_rules[] = {
    {"KILN-S3-001", "error", "An object store is not encrypted at rest",
     "Objects written to an unencrypted bucket are readable by anyone who gets at the "
     "disks or a copy of them; every bucket should encrypt by default.",
     "Remove `encrypted: false` and `allow_unencrypted: true` from the store.", "CKV_AWS_19",
     "AVD-AWS-0088"},
    {"KILN-S3-002", "error", "An object store does not block public access",
     "Without the public access block, one mistaken bucket policy or ACL makes the data "
     "public.",
     "kiln turns the block on for every bucket it makes; plan again so the bucket's "
     "block_public_access returns to true, and find who turned it off.",
     "CKV2_AWS_6", "AVD-AWS-0094"},
    {"KILN-S3-003", "warning", "A bucket that roles write to has no versioning",
     "A bucket that a role writes to holds what its jobs produce (checkpoints, results, "
     "weights, whatever they are); without versioning, one bad write or delete loses it for "
     "good.",
     "Add `versioning: true` (and `expire_noncurrent_after: 30d` to bound the cost) to the "
     "store.",
     "CKV_AWS_21", "AVD-AWS-0090"},
    {"KILN-EC2-001", "error", "Nodes do not require IMDSv2",
     "With IMDSv1 a server-side request forgery on any node reads the node role's "
     "credentials from the metadata service.",
     "kiln launches every node with HttpTokens=required and the spec has no setting to "
     "change it; plan again so the group's http_tokens returns to \"required\".",
     "CKV_AWS_79", "AVD-AWS-0028"},
    {"KILN-EBS-001", "error", "Node root disks are not encrypted",
     "A root disk holds datasets in flight, caches and credentials; unencrypted, its "
     "snapshots and the volume itself are readable outside the instance.",
     "Remove `encrypted: false` and `allow_unencrypted: true` from the group's disk.", "CKV_AWS_8",
     "AVD-AWS-0131"},
    {"KILN-FSX-001", "error", "A Lustre file system is not encrypted at rest",
     "Scratch file systems hold copies of the datasets and the newest checkpoints.",
     "FSx for Lustre always encrypts at rest; plan again so the file system's encrypted "
     "returns to true.",
     NULL, NULL},
    {"KILN-EFS-001", "error", "An NFS file system is not encrypted at rest",
     "Home and shared directories hold code, keys and results.",
     "Remove `encrypted: false` and `allow_unencrypted: true` from the store (EFS "
     "encryption is chosen at creation: the store is replaced).",
     "CKV_AWS_42", "AVD-AWS-0037"},
    {"KILN-ENC-001", "warning", "allow_unencrypted is set",
     "allow_unencrypted: true is the switch that lets encryption at rest be turned off; "
     "a reviewer should know it is there even while encryption is still on.",
     "Remove `allow_unencrypted: true` unless the data must be stored unencrypted, and "
     "then waive this finding with the reason.",
     NULL, NULL},
    {"KILN-IAM-001", "error", "A role is granted a wildcard action",
     "A wildcard action (\"*\", \"s3:*\", \"s3:Get*\") grants every present and future "
     "action it matches, including ones nobody reviewed.",
     "Name the actions the role needs; prefer `read:` and `write:` under iam.roles, which "
     "kiln compiles to the fewest actions.",
     "CKV_AWS_63", "AVD-AWS-0057"},
    {"KILN-IAM-002", "error", "A role is granted an action on every resource (*)",
     "A resource of \"*\" reaches every bucket, file system and role in the account, not "
     "only this cluster's.",
     "Name the resources (exact ARNs) in the role's `allow:`, or use `read:` and `write:`.",
     "CKV_AWS_355", "AVD-AWS-0057"},
    {"KILN-IAM-003", "error", "A role may pass any role (iam:PassRole on *)",
     "Passing any role to a new instance or job is a privilege escalation: the node gets "
     "whatever the most powerful role in the account can do.",
     "Limit iam:PassRole to the ARNs of the roles the node must pass.", "CKV_AWS_286",
     "AVD-AWS-0342"},
    {"KILN-IAM-004", "error", "A role is admin-equivalent",
     "\"*\" on \"*\", or any iam:* action, lets the role grant itself anything: one "
     "compromised node owns the account.",
     "Remove the grant; give the role the actions and resources it needs by name.", "CKV_AWS_62",
     "AVD-AWS-0057"},
    {"KILN-NET-001", "warning", "Ingress is open to the world on a declared port",
     "Every address on the internet can reach the nodes with public: true on this port; "
     "that is sometimes intended (a public endpoint) and should be a decision.",
     "Narrow `from` to the addresses that need the port, or waive this finding for the "
     "rule (address: network.ingress[N]) with the reason.",
     NULL, NULL},
    {"KILN-NET-002", "error", "SSH is open to the world",
     "Port 22 open to 0.0.0.0/0 is scanned and brute-forced within minutes of launch.",
     "Set `from` to an office or VPN range, or reach the nodes through a login group "
     "that only that range can reach.",
     "CKV_AWS_24", "AVD-AWS-0107"},
    {"KILN-NET-003", "error", "The plan opens a port to the world that the spec does not declare",
     "kiln builds the security group from network.ingress; a world-open rule that the spec "
     "does not declare was added some other way and nobody reviewed it.",
     "Declare the rule under network.ingress if it is wanted, or find what added it.", NULL, NULL},
    {"KILN-SSH-001", "warning", "A login key is of a weak type",
     "ssh-dss keys are 1024-bit DSA, which OpenSSH 7.0 and later refuse; ssh-rsa keys under "
     "3072 bits fall short of the 128-bit security level NIST SP 800-57 asks of keys used "
     "past 2030. A node that accepts one trusts a key an attacker can hope to break.",
     "Make a new key with `ssh-keygen -t ed25519` and list its .pub instead under "
     "access.ssh_keys.",
     NULL, NULL},
    {"KILN-GPU-001", "warning", "A GPU group has neither a TTL nor a budget",
     "GPU nodes cost tens of dollars an hour each; a cluster with neither a TTL nor a "
     "budget runs, and bills, until someone remembers it.",
     "Add `ttl: 72h` (kiln reap tears the cluster down after it) or "
     "`budget: {max_hourly_usd: N}`.",
     NULL, NULL},
    {"KILN-GPU-002", "warning", "A multi-node GPU group has no EFA fabric",
     "Without EFA, collective operations between nodes run over TCP: multi-node training "
     "scales poorly and the GPUs wait on the network.",
     "Set `network.fabric: efa`; with `gpu:`, kiln then picks the cheapest type with "
     "EFA.",
     NULL, NULL},
    {"KILN-WORK-001", "warning", "A compute group cannot run the workload within its deadline",
     "The spec's workload: says what the cluster is for; a group too small to finish the "
     "run by workload.deadline (or to hold the model in its GPUs' memory) is paid for and "
     "still misses what it is for.",
     "Give the group the count the finding names, or remove its count and let kiln derive "
     "it from the workload; or give a later deadline.",
     NULL, NULL},
    {"KILN-WORK-002", "warning", "A Lustre store is too slow for the workload's checkpoints",
     "While a checkpoint is written the GPUs wait (or the run risks losing the interval): "
     "a file system that takes longer than workload.checkpoint.write_within to write one "
     "stalls every node on every checkpoint.",
     "Raise the store's throughput_per_tib or capacity_gb to the figures the finding names "
     "(kiln size prints them), or give a longer write_within.",
     NULL, NULL},
    {"KILN-WORK-003", "warning", "The workload trains on more than one node without EFA",
     "Data-parallel training exchanges every gradient between nodes at each step; over "
     "TCP it runs far below the MFU kiln's time and cost assume.",
     "Set `network.fabric: efa`.", NULL, NULL},
    {"KILN-COST-001", "error", "The plan's hourly cost is above the budget",
     "budget.max_hourly_usd is the most the spec's owner agreed to spend per hour.",
     "Lower the node count or choose cheaper types, or raise budget.max_hourly_usd.", NULL, NULL},
    {"KILN-COST-002", "error", "The plan buys more up front than the budget allows",
     "budget.max_upfront_usd is the most the spec's owner agreed to pay up front, for "
     "capacity bought for a window (Capacity Blocks), which cannot be undone.",
     "Ask for a shorter or smaller block, or raise budget.max_upfront_usd.", NULL, NULL},
    {"KILN-STORE-001", "warning", "A store that holds data is deleted with the cluster",
     "With deletion: delete, kiln destroy and a replacement delete the store and "
     "everything in it.",
     "Use `deletion: retain` (the default) unless the data is disposable.", NULL, NULL},
    {"KILN-LOCAL-001", "info", "A local store loses its data with its node",
     "A local store is the nodes' instance-store NVMe: fast scratch whose data is gone "
     "when a node stops, fails or is replaced, and which no backup or snapshot covers.",
     "Keep only what can be rebuilt there (caches, shards staged from an object store); "
     "write checkpoints to an object or lustre store.",
     NULL, NULL},
    {"KILN-BOOT-001", "error", "A bootstrap step looks like it holds a secret",
     "Bootstrap steps go into the nodes' user data, which anyone allowed to describe an "
     "instance (ec2:DescribeInstanceAttribute) reads back in plain text, and into the plan.",
     "Keep the secret in SSM Parameter Store (SecureString) or Secrets Manager, allow the "
     "group's role to read it, and fetch it in the step (aws ssm get-parameter "
     "--with-decryption) instead of writing it there.",
     NULL, NULL},
    {"KILN-WAIVE-001", "error", "A waiver has no reason",
     "A waiver is an accepted risk; without the reason nobody can judge it later.",
     "Add `reason:` saying why the finding is accepted and who accepted it.", NULL, NULL},
    {"KILN-WAIVE-002", "error", "A waiver has expired",
     "A waiver holds through its `until:` date; after it the finding it waived counts "
     "again.",
     "Fix what the waiver covered, or review it and move `until:` forward.", NULL, NULL},
    {"KILN-WAIVE-003", "error", "A waiver names an unknown rule",
     "A waiver of a rule kiln does not have waives nothing: usually a typo, which leaves "
     "the intended finding in force.",
     "Use a rule id from kiln-rules(7); KILN-WAIVE rules cannot be waived.", NULL, NULL},
    {"KILN-WAIVE-004", "info", "A waiver matches no finding",
     "A waiver that waives nothing is left over from a fixed finding, or its address is "
     "wrong.",
     "Remove the waiver, or correct its `address:` (a resource address or a spec path).", NULL,
     NULL},
};

const size_t audit_nrules = ARRAY_SIZE(audit_rules);

const struct audit_rule *audit_rule_find(const char *id)
{
	size_t i;

	for (i = 0; i < audit_nrules; i++)
		if (strcmp(audit_rules[i].id, id) == 0)
			return &audit_rules[i];
	return NULL;
}
