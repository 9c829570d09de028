"""Unit tests of the emulator's EC2 throttling (ec2_buckets.py) against EC2's documented
table ("Request throttling for the Amazon EC2 API", Amazon EC2 Developer Guide,
https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html, read 2026-12-06).

Run: python3 -m unittest discover -s tests/moto -p 'test_*.py' (make unit runs it).
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ec2_buckets import Ec2Throttle, ScaledClock, category, resource_cost  # noqa: E402


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def burst(th, action, params, n):
    """How many of n requests at once pass."""
    return sum(1 for _ in range(n) if th.admit(action, params))


FILTERED = {"Filter.1.Name": "tag:kiln:cluster", "Filter.1.Value.1": "c"}


class DocumentedBuckets(unittest.TestCase):
    def setUp(self):
        self.clock = FakeClock()
        self.th = Ec2Throttle(self.clock)

    def test_a_non_mutating_action_holds_100_and_refills_20_a_second(self):
        self.assertEqual(burst(self.th, "DescribeVpcs", FILTERED, 150), 100)
        self.clock.t += 1
        self.assertEqual(burst(self.th, "DescribeVpcs", FILTERED, 50), 20)

    def test_an_unfiltered_describe_holds_50_and_refills_10_a_second(self):
        self.assertEqual(burst(self.th, "DescribeInstances", {}, 80), 50)
        self.clock.t += 2
        self.assertEqual(burst(self.th, "DescribeInstances", {}, 80), 20)

    def test_a_describe_with_max_results_is_paginated_not_unfiltered(self):
        self.assertEqual(category("DescribeInstances", {"MaxResults": "1000"}), "non-mutating")
        self.assertEqual(category("DescribeInstances", {}), "unfiltered-describe")

    def test_a_mutating_action_holds_50_and_refills_5_a_second(self):
        self.assertEqual(burst(self.th, "CreateVpc", {}, 70), 50)
        self.clock.t += 1
        self.assertEqual(burst(self.th, "CreateVpc", {}, 70), 5)

    def test_create_tags_holds_100_and_refills_10_a_second(self):
        self.assertEqual(burst(self.th, "CreateTags", {}, 120), 100)
        self.clock.t += 1
        self.assertEqual(burst(self.th, "CreateTags", {}, 120), 10)

    def test_run_instances_requests_hold_5_and_refill_2_a_second(self):
        one = {"MinCount": "1", "MaxCount": "1"}
        self.assertEqual(burst(self.th, "RunInstances", one, 9), 5)
        self.clock.t += 1
        self.assertEqual(burst(self.th, "RunInstances", one, 9), 2)

    def test_each_action_has_a_bucket_of_its_own(self):
        self.assertEqual(burst(self.th, "CreateVpc", {}, 50), 50)
        self.assertEqual(burst(self.th, "CreateSubnet", {}, 50), 50)
        self.assertFalse(self.th.admit("CreateVpc", {}))

    def test_the_clock_of_the_last_request_let_through_is_kept_per_action(self):
        self.th.admit("CreateVpc", {})
        self.clock.t = 7.5
        self.th.admit("CreateVpc", {})
        self.assertEqual(self.th.last_admitted, {"CreateVpc": 7.5})

    def test_a_bucket_never_holds_more_than_its_size(self):
        self.clock.t += 3600
        self.assertEqual(burst(self.th, "CreateVpc", {}, 70), 50)


class InstanceBuckets(unittest.TestCase):
    def setUp(self):
        self.clock = FakeClock()
        self.th = Ec2Throttle(self.clock)

    def run_n(self, n):
        return self.th.admit("RunInstances", {"MinCount": str(n), "MaxCount": str(n)})

    def test_a_launch_takes_one_token_an_instance_of_1000_refilled_2_a_second(self):
        self.assertTrue(self.run_n(1000))
        self.clock.t += 10
        self.assertFalse(self.run_n(21))
        self.assertTrue(self.run_n(20))

    def test_a_launch_of_more_than_1000_is_refused_however_long_it_waits(self):
        self.clock.t += 10 ** 6
        self.assertFalse(self.run_n(2000))
        self.assertEqual(self.th.throttled["RunInstances"], 1)

    def test_a_refused_launch_takes_no_instance_tokens(self):
        self.assertTrue(self.run_n(600))
        self.assertFalse(self.run_n(500))
        self.assertTrue(self.run_n(400))

    def test_2000_instances_need_500_seconds_after_the_first_1000(self):
        self.assertTrue(self.run_n(1000))
        self.clock.t += 499
        self.assertFalse(self.run_n(1000))
        self.clock.t += 1
        self.assertTrue(self.run_n(1000))

    def test_terminate_takes_one_token_an_instance_of_1000_refilled_20_a_second(self):
        ids = {f"InstanceId.{i}": f"i-{i}" for i in range(1, 1001)}
        self.assertEqual(resource_cost("TerminateInstances", ids), 1000)
        self.assertTrue(self.th.admit("TerminateInstances", ids))
        self.clock.t += 49
        self.assertFalse(self.th.admit("TerminateInstances", ids))
        self.clock.t += 1
        self.assertTrue(self.th.admit("TerminateInstances", ids))


class AccountSizes(unittest.TestCase):
    def test_an_accounts_own_instance_bucket_replaces_the_documented_one(self):
        clock = FakeClock()
        th = Ec2Throttle(clock, {"RunInstances": [50, 2]})
        self.assertFalse(th.admit("RunInstances", {"MaxCount": "51"}))
        self.assertTrue(th.admit("RunInstances", {"MaxCount": "50"}))
        ids = {f"InstanceId.{i}": "i" for i in range(1, 1001)}
        self.assertTrue(th.admit("TerminateInstances", ids))


class Serving(unittest.TestCase):
    def test_the_time_moto_served_counts_overlapping_requests_once(self):
        from kiln_moto import serving_seconds
        self.assertEqual(serving_seconds([(0, 2), (1, 3), (5, 6)]), 4)
        self.assertEqual(serving_seconds([]), 0)


class Clock(unittest.TestCase):
    def test_the_scaled_clock_moves_time_scale_times_as_fast_and_can_be_advanced(self):
        c = ScaledClock(1000)
        a = c()
        c.advance(60)
        self.assertGreaterEqual(c() - a, 60)
        import time
        time.sleep(0.01)
        self.assertGreaterEqual(c() - a, 70)

if __name__ == "__main__":
    unittest.main()
