#!/usr/bin/env python3
"""Where the time of one 0-byte Portals message goes (issue 18).

Two Tern kernel nodes (virtio-net, QEMU, a bridge in a private network
namespace) play ping-pong with 0-byte puts (bench/msgpath/msgping.c) with the
kernel's message-path trace on (kernel/include/msgtrace.h; the points are in
portals/include/ptl_trace.h).  Each node's TSC-stamped records are split into
messages and intervals; the table gives medians over the traced messages of
both nodes, per side:

  send:    system call -> operation issued -> header built -> NIC queue ->
           doorbell (-> the doorbell's VM exit -> return)
  receive: frame noticed (interrupt, wait's look, or the call's poll) ->
           frame to the library -> checked -> matched -> copied -> event ->
           call returns -> the program has it

The two nodes' clocks are not synchronised, so nothing is subtracted across
nodes except through the one-way latency (half the ping side's round trip):
wire + QEMU = one-way - send side - receive side.  The fabric floor
(bench/floor: frames bounced off a nettest=echo node) is measured in the same
run.  Needs root.

    python3 bench/msgpath.py [--n 1000] [--mode wait|poll] [--accel tcg|kvm]
                             [--no-floor] [--out NAME.csv] [--kernel ELF]
                             [--ack | --nx]

--ack: the puts ask for ACKs, as libmsg's eager messages do; the target's
ACK rides in its answer's header and is taken in by the receiver's next
call, after that call's frame has left.  --nx: the same
ping-pong through NX (bench/msgpath/nxping.c, two ranks), where the
program's own time between a message and its answer (libnx and libmsg in
user space) is a row of its own.

Writes bench/results/<date>/msgpath.csv (or --out) and prints the table."""
import argparse
import csv
import datetime
import heapq
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for d in ("qemu", "bench", "tests"):
    p = os.path.join(ROOT, d)
    if p not in sys.path:
        sys.path.insert(0, p)

MSGPING = os.path.join(ROOT, "build", "bench", "msgping")
NXPING = os.path.join(ROOT, "build", "nx-tern", "nxping")
HEADER = os.path.join(ROOT, "portals", "include", "ptl_trace.h")


def points():
    """{name: id} from portals/include/ptl_trace.h (one source of truth)."""
    with open(HEADER) as f:
        return {m[1]: int(m[2]) for m in re.finditer(r"\bTP_(\w+) = (\d+),", f.read())}


TP = points()

# (label, from point, to point): the intervals of each side, in path order.
SEND = [("system call -> operation issued", "SYS_PUT", "PUT_ISSUE"),
        ("operation issued -> header built", "PUT_ISSUE", "TX_HDR"),
        ("header built -> NIC queue", "TX_HDR", "TX_QUEUE"),
        ("NIC queue -> doorbell", "TX_QUEUE", "TX_NOTIFY")]
SEND_AFTER = [("doorbell's VM exit (overlaps the wire)", "TX_NOTIFY", "TX_DONE"),
              ("driver back -> call returns", "TX_DONE", "SYS_PUT_EXIT")]
# A target's ACK rides in the header of its answer (PTL_WF_ACKIN,
# portals/lib/reliable.c): with --ack and --nx the receiver notes it in the
# reliability pass and takes it in (its event) in its next call's progress
# step, after that call's frame has left (portals/lib/initiator.c,
# ptl_op_acked_later): off this path.
RECV = [("frame noticed -> frame to library", "SEEN", "RX_FRAME"),
        ("frame checks (header, CRC)", "RX_FRAME", "RX_CHECKED"),
        ("reliability (a carried ACK noted)", "RX_CHECKED", "RX_DELIVER"),
        ("delivery -> match", "RX_DELIVER", "MATCH"),
        ("match -> copy", "MATCH", "COPY"),
        ("copy -> event posted", "COPY", "EVENT"),
        ("event -> call returns", "EVENT", "SYS_WAIT_EXIT"),
        ("call returns -> program has it", "SYS_WAIT_EXIT", "APP")]
# The program's own time between a message and its next send's system call
# (NX: completing the receive, the send's request and copy): on the path of
# a ping-pong, neither the send side's nor the receive side's.
PROGRAM = [("program has it -> its next send's call", "APP", "NEXT_PUT")]


class TraceError(ValueError):
    pass


def parse(text):
    """msgping output -> {side, mode, hz, cpus, lat: {...}, recs: [(id, tsc)],
    off_records, lost} (each CPU's records in the order made, CPUs merged).  Raises TraceError on anything
    malformed."""
    out = None
    cpus, lat, ended, off, stats = [], {}, False, None, {}
    cpu_tsc = 0
    for line in text.splitlines():
        w = line.split()
        if not w:
            continue
        if w[0] == "MSGPATH":
            kv = dict(x.split("=", 1) for x in w[1:])
            out = {"side": kv["side"], "mode": kv["mode"], "hz": int(kv["hz"]),
                   "cpus": int(kv["cpus"])}
        elif w[0] == "STATS":
            stats = {k: int(v) for k, v in (x.split("=", 1) for x in w[1:])}
        elif w[0] == "OFF":
            off = int(w[1].split("=", 1)[1])
        elif w[0] == "LAT":
            lat = {k: float(v) for k, v in (x.split("=", 1) for x in w[1:])}
        elif w[0] == "TRACE":
            if out is None:
                raise TraceError("TRACE before MSGPATH")
            kv = dict(x.split("=", 1) for x in w[1:])
            if int(kv["kept"]) > int(kv["total"]):
                raise TraceError(f"kept more than recorded: {line}")
            out.setdefault("lost", 0)
            out["lost"] += int(kv["total"]) - int(kv["kept"])
            cpu_tsc = 0
            cpus.append([])
        elif w[0] == "P":
            if out is None or len(w) != 3:
                raise TraceError(f"bad record line: {line!r}")
            pid, delta = int(w[1]), int(w[2])
            if not 0 < pid < TP["LAST"]:
                raise TraceError(f"unknown point {pid}")
            if not cpus:
                raise TraceError("record before TRACE")
            cpu_tsc += delta
            cpus[-1].append((pid, cpu_tsc))
        elif w[0] == "END":
            ended = True
        elif w[0] == "ERROR":
            raise TraceError(line)
    if out is None or not ended:
        raise TraceError("no MSGPATH ... END block")
    if out["hz"] <= 0:
        raise TraceError("no TSC frequency")
    # Each CPU's records stay in the order they were made (a point stamped
    # out of order is what check() must see); CPUs are merged by time.
    recs = list(heapq.merge(*cpus, key=lambda r: r[1]))
    out["recs"], out["lat"], out["off_records"], out["stats"] = recs, lat, off, stats
    return out


def _name(pid):
    for k, v in TP.items():
        if v == pid:
            return k
    return str(pid)


def messages(tr):
    """Per-message point times (TSC) of one node: (sends, receives), each a
    list of {point name: tsc}.  A receive also has "SEEN" and "how" (irq:
    the NIC's interrupt woke a halted wait; wake: a waiting look saw the
    frame; poll: the call's own poll found it)."""
    recs = [(_name(p), t) for p, t in tr["recs"]]
    sends, recvs = [], []
    cur = None
    for name, t in recs:
        if name == "SYS_PUT":
            cur = {"SYS_PUT": t}
        elif cur is not None and name == "PUT_ISSUE":
            # Frames sent before the operation is issued (an acknowledgement
            # that fell due, sent by the call's progress step) are not its.
            cur = {"SYS_PUT": cur["SYS_PUT"], "PUT_ISSUE": t}
        elif cur is not None and name in ("TX_HDR", "TX_QUEUE", "TX_NOTIFY", "TX_DONE",
                                          "SYS_PUT_EXIT"):
            cur.setdefault(name, t)
            if name == "SYS_PUT_EXIT":
                if all(k in cur for k in ("PUT_ISSUE", "TX_HDR", "TX_QUEUE", "TX_DONE")) and \
                        cur["PUT_ISSUE"] < cur["TX_HDR"]:
                    cur.setdefault("TX_NOTIFY", cur["TX_DONE"])    # e1000: no such point
                    sends.append(cur)
                cur = None
    for i, (name, t) in enumerate(recs):
        if name != "EVENT":
            continue
        m = {"EVENT": t}
        j = i - 1
        m["carried"] = False
        for want in ("COPY", "MATCH", "RX_DELIVER", "RX_CHECKED", "RX_FRAME"):
            while j >= 0 and recs[j][0] != want:
                # An ACK carried in this frame's header: its event, between
                # the frame's checks and its delivery.
                if want == "RX_CHECKED" and recs[j][0] == "EVENT" and not m["carried"]:
                    m["carried"] = True
                elif recs[j][0] == "EVENT":
                    j = -1                 # another message's: this one is incomplete
                    break
                j -= 1
            if j < 0:
                break
            m[want] = recs[j][1]
        if len(m) < 7:
            continue
        # What noticed the frame: the first interrupt or look after the
        # wait began (its halt, or the call) and before the frame was taken.
        k = j - 1
        while k >= 0 and recs[k][0] not in ("HALT", "SYS_WAIT", "SYS_PUT", "EVENT", "APP"):
            k -= 1
        seen = [(n, tt) for n, tt in recs[k + 1:j] if n in ("NET_IRQ", "NET_WAKE")]
        if seen:
            m["SEEN"] = seen[0][1]
            m["how"] = "irq" if seen[0][0] == "NET_IRQ" else "wake"
        else:
            m["SEEN"], m["how"] = m["RX_FRAME"], "poll"
        for want in ("SYS_WAIT_EXIT", "APP"):
            nxt = next((tt for n, tt in recs[i + 1:] if n == want), None)
            if nxt is None:
                break
            m[want] = nxt
            i = next(x for x in range(i + 1, len(recs)) if recs[x][1] == nxt and
                     recs[x][0] == want)
            if want == "SYS_WAIT_EXIT":
                # The program's stamp is recorded after its next send (the
                # mark's call stays off the path): that send's entry comes
                # first in the records, though not first in time.
                put = next((tt for n, tt in recs[i + 1:] if n == "SYS_PUT"), None)
                if put is not None:
                    m["NEXT_PUT"] = put
        if "APP" in m:
            recvs.append(m)
    return sends, recvs


def intervals(msg, spec, hz):
    """{label: ns} for one message."""
    return {lab: (msg[b] - msg[a]) * 1e9 / hz for lab, a, b in spec}


def check(tr):
    """Raises TraceError unless every message's points are in path order
    (no interval negative); returns (sends, receives)."""
    sends, recvs = messages(tr)
    for m in sends:
        order = ["SYS_PUT", "PUT_ISSUE", "TX_HDR", "TX_QUEUE", "TX_NOTIFY", "TX_DONE",
                 "SYS_PUT_EXIT"]
        ts = [m[k] for k in order]
        if ts != sorted(ts):
            raise TraceError(f"send points out of order: {m}")
    for m in recvs:
        order = ["SEEN", "RX_FRAME", "RX_CHECKED", "RX_DELIVER", "MATCH", "COPY", "EVENT",
                 "SYS_WAIT_EXIT", "APP"] + (["NEXT_PUT"] if "NEXT_PUT" in m else [])
        ts = [m[k] for k in order]
        if ts != sorted(ts):
            raise TraceError(f"receive points out of order: {m}")
    return sends, recvs


def breakdown(traces):
    """Medians (ns) per interval over the messages of every node given;
    returns (rows [(side, label, median_ns)], counts)."""
    sends, recvs = [], []
    for tr in traces:
        s, r = check(tr)
        sends += [intervals(m, SEND + SEND_AFTER, tr["hz"]) |
                  {"total": (m["TX_NOTIFY"] - m["SYS_PUT"]) * 1e9 / tr["hz"]} for m in s]
        recvs += [intervals(m, RECV, tr["hz"]) |
                  {"total": (m["APP"] - m["SEEN"]) * 1e9 / tr["hz"], "how": m["how"]} |
                  (intervals(m, PROGRAM, tr["hz"]) if "NEXT_PUT" in m else {})
                  for m in r]
    if not sends or not recvs:
        raise TraceError(f"no complete messages ({len(sends)} sends, {len(recvs)} receives)")
    rows = []
    for lab, _, _ in SEND:
        rows.append(("send", lab, statistics.median(x[lab] for x in sends)))
    rows.append(("send", "send side: call -> doorbell", statistics.median(
        x["total"] for x in sends)))
    for lab, _, _ in SEND_AFTER:
        rows.append(("send", lab, statistics.median(x[lab] for x in sends)))
    for lab, _, _ in RECV:
        rows.append(("receive", lab, statistics.median(x[lab] for x in recvs)))
    rows.append(("receive", "receive side: noticed -> program", statistics.median(
        x["total"] for x in recvs)))
    for lab, _, _ in PROGRAM:
        v = [x[lab] for x in recvs if lab in x]
        if v:
            rows.append(("program", lab, statistics.median(v)))
    hows = {}
    for x in recvs:
        hows[x["how"]] = hows.get(x["how"], 0) + 1
    return rows, {"sends": len(sends), "receives": len(recvs), "how": hows}


# ---- running it -------------------------------------------------------------

def run_pair(n, mode, accel, timeout=900, kernel=None, ack=False, nx=False):
    """The pong on node 2, the ping on node 1 (kernel: another build's
    tern.elf): msgping (ack: its puts ask for ACKs), or with nx NX's nxping,
    ranks 1 and 0 of a job of two (no launcher: run-node gives each the
    environment yod would); returns both outputs."""
    from test_portals_kernel import bridged_namespace
    from test_portals_kernel_wire import RUN_NODE, Procs, kv, read_line

    def node(ps, ns, tap, nid, args, env=()):
        return ps.start(["ip", "netns", "exec", ns, sys.executable, RUN_NODE, f"--{accel}",
                         "--mem", "160M", "--timeout", str(timeout), "--nic", "virtio",
                         "--tap", tap, "--nid", str(nid), "--kmem", "4M", "--msgtrace", "1",
                         *(["--kernel", kernel] if kernel else []),
                         *[w for e in env for w in ("-e", e)],
                         NXPING if nx else MSGPING, *args])
    with bridged_namespace(2) as (ns, taps):
        ps = Procs()
        try:
            seen = []
            if nx:
                job = ["TERN_SIZE=2", "TERN_MAP=1,2"]      # nids; pids the application's
                srv = node(ps, ns, taps[1], 2, [str(n)], job + ["TERN_RANK=1"])
                c = node(ps, ns, taps[0], 1, [str(n)], job + ["TERN_RANK=0"])
            else:
                extra = ["ack"] if ack else []
                srv = node(ps, ns, taps[1], 2, ["pong", mode] + extra)
                pid = kv(read_line(srv, "READY", 120, seen))["pid"]
                c = node(ps, ns, taps[0], 1, ["ping", "2", str(pid), str(n), mode] + extra)
            prog = "nxping" if nx else "msgping"
            cout, cerr = c.communicate(timeout=timeout + 20)
            if c.returncode:
                # The pong's words say why, when it ended first (the ping then
                # waits out its time-out).
                why = ""
                if srv.poll() is not None:
                    so, se = srv.communicate()
                    why = f"\nthe pong ended ({srv.returncode}):\n{so}\n{se}"
                raise RuntimeError(f"{prog} ping failed ({c.returncode}):\n{cout}\n{cerr}{why}")
            sout, serr = srv.communicate(timeout=120)
            if srv.returncode:
                raise RuntimeError(f"{prog} pong failed ({srv.returncode}):\n{sout}\n{serr}")
            return cout, "".join(seen) + sout
        finally:
            ps.close()


class _FloorRun:
    """What bench/ternbench/node_exps.floor needs of bench/run_all.py's run."""

    def __init__(self, accel, out_dir, reps):
        # nodes, smoke: neither the ring's floor nor a barrier's is measured
        # (floor() adds the 4-node ring's only for runs with 4 nodes or more,
        # or --smoke, and a barrier's for each node count of 2 or more): one
        # node's run.
        self.a = argparse.Namespace(accel=accel, cpu=None, mem="64M", lat_sizes=[0], iters=200,
                                    reps=reps, floor_frames=200, out=out_dir, nodes=[1],
                                    smoke=False)
        self.rows = {}

    def add(self, exp, system, metric, x, unit, values):
        self.rows[(metric, x)] = values

    def log(self, msg):
        print(f"# {msg}", flush=True)


def floor_us(accel, out_dir, reps):
    """The fabric floor, one-way 0 B (us): median over reps."""
    from ternbench.node_exps import floor
    run = _FloorRun(accel, out_dir, reps)
    floor(run)
    v = run.rows.get(("oneway_floor", 0))
    return statistics.median(v) if v else None


def table(rows, counts, lat, floor):
    send = next(v for s, lab, v in rows if lab.startswith("send side"))
    recv = next(v for s, lab, v in rows if lab.startswith("receive side"))
    prog = sum(v for s, lab, v in rows if s == "program")
    lines = [f"{'side':<8} {'interval':<42} {'median':>10}"]
    for side, lab, v in rows:
        lines.append(f"{side:<8} {lab:<42} {v / 1000:>8.2f} us")
    one = lat.get("traced_us")
    if one is not None:
        lines.append(f"{'':<8} {'one-way latency, traced loop':<42} {one:>8.2f} us")
        lines.append(f"{'':<8} {'one-way latency, untraced loop':<42} "
                     f"{lat.get('untraced_us', float('nan')):>8.2f} us")
        lines.append(f"{'':<8} {'wire + QEMU = one-way - send - receive - program':<42} "
                     f"{one - (send + recv + prog) / 1000:>8.2f} us")
    if floor is not None:
        lines.append(f"{'':<8} {'fabric floor, one-way 0 B (same run)':<42} {floor:>8.2f} us")
    lines.append(f"messages: {counts['sends']} sends, {counts['receives']} receives "
                 f"(noticed by: {', '.join(f'{k} {v}' for k, v in sorted(counts['how'].items()))})")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000, help="traced round trips (default 1000)")
    ap.add_argument("--mode", choices=["wait", "poll"], default="wait")
    ap.add_argument("--accel", choices=["tcg", "kvm"], default="tcg")
    ap.add_argument("--floor-reps", type=int, default=3)
    ap.add_argument("--no-floor", action="store_true")
    ap.add_argument("--out", default="msgpath.csv",
                    help="a file name (in bench/results/<date>/) or a path (its folder is made)")
    ap.add_argument("--keep-raw", action="store_true", help="also write both nodes' output")
    ap.add_argument("--kernel", help="the nodes boot this tern.elf (before/after comparisons)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--ack", action="store_true",
                   help="every put asks for an ACK (as libmsg's eager messages do)")
    g.add_argument("--nx", action="store_true",
                   help="NX's csend/crecv (bench/msgpath/nxping.c) instead of bare puts; "
                        "wait mode only")
    a = ap.parse_args()
    if a.nx and a.mode != "wait":
        ap.error("--nx has no poll mode (NX's receives wait in the kernel)")
    if os.geteuid() != 0:
        sys.exit("msgpath: needs root (network namespace, bridge, taps)")
    # A bare name goes into the day's folder; a path, where it says.  A
    # path used to be joined onto the day's folder, and the run died at
    # its end, its measurements lost.
    out = a.out if os.path.dirname(a.out) else os.path.join(
        ROOT, "bench", "results", datetime.date.today().isoformat(), a.out)
    out_dir = os.path.dirname(os.path.abspath(out))
    os.makedirs(out_dir, exist_ok=True)
    load0 = os.getloadavg()
    floor = None if a.no_floor else floor_us(a.accel, out_dir, a.floor_reps)
    cout, sout = run_pair(a.n, a.mode, a.accel, kernel=a.kernel, ack=a.ack, nx=a.nx)
    load1 = os.getloadavg()
    if a.keep_raw:
        base = os.path.splitext(out)[0]
        for side, text in (("ping", cout), ("pong", sout)):
            with open(f"{base}-{side}.txt", "w") as f:
                f.write(text)
    ping, pong = parse(cout), parse(sout)
    rows, counts = breakdown([ping, pong])
    what = "NX" if a.nx else "Portals puts with ACKs" if a.ack else "Portals puts"
    print(f"# {a.kernel or 'build/tern.elf'}: {what}, {a.mode} mode, {a.accel}, {a.n} traced round trips; TSC {ping['hz'] / 1e6:.0f} / "
          f"{pong['hz'] / 1e6:.0f} MHz; host load {load0[0]:.1f} -> {load1[0]:.1f}")
    print(table(rows, counts, ping["lat"], floor))
    path = out
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["mode", "accel", "side", "interval", "median_us"])
        w.writerow([a.mode, a.accel, "", "messages", what])
        for side, lab, v in rows:
            w.writerow([a.mode, a.accel, side, lab, round(v / 1000, 3)])
        for k, v in ping["lat"].items():
            if k.endswith("_us"):
                w.writerow([a.mode, a.accel, "", f"one-way latency {k[:-3]}", v])
        if floor is not None:
            w.writerow([a.mode, a.accel, "", "fabric floor one-way 0 B", floor])
        w.writerow([a.mode, a.accel, "", "host load start/end", f"{load0[0]:.1f}/{load1[0]:.1f}"])
    print(f"written to {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    from ternbench.unwind import sigterm_unwinds
    sigterm_unwinds()
    main()
