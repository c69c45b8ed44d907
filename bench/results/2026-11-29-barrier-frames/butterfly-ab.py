import sys, re
sys.path.insert(0, "/work/main/tests")
from clusters import yod
name, n, iters = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def run(binary):
    r = yod(name, "-sz", str(n), binary, "gsync", "1", str(iters),
            env={"TERN_NX_STATS": "2"}, timeout=600, cwd="/tmp")
    assert r.returncode == 0, r.stdout + r.stderr
    us = float(re.search(r"R nx-gsync \d+ us ([\d.]+)", r.stdout).group(1))
    tx = acks = bars = rt = 0
    for m in re.finditer(r"portals stats node \d+: tx=(\d+) retransmits=(\d+) .*acks_sent=(\d+)", r.stderr):
        tx += int(m.group(1)); rt += int(m.group(2)); acks += int(m.group(3))
    for m in re.finditer(r"portals_barriers=(\d+)", r.stderr):
        bars += int(m.group(1))
    return us, tx / bars, acks / bars, rt / bars
for rep in range(int(sys.argv[4])):
    for b in ("old", "new") if rep % 2 == 0 else ("new", "old"):
        us, tx, acks, rt = run(f"/tmp/nxbench.{b}")
        print(f"{b} n={n} gsync {us:8.1f} us  frames/barrier/node {tx:.2f} acks {acks:.2f} resent {rt:.3f}", flush=True)
