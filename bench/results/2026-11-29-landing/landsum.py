import sys, re, statistics as st, collections
d = collections.defaultdict(list); cur=None
for f in sys.argv[1:]:
    for l in open(f):
        m = re.match(r"== (\S+) round", l)
        if m: cur = m.group(1); continue
        if l.startswith("== stats"): cur=None
        m = re.match(r"R (\S+) (\d+) (\S+) ([\d.]+)", l)
        if m and cur: d[(m.group(1), int(m.group(2)), cur)].append(float(m.group(4)))
keys = sorted({(k[0],k[1]) for k in d})
print("| figure | before: median (min-max) | after: median (min-max) | after/before |")
print("|---|---|---|---|")
for k in keys:
    o, n = d[k+("old",)], d[k+("new",)]
    mo, mn = st.median(o), st.median(n)
    unit = "us" if "lat" in k[0] else "MB/s"
    print(f"| {k[0]} {k[1]//1024} KiB ({unit}, n={len(o)}/{len(n)}) | {mo:.0f} ({min(o):.0f}-{max(o):.0f}) | {mn:.0f} ({min(n):.0f}-{max(n):.0f}) | {mn/mo:.2f} |")
