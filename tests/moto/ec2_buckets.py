"""EC2's API throttling, as the emulator (kiln_moto.py) answers it: token buckets.

EC2 throttles each account and region with token buckets ("Request throttling for the
Amazon EC2 API", Amazon EC2 Developer Guide,
https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html, read
2026-12-06):
  - request rate limiting: every action has a bucket of its own, sized and refilled as
    its category says; each request takes one token;
  - resource rate limiting: RunInstances and TerminateInstances also take one token per
    instance from a bucket of their own.
A bucket starts full, refills continuously up to its size, and a request finding too few
tokens is refused with RequestLimitExceeded (HTTP 503) and changes nothing.

The clock is settable: `Ec2Throttle(clock=...)` takes any function of seconds, and the
default one runs `time_scale` times faster than the real monotonic clock and can be
moved forward (`advance`), so a test or a bench sees 500 simulated seconds pass in 5.

The same table is kiln's own (providers/aws/aws_rate.c): keep the two in step.
"""

from __future__ import annotations

import threading
import time

# category -> (bucket size in tokens, refill in tokens a second), as documented.
EC2_BUCKETS = {
    "non-mutating": (100, 20),          # Describe*, Get*, List*, Search*
    "unfiltered-describe": (50, 10),    # a Describe* with neither a filter nor pagination
    "mutating": (50, 5),                # every other action
    "CreateTags": (100, 10),
    "RunInstances": (5, 2),             # RunInstances requests
}
# action -> (bucket size, refill a second) of its per-instance resource bucket.
EC2_RESOURCE_BUCKETS = {
    "RunInstances": (1000, 2),          # one token per instance launched (MaxCount)
    "TerminateInstances": (1000, 20),   # one token per instance named
}


def category(action: str, params: dict) -> str:
    """The request category of an EC2 action with these (form) parameters."""
    if action in ("CreateTags", "RunInstances"):
        return action
    if action.startswith("Describe"):
        filtered = any(k.startswith("Filter.") for k in params) or "MaxResults" in params
        return "non-mutating" if filtered else "unfiltered-describe"
    if action.startswith(("Get", "List", "Search")):
        return "non-mutating"
    return "mutating"


def resource_cost(action: str, params: dict) -> int:
    """The tokens a request takes of its action's resource bucket (0: it has none)."""
    if action == "RunInstances":
        try:
            return int(params.get("MaxCount") or params.get("MinCount") or 1)
        except ValueError:
            return 1
    if action == "TerminateInstances":
        return sum(1 for k in params if k.startswith("InstanceId."))
    return 0


class Bucket:
    def __init__(self, size: float, refill: float, now: float) -> None:
        self.size, self.refill = float(size), float(refill)
        self.tokens, self.at = float(size), now

    def level(self, now: float) -> float:
        if now > self.at:
            self.tokens = min(self.size, self.tokens + (now - self.at) * self.refill)
            self.at = now
        return self.tokens


class ScaledClock:
    """Seconds: the monotonic clock times time_scale, plus what advance() added."""

    def __init__(self, time_scale: float = 1.0) -> None:
        self.scale = float(time_scale)
        self.real0, self.virtual0 = time.monotonic(), 0.0

    def __call__(self) -> float:
        return self.virtual0 + (time.monotonic() - self.real0) * self.scale

    def set_scale(self, scale: float) -> None:
        self.virtual0, self.real0 = self(), time.monotonic()
        self.scale = float(scale)

    def advance(self, seconds: float) -> None:
        self.virtual0 += float(seconds)


class Ec2Throttle:
    """Every bucket of one account and region; admit() says whether a request passes."""

    def __init__(self, clock=None, resource_sizes: dict | None = None) -> None:
        self.clock = clock or ScaledClock()
        # The per-instance buckets: the documented ones, or an account's own sizes.
        self.resource_sizes = dict(EC2_RESOURCE_BUCKETS, **(resource_sizes or {}))
        self.lock = threading.Lock()
        self.requests: dict[str, Bucket] = {}   # action -> its request bucket
        self.resources: dict[str, Bucket] = {}  # action -> its resource bucket
        self.throttled: dict[str, int] = {}     # action -> requests refused
        self.last_admitted: dict[str, float] = {}  # action -> the clock when last let through

    def admit(self, action: str, params: dict) -> bool:
        """Take the request's tokens and return True, or take none and return False."""
        with self.lock:
            now = self.clock()
            req = self.requests.get(action)
            if req is None:
                req = self.requests[action] = Bucket(*EC2_BUCKETS[category(action, params)], now)
            cost = resource_cost(action, params)
            res = None
            if cost:
                res = self.resources.get(action)
                if res is None:
                    res = self.resources[action] = Bucket(*self.resource_sizes[action], now)
            if req.level(now) < 1 or (res is not None and res.level(now) < cost):
                self.throttled[action] = self.throttled.get(action, 0) + 1
                return False
            req.tokens -= 1
            self.last_admitted[action] = now
            if res is not None:
                res.tokens -= cost
            return True
