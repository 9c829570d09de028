/*
 * test_aws_capacity.c - a node group's capacity as the plan sees it (issue
 * 16): what EC2 reports of an instance read back as the inputs capacity,
 * capacity_reservation and spot_fallback (aws_capacity_live), and what a change
 * of each does to the group on aws and sim (diff_changed_inputs and the
 * types' policies): a new reservation, block or market replaces it, a new
 * fallback changes only how later launches are made; how EC2's refusal of
 * a launch into a reservation that has not started (a Capacity Block bought
 * for a later window) becomes an error naming it and the fix, every other
 * refusal left alone; and which reads a reservation, or a group of them,
 * adds to kiln's policy.
 */
#include "testutil.h"

#include "aws/aws_capacity.h"
#include "aws/aws_int.h"
#include "aws/awsxml.h"
#include "diff.h"
#include "engine.h"
#include "provider.h"
#include "strbuf.h"

#define EC2_NS "xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\""

/* The one instance of a DescribeInstances answer holding inner. */
static json_t *instance(const char *inner)
{
	struct kiln_error err = {{0}};
	char *xml = xasprintf("<DescribeInstancesResponse " EC2_NS "><reservationSet><item>"
			      "<instancesSet><item><instanceId>i-0a</instanceId>%s</item>"
			      "</instancesSet></item></reservationSet>"
			      "</DescribeInstancesResponse>",
			      inner);
	json_t *doc = awsxml_parse(xml, strlen(xml), "ec2", &err), *inst;

	free(xml);
	if (!doc)
		fail_msg("parse: %s", err.msg);
	inst = json_incref(
	    awsxml_get(doc, "DescribeInstancesResponse.reservationSet.0.instancesSet.0"));
	json_decref(doc);
	assert_non_null(inst);
	return inst;
}

/* aws_capacity_live over inner (and tags, JSON text), as compact sorted JSON. */
static char *live_of(const char *inner, const char *tags)
{
	json_t *inst = instance(inner), *t = json_loads(tags ? tags : "{}", 0, NULL);
	json_t *attrs = json_object();
	char *s;

	aws_capacity_live(inst, t, attrs);
	s = json_dumps(attrs, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(attrs);
	json_decref(t);
	json_decref(inst);
	return s;
}

static void assert_live(const char *inner, const char *tags, const char *want)
{
	char *got = live_of(inner, tags);

	assert_string_equal(got, want);
	free(got);
}

#define TARGET(x)                                                                                  \
	"<capacityReservationSpecification><capacityReservationPreference>capacity-"               \
	"reservations-only</capacityReservationPreference><capacityReservationTarget>" x           \
	"</capacityReservationTarget></capacityReservationSpecification>"

static void test_capacity_live_reads_a_targeted_reservation_back(void **st)
{
	(void)st;
	assert_live("<capacityReservationId>cr-0123456789abcdef0</capacityReservationId>" TARGET(
			"<capacityReservationId>cr-0123456789abcdef0</capacityReservationId>"),
		    NULL,
		    "{\"capacity\":\"reservation\",\"capacity_reservation\":\"cr-"
		    "0123456789abcdef0\"}");
}

static void test_capacity_live_reads_a_resource_group_of_reservations_back(void **st)
{
	(void)st;
	assert_live(TARGET("<capacityReservationResourceGroupArn>arn:aws:resource-groups:us-east-"
			   "1:123456789012:group/gpus</capacityReservationResourceGroupArn>"),
		    NULL,
		    "{\"capacity\":\"reservation-group\",\"capacity_reservation\":\"arn:aws:"
		    "resource-groups:us-east-1:123456789012:group/gpus\"}");
}

/* A block's instances target its reservation, which is a dependency, not an input. */
static void test_capacity_live_reads_a_capacity_block_instance_as_block_only(void **st)
{
	(void)st;
	assert_live("<instanceLifecycle>capacity-block</instanceLifecycle>"
		    "<capacityReservationId>cr-0123456789abcdef0</capacityReservationId>" TARGET(
			"<capacityReservationId>cr-0123456789abcdef0</capacityReservationId>"),
		    NULL, "{\"capacity\":\"block\"}");
}

/* An open reservation takes matching on-demand launches by itself: still on demand. */
static void test_capacity_live_leaves_an_instance_an_open_reservation_took_on_demand(void **st)
{
	(void)st;
	assert_live("<capacityReservationId>cr-0123456789abcdef0</capacityReservationId>"
		    "<capacityReservationSpecification><capacityReservationPreference>open"
		    "</capacityReservationPreference></capacityReservationSpecification>",
		    NULL, "{}");
}

/* Spot is the market's: capacity stays unset, as the aws expander leaves it. */
static void test_capacity_live_reads_spot_fallback_from_its_tag(void **st)
{
	(void)st;
	assert_live("<instanceLifecycle>spot</instanceLifecycle>",
		    "{\"kiln:spot-fallback\":\"true\"}", "{\"spot_fallback\":true}");
	assert_live("<instanceLifecycle>spot</instanceLifecycle>",
		    "{\"kiln:spot-fallback\":\"false\"}", "{}");
}

/*
 * A group launched before the tag, that fell back, says so by its
 * ClientToken; the tag, once there, says what the spec asks now: a spec
 * that dropped the fallback retags the nodes false, which must settle.
 */
static void test_capacity_live_reads_a_fallback_launch_by_its_tag_first(void **st)
{
	(void)st;
	assert_live("<clientToken>" CAPACITY_FALLBACK_TOKEN "0123abcd</clientToken>", NULL,
		    "{\"spot_fallback\":true}");
	assert_live("<clientToken>0123abcd</clientToken>", NULL, "{}");
	assert_live("<clientToken>" CAPACITY_FALLBACK_TOKEN "0123abcd</clientToken>",
		    "{\"kiln:spot-fallback\":\"false\"}", "{}");
}

static const struct prov_type *group_type(const char *provider, const char *type)
{
	const struct prov_type *t = provider_type(provider_find(provider), type);

	assert_non_null(t);
	return t;
}

/* The inputs that differ between before and after (JSON texts), joined with commas. */
static char *changed(const struct prov_type *t, const char *before, const char *after)
{
	json_t *b = json_loads(before, 0, NULL), *a = json_loads(after, 0, NULL);
	json_t *names = diff_changed_inputs(t, b, a), *n;
	struct strbuf sb = {0};
	size_t i;

	json_array_foreach(names, i, n) sb_addf(&sb, "%s%s", i ? "," : "", json_string_value(n));
	json_decref(names);
	json_decref(b);
	json_decref(a);
	return sb.buf ? sb_detach(&sb) : xstrdup("");
}

static void assert_changed(const struct prov_type *t, const char *before, const char *after,
			   const char *want)
{
	char *got = changed(t, before, after);

	assert_string_equal(got, want);
	free(got);
}

static void assert_policy(const struct prov_type *t, const char *name, enum prov_policy want)
{
	const struct prov_attr *a = provider_type_attr(t, name);

	assert_non_null(a);
	assert_int_equal(a->policy, want);
	assert_non_null(a->why);
}

static void check_group_type(const struct prov_type *t)
{
	/* on demand -> a reservation, one reservation -> another, -> a block */
	assert_changed(t, "{\"market\":\"on-demand\"}",
		       "{\"market\":\"on-demand\",\"capacity\":\"reservation\","
		       "\"capacity_reservation\":\"cr-0123456789abcdef0\"}",
		       "capacity,capacity_reservation");
	assert_changed(t,
		       "{\"capacity\":\"reservation\",\"capacity_reservation\":\"cr-"
		       "0123456789abcdef0\"}",
		       "{\"capacity\":\"reservation\",\"capacity_reservation\":\"cr-"
		       "0123456789abcdef1\"}",
		       "capacity_reservation");
	assert_changed(t, "{}", "{\"capacity\":\"block\"}", "capacity");
	assert_changed(t, "{\"market\":\"spot\"}", "{\"market\":\"spot\",\"spot_fallback\":true}",
		       "spot_fallback");
	assert_changed(t, "{\"capacity\":\"block\"}", "{\"capacity\":\"block\"}", "");
	assert_policy(t, "capacity", POLICY_REPLACE);
	assert_policy(t, "capacity_reservation", POLICY_REPLACE);
	assert_policy(t, "market", POLICY_REPLACE);
	assert_policy(t, "spot_fallback", POLICY_LIVE);
}

static void test_a_capacity_change_replaces_an_aws_group_and_a_fallback_change_does_not(void **st)
{
	(void)st;
	check_group_type(group_type("aws", "aws_instance_group"));
}

static void test_a_capacity_change_replaces_a_sim_group_and_a_fallback_change_does_not(void **st)
{
	(void)st;
	check_group_type(group_type("sim", "sim_node_group"));
}

static void test_a_launch_into_a_block_not_active_yet_names_it_and_the_fix(void **state)
{
	struct capacity_target l = {.address = "aws_instance_group.trainers",
			   .reservation = "cr-0123456789abcdef0",
			   .block = true};
	struct kiln_error err = {{0}, {0}};

	(void)state;
	kiln_error_set(&err, "aws: ec2 RunInstances: InvalidCapacityReservationState."
			     "PendingActivation: Your Capacity Block is not active yet");
	aws_capacity_launch_refused(&l, PROV_ERROR, &err);
	assert_string_equal(err.msg,
			    "aws: aws_instance_group.trainers: its Capacity Block "
			    "cr-0123456789abcdef0 is not active yet, and EC2 refused the launch "
			    "(ec2 RunInstances: InvalidCapacityReservationState.PendingActivation: "
			    "Your Capacity Block is not active yet)");
	assert_string_equal(err.hint, "nodes launch into it once it is active: run kiln apply "
				      "again then, or kiln up --wait");
}

static void test_other_refusals_of_a_launch_are_left_alone(void **state)
{
	struct capacity_target l = {.address = "aws_instance_group.trainers",
			   .reservation = "cr-0123456789abcdef0",
			   .block = true};
	struct kiln_error err = {{0}, {0}};

	(void)state;
	kiln_error_set(&err, "aws: ec2 RunInstances: ReservationCapacityExceeded: full");
	kiln_error_hint(&err, "as it was");
	aws_capacity_launch_refused(&l, PROV_ERROR, &err);
	assert_string_equal(err.msg, "aws: ec2 RunInstances: ReservationCapacityExceeded: full");
	assert_string_equal(err.hint, "as it was");
	kiln_error_set(&err, "aws: InvalidCapacityReservationState.PendingActivation");
	aws_capacity_launch_refused(&l, PROV_OK, &err);
	assert_string_equal(err.msg, "aws: InvalidCapacityReservationState.PendingActivation");
}

static void test_only_a_reservation_group_needs_the_resource_groups_read(void **state)
{
	json_t *group = json_pack("{s:{s:s}}", "attrs", "capacity", "reservation-group");
	json_t *one = json_pack("{s:{s:s}}", "attrs", "capacity", "reservation");
	const char *const *a;

	(void)state;
	a = aws_iam_resource_actions(group, VERB_CREATE);
	assert_non_null(a);
	assert_string_equal(a[0], "resource-groups:ListGroupResources");
	assert_string_equal(a[1], "ec2:DescribeCapacityReservations");
	assert_null(a[2]);
	a = aws_iam_resource_actions(one, VERB_CREATE);
	assert_string_equal(a[0], "ec2:DescribeCapacityReservations");
	assert_null(a[1]);
	assert_null(aws_iam_resource_actions(group, VERB_DELETE));
	json_decref(group);
	json_decref(one);
}

/* A purchase is sent once: never again on a 5xx or a lost answer (issue 33). */
static void test_a_capacity_block_purchase_is_the_irreversible_action(void **state)
{
	(void)state;
	assert_true(aws_action_irreversible("PurchaseCapacityBlock"));
	assert_false(aws_action_irreversible("DescribeCapacityReservations"));
	assert_false(aws_action_irreversible("RunInstances"));
	assert_false(aws_action_irreversible(NULL));
}

/* The engine makes no create of a type that buys up front twice; every other call it retries. */
static void test_the_engine_never_retries_a_purchase_create(void **state)
{
	const struct prov_type *block = provider_type(provider_find("aws"), "aws_capacity_block");
	const struct prov_type *vpc = provider_type(provider_find("aws"), "aws_vpc");

	(void)state;
	assert_non_null(block);
	assert_non_null(vpc);
	assert_false(engine_call_retried(block, VERB_CREATE));
	assert_true(engine_call_retried(block, VERB_READ));
	assert_true(engine_call_retried(block, VERB_DELETE));
	assert_true(engine_call_retried(vpc, VERB_CREATE));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_capacity_live_reads_a_targeted_reservation_back),
	    cmocka_unit_test(test_capacity_live_reads_a_resource_group_of_reservations_back),
	    cmocka_unit_test(test_capacity_live_reads_a_capacity_block_instance_as_block_only),
	    cmocka_unit_test(
		test_capacity_live_leaves_an_instance_an_open_reservation_took_on_demand),
	    cmocka_unit_test(test_capacity_live_reads_spot_fallback_from_its_tag),
	    cmocka_unit_test(test_capacity_live_reads_a_fallback_launch_by_its_tag_first),
	    cmocka_unit_test(
		test_a_capacity_change_replaces_an_aws_group_and_a_fallback_change_does_not),
	    cmocka_unit_test(
		test_a_capacity_change_replaces_a_sim_group_and_a_fallback_change_does_not),
	    kiln_test(test_a_launch_into_a_block_not_active_yet_names_it_and_the_fix),
	    kiln_test(test_other_refusals_of_a_launch_are_left_alone),
	    kiln_test(test_only_a_reservation_group_needs_the_resource_groups_read),
	    cmocka_unit_test(test_a_capacity_block_purchase_is_the_irreversible_action),
	    cmocka_unit_test(test_the_engine_never_retries_a_purchase_create),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
