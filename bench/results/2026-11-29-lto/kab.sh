#!/bin/bash
# usage: kab.sh OUT ROUNDS NAME...: one 4-node cluster per kernel /tmp/tern-NAME.elf, jobs alternate
cd /work/main
out=$1; rounds=$2; shift 2
cp build/tern.elf /tmp/kab-saved.elf
for s in "$@"; do
  cp /tmp/tern-$s.elf build/tern.elf
  qemu/cluster --name k$s up -n 4 --boot direct --mem 256M --tcg >/dev/null 2>&1 || echo "up $s failed" >> $out
done
cp /tmp/kab-saved.elf build/tern.elf
for r in $(seq $rounds); do
for s in "$@"; do
  c="qemu/cluster --name k$s exec build/bin/yod"
  echo "== spin=$s round $r load $(cut -d' ' -f1 /proc/loadavg)" >> $out
  $c -sz 4 build/nx-tern/nxbench gsync 3 300 2>&1 | grep -E "^R" >> $out
  $c -sz 4 build/nx-tern/nxbench ring 3 8388608 1048576,8388608 2>&1 | grep -E "^R" >> $out
  $c -sz 2 build/nx-tern/nxbench lat 3 2000 0 2>&1 | grep -E "^R" >> $out
  $c -sz 2 build/nx-tern/nxbench ring 3 8388608 1048576,8388608 2>&1 | grep -E "^R" >> $out
  $c -sz 2 build/nx-tern/nxbench gsync 3 300 2>&1 | grep -E "^R" >> $out
  $c -sz 2 build/nx-tern/nxbench stream 3 8388608 1048576 2>&1 | grep -E "^R" >> $out
done
done
for s in "$@"; do qemu/cluster --name k$s down >/dev/null 2>&1; done
echo END >> $out
