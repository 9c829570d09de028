#!/usr/bin/env python3
"""rename-exports.py [--check] [ROOT] - exported functions renamed module_verb (issue 32).

STYLE.md and HACKING.md: an exported name leads to its file, as libgit2's
do (git_remote_create is in remote.c). tests/check-export-names.py lists
the exported functions whose name does not; RENAMES below is the map that
made that list empty, old name -> new name, with the file each is defined
in. The new name starts with the file's name (or the module of a family:
aws_ for providers/aws/, spec_load_ for the spec loader's section files).

The script replaces each old name as a whole word (C identifiers: letters,
digits, '_') in every .c, .h and .md file under src/, providers/, tests/,
bench/, docs/ and in HACKING.md, so it can be run again after a branch
written with the old names is merged: it changes only what still uses an
old name, and is a no-op on a tree already renamed.

Some names are made by the preprocessor: aws_ec2.h's EC2_OPS(PREFIX)
declares PREFIX_list, PREFIX_read... and aws_types.c's AWS_TYPE(tname,
PREFIX, ...) and AWS_TYPE_FIXED take them by PREFIX. PASTED renames those
macro arguments (and only those) where PREFIX_list was renamed.

--check changes nothing and exits 1 when an old name is still used (the
files and counts are printed), 0 when none is.
"""
import os
import re
import sys

TOPS = ("src", "providers", "tests", "bench", "docs")
FILES = ("HACKING.md",)
SUFFIXES = (".c", ".h", ".md")

# old name, new name  # the file defining it
RENAMES = [
    ("pexp_deletion", "expand_deletion"),  # providers/expand.c
    ("run_ui", "cmd_run_ui"),  # src/cmd_run.c
    ("op_open", "operation_open"),  # src/operation.c
    ("op_quota_check", "operation_quota_check"),  # src/operation.c
    ("capacity_block_cost", "aws_capacity_block_cost"),  # providers/aws/aws_capacity.c
    ("capacity_fall_back", "aws_capacity_fall_back"),  # providers/aws/aws_capacity.c
    ("capacity_launch_init", "aws_capacity_launch_init"),  # providers/aws/aws_capacity.c
    ("capacity_launch_params", "aws_capacity_launch_params"),  # providers/aws/aws_capacity.c
    ("capacity_launch_refused", "aws_capacity_launch_refused"),  # providers/aws/aws_capacity.c
    ("capacity_launch_zone", "aws_capacity_launch_zone"),  # providers/aws/aws_capacity.c
    ("capacity_live", "aws_capacity_live"),  # providers/aws/aws_capacity.c
    ("capacity_market", "aws_capacity_market"),  # providers/aws/aws_capacity.c
    ("capacity_preflight", "aws_capacity_preflight"),  # providers/aws/aws_capacity.c
    ("capacity_reservation_read", "aws_capacity_reservation_read"),  # providers/aws/aws_capacity.c
    ("capacity_zone_listed", "aws_capacity_zone_listed"),  # providers/aws/aws_capacity.c
    ("cb_create", "aws_cb_create"),  # providers/aws/aws_capacity.c
    ("cb_delete", "aws_cb_delete"),  # providers/aws/aws_capacity.c
    ("cb_list", "aws_cb_list"),  # providers/aws/aws_capacity.c
    ("cb_read", "aws_cb_read"),  # providers/aws/aws_capacity.c
    ("cb_update", "aws_cb_update"),  # providers/aws/aws_capacity.c
    ("cb_wait", "aws_cb_wait"),  # providers/aws/aws_capacity.c
    ("test_kill_at", "aws_test_kill_at"),  # providers/aws/aws_capacity.c
    ("capacity_group_fit", "aws_capacity_group_fit"),  # providers/aws/aws_capacity_group.c
    ("capacity_preflight_group", "aws_capacity_preflight_group"),  # providers/aws/aws_capacity_group.c
    ("ec2_claim_tags", "aws_ec2_claim_tags"),  # providers/aws/aws_ec2.c
    ("ec2_create_lost", "aws_ec2_create_lost"),  # providers/aws/aws_ec2.c
    ("ec2_created_id", "aws_ec2_created_id"),  # providers/aws/aws_ec2.c
    ("ec2_describe", "aws_ec2_describe"),  # providers/aws/aws_ec2.c
    ("ec2_find_address", "aws_ec2_find_address"),  # providers/aws/aws_ec2.c
    ("ec2_find_tagged", "aws_ec2_find_tagged"),  # providers/aws/aws_ec2.c
    ("ec2_item_tags", "aws_ec2_item_tags"),  # providers/aws/aws_ec2.c
    ("ec2_list", "aws_ec2_list"),  # providers/aws/aws_ec2.c
    ("ec2_put_tags", "aws_ec2_put_tags"),  # providers/aws/aws_ec2.c
    ("ec2_read", "aws_ec2_read"),  # providers/aws/aws_ec2.c
    ("ec2_wait_now", "aws_ec2_wait_now"),  # providers/aws/aws_ec2.c
    ("efs_claim", "aws_efs_claim"),  # providers/aws/aws_efs.c
    ("efs_create", "aws_efs_create"),  # providers/aws/aws_efs.c
    ("efs_delete", "aws_efs_delete"),  # providers/aws/aws_efs.c
    ("efs_list", "aws_efs_list"),  # providers/aws/aws_efs.c
    ("efs_read", "aws_efs_read"),  # providers/aws/aws_efs.c
    ("efs_update", "aws_efs_update"),  # providers/aws/aws_efs.c
    ("efs_wait", "aws_efs_wait"),  # providers/aws/aws_efs.c
    ("mt_create", "aws_mt_create"),  # providers/aws/aws_efs.c
    ("mt_delete", "aws_mt_delete"),  # providers/aws/aws_efs.c
    ("mt_list", "aws_mt_list"),  # providers/aws/aws_efs.c
    ("mt_read", "aws_mt_read"),  # providers/aws/aws_efs.c
    ("mt_wait", "aws_mt_wait"),  # providers/aws/aws_efs.c
    ("fsx_claim", "aws_fsx_claim"),  # providers/aws/aws_fsx.c
    ("import_create", "aws_import_create"),  # providers/aws/aws_fsx.c
    ("import_delete", "aws_import_delete"),  # providers/aws/aws_fsx.c
    ("import_list", "aws_import_list"),  # providers/aws/aws_fsx.c
    ("import_read", "aws_import_read"),  # providers/aws/aws_fsx.c
    ("import_wait", "aws_import_wait"),  # providers/aws/aws_fsx.c
    ("lustre_create", "aws_lustre_create"),  # providers/aws/aws_fsx.c
    ("lustre_delete", "aws_lustre_delete"),  # providers/aws/aws_fsx.c
    ("lustre_list", "aws_lustre_list"),  # providers/aws/aws_fsx.c
    ("lustre_read", "aws_lustre_read"),  # providers/aws/aws_fsx.c
    ("lustre_update", "aws_lustre_update"),  # providers/aws/aws_fsx.c
    ("lustre_wait", "aws_lustre_wait"),  # providers/aws/aws_fsx.c
    ("role_claim", "aws_role_claim"),  # providers/aws/aws_iam.c
    ("role_create", "aws_role_create"),  # providers/aws/aws_iam.c
    ("role_delete", "aws_role_delete"),  # providers/aws/aws_iam.c
    ("role_list", "aws_role_list"),  # providers/aws/aws_iam.c
    ("role_read", "aws_role_read"),  # providers/aws/aws_iam.c
    ("role_update", "aws_role_update"),  # providers/aws/aws_iam.c
    ("role_wait", "aws_role_wait"),  # providers/aws/aws_iam.c
    ("launch_alive", "aws_launch_alive"),  # providers/aws/aws_launch.c
    ("launch_describe", "aws_launch_describe"),  # providers/aws/aws_launch.c
    ("launch_describe_scope", "aws_launch_describe_scope"),  # providers/aws/aws_launch.c
    ("launch_efa_interfaces", "aws_launch_efa_interfaces"),  # providers/aws/aws_launch.c
    ("launch_in", "aws_launch_in"),  # providers/aws/aws_launch.c
    ("launch_init", "aws_launch_init"),  # providers/aws/aws_launch.c
    ("launch_release", "aws_launch_release"),  # providers/aws/aws_launch.c
    ("launch_root_device", "aws_launch_root_device"),  # providers/aws/aws_launch.c
    ("launch_run", "aws_launch_run"),  # providers/aws/aws_launch.c
    ("launch_state_filter", "aws_launch_state_filter"),  # providers/aws/aws_launch.c
    ("launch_terminate", "aws_launch_terminate"),  # providers/aws/aws_launch.c
    ("launch_terminate_range", "aws_launch_terminate_range"),  # providers/aws/aws_launch.c
    ("launch_user_data_of", "aws_launch_user_data_of"),  # providers/aws/aws_launch.c
    ("ec2_outside_vpc", "aws_ec2_outside_vpc"),  # providers/aws/aws_net.c
    ("ec2_vpcs", "aws_ec2_vpcs"),  # providers/aws/aws_net.c
    ("igw_create", "aws_igw_create"),  # providers/aws/aws_net.c
    ("igw_delete", "aws_igw_delete"),  # providers/aws/aws_net.c
    ("igw_list", "aws_igw_list"),  # providers/aws/aws_net.c
    ("igw_read", "aws_igw_read"),  # providers/aws/aws_net.c
    ("igw_wait", "aws_igw_wait"),  # providers/aws/aws_net.c
    ("pg_create", "aws_pg_create"),  # providers/aws/aws_net.c
    ("pg_delete", "aws_pg_delete"),  # providers/aws/aws_net.c
    ("pg_list", "aws_pg_list"),  # providers/aws/aws_net.c
    ("pg_read", "aws_pg_read"),  # providers/aws/aws_net.c
    ("pg_wait", "aws_pg_wait"),  # providers/aws/aws_net.c
    ("sg_create", "aws_sg_create"),  # providers/aws/aws_net.c
    ("sg_delete", "aws_sg_delete"),  # providers/aws/aws_net.c
    ("sg_list", "aws_sg_list"),  # providers/aws/aws_net.c
    ("sg_read", "aws_sg_read"),  # providers/aws/aws_net.c
    ("sg_update", "aws_sg_update"),  # providers/aws/aws_net.c
    ("sg_wait", "aws_sg_wait"),  # providers/aws/aws_net.c
    ("subnet_create", "aws_subnet_create"),  # providers/aws/aws_net.c
    ("subnet_delete", "aws_subnet_delete"),  # providers/aws/aws_net.c
    ("subnet_list", "aws_subnet_list"),  # providers/aws/aws_net.c
    ("subnet_read", "aws_subnet_read"),  # providers/aws/aws_net.c
    ("subnet_wait", "aws_subnet_wait"),  # providers/aws/aws_net.c
    ("vpc_create", "aws_vpc_create"),  # providers/aws/aws_net.c
    ("vpc_delete", "aws_vpc_delete"),  # providers/aws/aws_net.c
    ("vpc_list", "aws_vpc_list"),  # providers/aws/aws_net.c
    ("vpc_read", "aws_vpc_read"),  # providers/aws/aws_net.c
    ("vpc_wait", "aws_vpc_wait"),  # providers/aws/aws_net.c
    ("ig_claim", "aws_ig_claim"),  # providers/aws/aws_nodes.c
    ("ig_create", "aws_ig_create"),  # providers/aws/aws_nodes.c
    ("ig_delete", "aws_ig_delete"),  # providers/aws/aws_nodes.c
    ("ig_list", "aws_ig_list"),  # providers/aws/aws_nodes.c
    ("ig_read", "aws_ig_read"),  # providers/aws/aws_nodes.c
    ("ig_replace_nodes", "aws_ig_replace_nodes"),  # providers/aws/aws_nodes.c
    ("ig_update", "aws_ig_update"),  # providers/aws/aws_nodes.c
    ("ig_wait", "aws_ig_wait"),  # providers/aws/aws_nodes.c
    ("bucket_claim", "aws_bucket_claim"),  # providers/aws/aws_s3.c
    ("bucket_create", "aws_bucket_create"),  # providers/aws/aws_s3.c
    ("bucket_delete", "aws_bucket_delete"),  # providers/aws/aws_s3.c
    ("bucket_list", "aws_bucket_list"),  # providers/aws/aws_s3.c
    ("bucket_read", "aws_bucket_read"),  # providers/aws/aws_s3.c
    ("bucket_update", "aws_bucket_update"),  # providers/aws/aws_s3.c
    ("bucket_wait", "aws_bucket_wait"),  # providers/aws/aws_s3.c
    ("ssmp_claim", "aws_ssmp_claim"),  # providers/aws/aws_ssm.c
    ("ssmp_create", "aws_ssmp_create"),  # providers/aws/aws_ssm.c
    ("ssmp_delete", "aws_ssmp_delete"),  # providers/aws/aws_ssm.c
    ("ssmp_list", "aws_ssmp_list"),  # providers/aws/aws_ssm.c
    ("ssmp_read", "aws_ssmp_read"),  # providers/aws/aws_ssm.c
    ("ssmp_update", "aws_ssmp_update"),  # providers/aws/aws_ssm.c
    ("ssmp_wait", "aws_ssmp_wait"),  # providers/aws/aws_ssm.c
    ("zones_launch", "aws_zones_launch"),  # providers/aws/aws_zones.c
    ("boot_check_size", "bootstrap_check_size"),  # providers/bootstrap.c
    ("boot_check_spec", "bootstrap_check_spec"),  # providers/bootstrap.c
    ("boot_digest", "bootstrap_digest"),  # providers/bootstrap.c
    ("boot_document", "bootstrap_document"),  # providers/bootstrap.c
    ("boot_efa_devices", "bootstrap_efa_devices"),  # providers/bootstrap.c
    ("boot_fill", "bootstrap_fill"),  # providers/bootstrap.c
    ("boot_group_attrs", "bootstrap_group_attrs"),  # providers/bootstrap.c
    ("boot_group_document", "bootstrap_group_document"),  # providers/bootstrap.c
    ("boot_local_store", "bootstrap_local_store"),  # providers/bootstrap.c
    ("boot_mounts_store", "bootstrap_mounts_store"),  # providers/bootstrap.c
    ("boot_mounted_stores", "bootstrap_mounted_stores"),  # providers/bootstrap.c (merged from main after the first run)
    ("boot_placeholder", "bootstrap_placeholder"),  # providers/bootstrap.c
    ("pexp_access_attrs", "expand_access_attrs"),  # providers/expand.c
    ("pexp_after", "expand_after"),  # providers/expand.c
    ("pexp_allow_normalize", "expand_allow_normalize"),  # providers/expand.c
    ("pexp_attr", "expand_attr"),  # providers/expand.c
    ("pexp_capacity_block", "expand_capacity_block"),  # providers/expand.c
    ("pexp_check_groups", "expand_check_groups"),  # providers/expand.c
    ("pexp_dep", "expand_dep"),  # providers/expand.c
    ("pexp_file_systems", "expand_file_systems"),  # providers/expand.c
    ("pexp_group_attrs", "expand_group_attrs"),  # providers/expand.c
    ("pexp_group_capacity", "expand_group_capacity"),  # providers/expand.c
    ("pexp_group_type", "expand_group_type"),  # providers/expand.c
    ("pexp_resource", "expand_resource"),  # providers/expand.c
    ("pexp_role_allow", "expand_role_allow"),  # providers/expand.c
    ("pexp_role_policy_attrs", "expand_role_policy_attrs"),  # providers/expand.c
    ("pexp_sort_deps", "expand_sort_deps"),  # providers/expand.c
    ("pexp_sorted_strings", "expand_sorted_strings"),  # providers/expand.c
    ("pexp_str", "expand_str"),  # providers/expand.c
    ("pexp_where", "expand_where"),  # providers/expand.c
    ("pexp_why", "expand_why"),  # providers/expand.c
    ("prov_node_health", "nodes_health"),  # providers/nodes.c
    ("prov_node_new", "nodes_new"),  # providers/nodes.c
    ("prov_nodes_order", "nodes_order"),  # providers/nodes.c
    ("prov_json_sort", "provider_json_sort"),  # providers/providers.c
    ("prov_live_address", "provider_live_address"),  # providers/providers.c
    ("prov_live_lineage", "provider_live_lineage"),  # providers/providers.c
    ("prov_need_created", "provider_need_created"),  # providers/providers.c
    ("prov_policy_name", "provider_policy_name"),  # providers/providers.c
    ("prov_scope_tags", "provider_scope_tags"),  # providers/providers.c
    ("prov_tag_value", "provider_tag_value"),  # providers/providers.c
    ("prov_type_attr", "provider_type_attr"),  # providers/providers.c
    ("approval_check_describe", "approve_check_describe"),  # src/approve.c
    ("approval_report_release", "approve_report_release"),  # src/approve.c
    ("approval_status_name", "approve_status_name"),  # src/approve.c
    ("grow_array", "kiln_array_grow"),  # src/base.c
    ("run_ask", "cmd_run_ask"),  # src/cmd_run.c
    ("run_confirm", "cmd_run_confirm"),  # src/cmd_run.c
    ("run_engine_only", "cmd_run_engine_only"),  # src/cmd_run.c
    ("run_flags_handle", "cmd_run_flags_handle"),  # src/cmd_run.c
    ("run_flags_init", "cmd_run_flags_init"),  # src/cmd_run.c
    ("run_flags_parse", "cmd_run_flags_parse"),  # src/cmd_run.c
    ("run_flags_release", "cmd_run_flags_release"),  # src/cmd_run.c
    ("run_health_report", "cmd_run_health_report"),  # src/cmd_run.c
    ("run_health_show", "cmd_run_health_show"),  # src/cmd_run.c
    ("run_health_timeout", "cmd_run_health_timeout"),  # src/cmd_run.c
    ("run_health_waiting", "cmd_run_health_waiting"),  # src/cmd_run.c
    ("run_loaded", "cmd_run_loaded"),  # src/cmd_run.c
    ("run_need_cluster", "cmd_run_need_cluster"),  # src/cmd_run.c
    ("run_open", "cmd_run_open"),  # src/cmd_run.c
    ("run_options", "cmd_run_options"),  # src/cmd_run.c
    ("run_parallelism_parse", "cmd_run_parallelism_parse"),  # src/cmd_run.c
    ("run_plan", "cmd_run_plan"),  # src/cmd_run.c
    ("run_plan_spec", "cmd_run_plan_spec"),  # src/cmd_run.c
    ("run_print_json", "cmd_run_print_json"),  # src/cmd_run.c
    ("run_report_failures", "cmd_run_report_failures"),  # src/cmd_run.c
    ("run_spec_operand", "cmd_run_spec_operand"),  # src/cmd_run.c
    ("store_flags_handle", "cmd_store_flags_handle"),  # src/cmd_store.c
    ("store_flags_open", "cmd_store_flags_open"),  # src/cmd_store.c
    ("store_flags_plan_workspace", "cmd_store_flags_plan_workspace"),  # src/cmd_store.c
    ("env_long", "log_env_long"),  # src/log.c
    ("cmd_find_info", "main_find_info"),  # src/main.c
    ("cmd_info_at", "main_info_at"),  # src/main.c
    ("cmd_print_main_help", "main_print_help"),  # src/main.c
    ("cmd_report_unknown", "main_report_unknown"),  # src/main.c
    ("op_apply", "operation_apply"),  # src/operation.c
    ("op_apply_outcome_release", "operation_apply_outcome_release"),  # src/operation.c
    ("op_close", "operation_close"),  # src/operation.c
    ("op_commit", "operation_commit"),  # src/operation.c
    ("op_destroy", "operation_destroy"),  # src/operation.c
    ("op_expiry_prepare", "operation_expiry_prepare"),  # src/operation.c
    ("op_finish", "operation_finish"),  # src/operation.c
    ("op_health_wait", "operation_health_wait"),  # src/operation.c
    ("op_iam_policy", "operation_iam_policy"),  # src/operation.c
    ("op_idle_prepare", "operation_idle_prepare"),  # src/operation.c
    ("op_key_check", "operation_key_check"),  # src/operation.c
    ("op_load", "operation_load"),  # src/operation.c
    ("op_open_engine", "operation_open_engine"),  # src/operation.c
    ("op_open_state", "operation_open_state"),  # src/operation.c
    ("op_owner", "operation_owner"),  # src/operation.c
    ("op_plan", "operation_plan"),  # src/operation.c
    ("op_plan_errors", "operation_plan_errors"),  # src/operation.c
    ("op_plan_is_empty", "operation_plan_is_empty"),  # src/operation.c
    ("op_plan_purchase", "operation_plan_purchase"),  # src/operation.c
    ("op_plan_spec", "operation_plan_spec"),  # src/operation.c
    ("op_quota", "operation_quota"),  # src/operation.c (merged from main after the first run)
    ("op_plan_upfront", "operation_plan_upfront"),  # src/operation.c
    ("op_repair", "operation_repair"),  # src/operation.c
    ("op_repair_outcome_release", "operation_repair_outcome_release"),  # src/operation.c
    ("op_saved_check", "operation_saved_check"),  # src/operation.c
    ("op_saved_replan", "operation_saved_replan"),  # src/operation.c
    ("op_seal_secrets", "operation_seal_secrets"),  # src/operation.c
    ("op_summary_counts", "operation_summary_counts"),  # src/operation.c
    ("op_takeover", "operation_takeover"),  # src/operation.c
    ("op_takeover_result_release", "operation_takeover_result_release"),  # src/operation.c
    ("op_window_prepare", "operation_window_prepare"),  # src/operation.c
    ("sched_ask_controller", "scheduler_ask_controller"),  # src/scheduler.c
    ("sched_parse_sinfo", "scheduler_parse_sinfo"),  # src/scheduler.c
    ("sched_run_bounded", "scheduler_run_bounded"),  # src/scheduler.c
    ("sched_run_verdict", "scheduler_run_verdict"),  # src/scheduler.c
    ("ld_access", "spec_load_access"),  # src/spec_access.c
    ("ld_bootstrap", "spec_load_bootstrap"),  # src/spec_boot.c
    ("ld_health", "spec_load_health"),  # src/spec_boot.c
    ("ld_capacity", "spec_load_capacity"),  # src/spec_capacity.c
    ("ld_group", "spec_load_group"),  # src/spec_compute.c
    ("ld_check_keys", "spec_check_keys"),  # src/spec_get.c
    ("ld_check_name", "spec_check_name"),  # src/spec_get.c
    ("ld_err", "spec_err"),  # src/spec_get.c
    ("ld_expect_map", "spec_expect_map"),  # src/spec_get.c
    ("ld_get_bool", "spec_get_bool"),  # src/spec_get.c
    ("ld_get_cidr", "spec_get_cidr"),  # src/spec_get.c
    ("ld_get_duration", "spec_get_duration"),  # src/spec_get.c
    ("ld_get_enum", "spec_get_enum"),  # src/spec_get.c
    ("ld_get_int", "spec_get_int"),  # src/spec_get.c
    ("ld_get_number", "spec_get_number"),  # src/spec_get.c
    ("ld_get_string", "spec_get_string"),  # src/spec_get.c
    ("ld_hint_choices", "spec_hint_choices"),  # src/spec_get.c
    ("ld_join_names", "spec_join_names"),  # src/spec_get.c
    ("ld_scalar", "spec_scalar"),  # src/spec_get.c
    ("ld_var_find", "spec_var_find"),  # src/spec_get.c
    ("ld_var_name_ok", "spec_var_name_ok"),  # src/spec_get.c
    ("ld_idle", "spec_load_idle"),  # src/spec_idle.c
    ("ld_group_partition", "spec_load_group_partition"),  # src/spec_scheduler.c
    ("ld_scheduler", "spec_load_scheduler"),  # src/spec_scheduler.c
    ("ld_iam", "spec_load_iam"),  # src/spec_storage.c
    ("ld_store", "spec_load_store"),  # src/spec_storage.c
    ("ld_waive", "spec_load_waive"),  # src/spec_waive.c
    ("ld_workload", "spec_load_workload"),  # src/spec_workload.c
    ("text_flaw_find", "str_text_flaw_find"),  # src/str.c
    ("text_offset", "str_text_offset"),  # src/str.c
    ("text_position", "str_text_position"),  # src/str.c
    ("utf8_decode", "str_utf8_decode"),  # src/str.c
    ("utf8_invalid_offset", "str_utf8_invalid_offset"),  # src/str.c
    ("duration_format", "timefmt_duration_format"),  # src/timefmt.c
    ("duration_parse", "timefmt_duration_parse"),  # src/timefmt.c
    ("time_format_rfc3339", "timefmt_time_format_rfc3339"),  # src/timefmt.c
    ("time_parse_rfc3339", "timefmt_time_parse_rfc3339"),  # src/timefmt.c
    ("util_now", "timefmt_now"),  # src/timefmt.c
    ("file_open_regular", "util_file_open_regular"),  # src/util.c
    ("file_read_all", "util_file_read_all"),  # src/util.c
    ("file_read_regular", "util_file_read_regular"),  # src/util.c
    ("remove_tree", "util_remove_tree"),  # src/util.c
    ("size_format", "util_size_format"),  # src/util.c
    ("uuid_v4", "util_uuid_v4"),  # src/util.c
    ("util_diagnose", "utilization_diagnose"),  # src/utilization.c
    ("util_idle_groups", "utilization_idle_groups"),  # src/utilization.c
    ("util_idle_policy", "utilization_idle_policy"),  # src/utilization.c
    ("util_mean", "utilization_mean"),  # src/utilization.c
    ("util_measure", "utilization_measure"),  # src/utilization.c
    ("util_window_check", "utilization_window_check"),  # src/utilization.c
    ("ynode_describe", "ydoc_describe"),  # src/ydoc.c
    ("ynode_get", "ydoc_get"),  # src/ydoc.c
    ("ynode_is_null", "ydoc_is_null"),  # src/ydoc.c
    ("ynode_key", "ydoc_key"),  # src/ydoc.c
]


# Macros that paste a function family's prefix: (macro, index of the argument).
PASTED = (("EC2_OPS", 0), ("AWS_TYPE", 1), ("AWS_TYPE_FIXED", 1))


def pasted(text, new):
    """text with the family prefixes PASTED's macros take renamed, and how many."""
    count = 0

    def one(m):
        nonlocal count
        args = m.group(2).split(",")
        index = dict(PASTED)[m.group(1)]
        if index >= len(args):
            return m.group(0)
        old = args[index].strip()
        if old + "_list" not in new:
            return m.group(0)
        count += 1
        args[index] = args[index].replace(old, new[old + "_list"][:-len("_list")])
        return m.group(1) + "(" + ",".join(args)

    macros = "|".join(sorted((re.escape(m) for m, _ in PASTED), key=len, reverse=True))
    # The arguments up to the first parenthesis: the prefix comes before any.
    out = re.sub(r"\b(" + macros + r")\(([^()#]*)", one, text)
    return out, count


def files(root):
    for top in TOPS:
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if name.endswith(SUFFIXES):
                    yield os.path.join(folder, name)
    for name in FILES:
        path = os.path.join(root, name)
        if os.path.exists(path):
            yield path


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print("usage: rename-exports.py [--check] [ROOT]", file=sys.stderr)
        return 2
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    new = dict(RENAMES)
    if len(new) != len(RENAMES) or set(new) & set(new.values()):
        print("rename-exports.py: RENAMES names an old name twice, or a new name is an old "
              "one", file=sys.stderr)
        return 2
    word = re.compile(r"\b(" + "|".join(sorted(map(re.escape, new), key=len, reverse=True)) +
                      r")\b")
    changed = 0
    for path in files(root):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        out, n = word.subn(lambda m: new[m.group(1)], text)
        out, k = pasted(out, new)
        n += k
        if not n:
            continue
        changed += 1
        print(f"{os.path.relpath(path, root)}: {n}")
        if not check:
            with open(path, "w", encoding="utf-8") as f:
                f.write(out)
    if check:
        return 1 if changed else 0
    print(f"rename-exports.py: {changed} files changed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
