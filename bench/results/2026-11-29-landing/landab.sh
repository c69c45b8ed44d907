#!/bin/bash
# usage: VARIANTS="old new" landab.sh OUT ROUNDS: one 4-node cluster; /tmp/nxbench-VARIANT builds alternate per round
cd /work/main
out=$1; rounds=$2
qemu/cluster --name land up -n 4 --boot direct --mem 256M --tcg >/dev/null 2>&1 || echo "up failed" >> $out
for r in $(seq $rounds); do
for s in $VARIANTS; do
  c="qemu/cluster --name land exec build/bin/yod"
  p=/tmp/nxbench-$s
  echo "== $s round $r load $(cut -d' ' -f1 /proc/loadavg)" >> $out
  $c -sz 4 $p ring 3 8388608 262144,1048576,8388608 2>&1 | grep -E "^R" >> $out
  $c -sz 2 $p ring 3 8388608 262144,1048576,8388608 2>&1 | grep -E "^R" >> $out
  $c -sz 2 $p lat 3 60 262144,1048576 20 2>&1 | grep -E "^R" >> $out
done
done
for s in $VARIANTS; do
  echo "== stats $s" >> $out
  qemu/cluster --name land exec env TERN_NX_STATS=1 build/bin/yod -sz 4 /tmp/nxbench-$s ring 1 8388608 262144,1048576 2>&1 | grep -E "stats node 0" >> $out
  qemu/cluster --name land exec env TERN_NX_STATS=1 build/bin/yod -sz 2 /tmp/nxbench-$s lat 1 60 262144,1048576 20 2>&1 | grep -E "stats node 0" >> $out
done
qemu/cluster --name land down >/dev/null 2>&1
echo END >> $out
