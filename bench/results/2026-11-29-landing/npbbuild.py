import sys
sys.path.insert(0, '/work/main/bench')
from ternbench import npb
scratch = sys.argv[1]
bindir, secs = npb.build(npb.source(), scratch, "tern", ["cg", "ft", "is", "mg"], "A", jobs=2)
print(bindir, round(secs))
