/*
 * cmds.h - every command's entry point and help, for main.c's table.
 */
#ifndef KILN_CMDS_H
#define KILN_CMDS_H

#include <stdbool.h>
#include <stdio.h>

#include "cli.h"

int cmd_init(int argc, char **argv, struct cli *cli);
int cmd_validate(int argc, char **argv, struct cli *cli);
int cmd_plan(int argc, char **argv, struct cli *cli);
int cmd_apply(int argc, char **argv, struct cli *cli);
int cmd_destroy(int argc, char **argv, struct cli *cli);
int cmd_graph(int argc, char **argv, struct cli *cli);
int cmd_iam_policy(int argc, char **argv, struct cli *cli);
int cmd_user_data(int argc, char **argv, struct cli *cli);
int cmd_cost(int argc, char **argv, struct cli *cli);
int cmd_version(int argc, char **argv, struct cli *cli);
int cmd_help(int argc, char **argv, struct cli *cli);
int cmd_state(int argc, char **argv, struct cli *cli);
int cmd_log(int argc, char **argv, struct cli *cli);
int cmd_show(int argc, char **argv, struct cli *cli);
int cmd_workspace(int argc, char **argv, struct cli *cli);
int cmd_force_unlock(int argc, char **argv, struct cli *cli);
int cmd_approve(int argc, char **argv, struct cli *cli);
int cmd_audit(int argc, char **argv, struct cli *cli);
int cmd_sprawl(int argc, char **argv, struct cli *cli);
int cmd_reap(int argc, char **argv, struct cli *cli);
int cmd_report_costs(int argc, char **argv, struct cli *cli);
int cmd_ttl(int argc, char **argv, struct cli *cli);
int cmd_policy(int argc, char **argv, struct cli *cli);
int cmd_run(int argc, char **argv, struct cli *cli);
int cmd_runs(int argc, char **argv, struct cli *cli);
int cmd_up(int argc, char **argv, struct cli *cli);
int cmd_down(int argc, char **argv, struct cli *cli);
int cmd_status(int argc, char **argv, struct cli *cli);
int cmd_hosts(int argc, char **argv, struct cli *cli);
int cmd_ssh_config(int argc, char **argv, struct cli *cli);
int cmd_ssh(int argc, char **argv, struct cli *cli);
int cmd_exec(int argc, char **argv, struct cli *cli);
int cmd_repair(int argc, char **argv, struct cli *cli);
int cmd_size(int argc, char **argv, struct cli *cli);
int cmd_completion(int argc, char **argv, struct cli *cli);
int cmd_schema(int argc, char **argv, struct cli *cli);

extern const struct cmd_info cmd_init_info;
extern const struct cmd_info cmd_validate_info;
extern const struct cmd_info cmd_plan_info;
extern const struct cmd_info cmd_apply_info;
extern const struct cmd_info cmd_destroy_info;
extern const struct cmd_info cmd_graph_info;
extern const struct cmd_info cmd_iam_policy_info;
extern const struct cmd_info cmd_user_data_info;
extern const struct cmd_info cmd_cost_info;
extern const struct cmd_info cmd_version_info;
extern const struct cmd_info cmd_help_info;
extern const struct cmd_info cmd_state_info;
extern const struct cmd_info cmd_log_info;
extern const struct cmd_info cmd_show_info;
extern const struct cmd_info cmd_workspace_info;
extern const struct cmd_info cmd_force_unlock_info;
extern const struct cmd_info cmd_approve_info;
extern const struct cmd_info cmd_audit_info;
extern const struct cmd_info cmd_size_info;
extern const struct cmd_info cmd_sprawl_info;
extern const struct cmd_info cmd_reap_info;
extern const struct cmd_info cmd_report_info;
extern const struct cmd_info cmd_ttl_info;
extern const struct cmd_info cmd_policy_info;
extern const struct cmd_info cmd_run_info;
extern const struct cmd_info cmd_runs_info;
extern const struct cmd_info cmd_up_info;
extern const struct cmd_info cmd_down_info;
extern const struct cmd_info cmd_status_info;
extern const struct cmd_info cmd_hosts_info;
extern const struct cmd_info cmd_ssh_config_info;
extern const struct cmd_info cmd_ssh_info;
extern const struct cmd_info cmd_exec_info;
extern const struct cmd_info cmd_repair_info;
extern const struct cmd_info cmd_completion_info;
extern const struct cmd_info cmd_schema_info;

/* From main.c, for `kiln help`. */
const struct cmd_info *main_find_info(const char *name);
/* The i-th command of the table, NULL past its end: for completion scripts. */
const struct cmd_info *main_info_at(size_t i);
/* "'x' is not a kiln command; did you mean 'y'?" */
void main_report_unknown(const struct cli *cli, const char *name);
void main_print_help(FILE *out);

#endif
