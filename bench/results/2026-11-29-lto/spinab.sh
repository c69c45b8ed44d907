#!/bin/bash
# usage: spinab.sh OUT ROUNDS SPIN...: one 4-node cluster per spin_ns value, jobs alternate
cd /work/main
out=$1; rounds=$2; shift 2
for s in "$@"; do
  opt=""; [ "$s" != def ] && opt="--kernel-option spin_ns=$s"
  qemu/cluster --name s$s up -n 4 --boot direct --mem 256M --tcg $opt >/dev/null 2>&1 || echo "up $s failed" >> $out
done
for r in $(seq $rounds); do
for s in "$@"; do
  c="qemu/cluster --name s$s exec build/bin/yod"
  echo "== spin=$s round $r load $(cut -d' ' -f1 /proc/loadavg)" >> $out
  $c -sz 4 build/nx-tern/nxbench gsync 3 300 2>&1 | grep -E "^R" >> $out
  $c -sz 4 build/nx-tern/nxbench ring 3 8388608 1048576,8388608 2>&1 | grep -E "^R" >> $out
  $c -sz 2 build/nx-tern/nxbench lat 3 2000 0 2>&1 | grep -E "^R" >> $out
  $c -sz 2 build/nx-tern/nxbench gsync 3 300 2>&1 | grep -E "^R" >> $out
done
done
for s in "$@"; do qemu/cluster --name s$s down >/dev/null 2>&1; done
echo END >> $out
