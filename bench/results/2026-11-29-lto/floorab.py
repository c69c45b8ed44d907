# The node-to-node floor (9b's) with the ping node's and echo node's kernels swapped:
# for each echo kernel, ping nodes of each kernel alternate.  usage: floorab.py ROUNDS K1 K2
import os, shutil, statistics, sys, types
ROOT = "/work/main"
for d in ("qemu", "bench", "tests"):
    sys.path.insert(0, os.path.join(ROOT, d))
from ternbench.runner import Run, parse_r
from ternbench.node_exps import echo_node, node_oneway
rounds, ks = int(sys.argv[1]), sys.argv[2:]
elf = os.path.join(ROOT, "build", "tern.elf")
saved = "/tmp/floorab-saved.elf"; shutil.copy(elf, saved)
a = types.SimpleNamespace(out="/tmp/rt/floorab", accel="tcg", cpu=None, mem="256M", node_mem="256M")
os.makedirs(a.out, exist_ok=True)
run = Run(a)
res = {}
try:
    for echo_k in ks:
        shutil.copy(f"/tmp/tern-{echo_k}.elf", elf)
        with echo_node(run) as fp:
            for r in range(rounds):
                for k in ks:
                    shutil.copy(f"/tmp/tern-{k}.elf", elf)
                    v = node_oneway(parse_r(fp.node(["lat", 1000, 3, "0"])).get(("floor-rtt", 0), []))
                    res.setdefault((echo_k, k), []).append(statistics.median(v))
                    print(f"echo {echo_k} ping {k} round {r}: {statistics.median(v):.1f} us {['%.1f' % x for x in v]}", flush=True)
                shutil.copy(f"/tmp/tern-{echo_k}.elf", elf)
finally:
    shutil.copy(saved, elf)
for key, v in res.items():
    print(key, "median of medians %.1f" % statistics.median(v), ["%.1f" % x for x in v])
