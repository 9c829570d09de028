"""kiln benchmarks: wall time, CPU time and peak RSS of the real binary.

- validate: generated specs of growing size (groups, stores, roles), each
  run several times; the 1 MiB spec limit bounds the largest.
- state: sequential `state push` commits of a 100-resource state, `state
  list` and `log` over the resulting history, and lock round trips.

Figures only: timings belong here, not in tests.
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

KILN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./kiln")


def run(args, cwd=None, env=None, stdin=None):
    """Run once; return (wall seconds, cpu seconds, peak RSS KiB, completed process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(args, cwd=cwd, env=env, input=stdin, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss, p


def spec_text(groups):
    lines = ["kiln: 1", "cluster: bench", "provider: {name: sim}", "ttl: 8h",
             "network: {cidr: 10.0.0.0/16, fabric: ena}", "compute:"]
    for i in range(groups):
        lines.append(f"  g{i}: {{gpu: H100:8, count: 2, role: r{i % min(50, groups)}}}")
    lines.append("storage:")
    for i in range(groups):
        lines.append(f"  s{i}: {{tier: object, versioning: true}}")
    lines.append("iam:")
    lines.append("  roles:")
    for i in range(min(50, groups)):
        lines.append(f"    r{i}: {{read: [s{i}], write: [s{(i + 1) % groups}]}}")
    return "\n".join(lines) + "\n"


def bench_validate(tmp):
    print("validate (best of 5)")
    print(f"  {'groups+stores':>14} {'spec KiB':>9} {'wall ms':>8} {'cpu ms':>7} {'peak RSS MiB':>13}")
    for n in (10, 100, 1000, 5000, 10000):
        path = os.path.join(tmp, f"spec-{n}.yaml")
        with open(path, "w") as f:
            f.write(spec_text(n))
        best = None
        for _ in range(5):
            wall, cpu, rss, p = run([KILN, "validate", "-q", path])
            if p.returncode != 0:
                sys.exit(f"validate failed on {n}: {p.stderr.decode()[:500]}")
            if best is None or wall < best[0]:
                best = (wall, cpu)
        print(f"  {2 * n:>14} {os.path.getsize(path) / 1024:>9.0f} {best[0] * 1000:>8.1f} "
              f"{best[1] * 1000:>7.1f} {rss / 1024:>13.1f}")


def bench_state(tmp):
    env = dict(os.environ, KILN_AUTHOR="Bench <bench@example.com>")
    for k in ("KILN_STATE", "KILN_WORKSPACE", "KILN_STATE_KEY", "KILN_STATE_KEY_FILE"):
        env.pop(k, None)
    work = os.path.join(tmp, "state")
    os.makedirs(work)
    subprocess.run([KILN, "workspace", "new", "default"], cwd=work, env=env, check=True,
                   capture_output=True)
    doc = json.loads(subprocess.run([KILN, "state", "pull"], cwd=work, env=env, check=True,
                                    capture_output=True).stdout)
    doc["cluster"] = "bench"
    doc["resources"] = {
        f"sim_node_group.g{i}": {"type": "sim_node_group", "id": f"ng-{i:04d}",
                                 "attrs": {"count": i, "instance_type": "p5.48xlarge",
                                           "zone": "sim-1a"}, "deps": [], "sensitive": []}
        for i in range(100)}
    commits = 200
    walls = []
    for serial in range(1, commits + 1):
        doc["serial"] = serial
        doc["resources"]["sim_node_group.g0"]["attrs"]["count"] = serial
        wall, _, _, p = run([KILN, "state", "push", "-"], cwd=work, env=env,
                            stdin=json.dumps(doc).encode())
        if p.returncode != 0:
            sys.exit(f"state push failed: {p.stderr.decode()[:500]}")
        walls.append(wall)
    walls.sort()
    print(f"state push (lock, CAS commit, unlock) of a 100-resource state, {commits} commits")
    print(f"  median {walls[len(walls) // 2] * 1000:.1f} ms, p95 {walls[int(len(walls) * 0.95)] * 1000:.1f} ms")
    for name, args in (("state list", ["state", "list"]), ("log (all commits)", ["log"]),
                       ("log -p -n 20", ["log", "-p", "-n", "20"])):
        best = min(run([KILN] + args, cwd=work, env=env)[:2] for _ in range(5))
        print(f"  {name:<20} wall {best[0] * 1000:.1f} ms, cpu {best[1] * 1000:.1f} ms")


def main():
    if not os.access(KILN, os.X_OK):
        sys.exit(f"no kiln binary at {KILN}; run make first")
    tmp = tempfile.mkdtemp(prefix="kiln-bench.")
    try:
        print(f"kiln benchmarks: {KILN}")
        bench_validate(tmp)
        bench_state(tmp)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
