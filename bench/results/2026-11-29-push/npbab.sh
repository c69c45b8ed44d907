#!/bin/bash
cd /work/main
out=$1; rounds=$2; cls=$3; shift 3
qemu/cluster --name npb up -n 4 --boot direct --mem 512M --tcg >/dev/null 2>&1
for r in $(seq $rounds); do
for pm in "$@"; do
 for b in cg ft is mg; do
  res=$(qemu/cluster --name npb exec env TERN_MPI_PUSH_MAX=$pm TERN_MPI_STATS=1 build/bin/yod -sz 4 build/npb/npb-tern/bin/$b.$cls.x 2>&1)
  t=$(echo "$res" | grep -E "Time in seconds" | awk '{print $NF}')
  v=$(echo "$res" | grep -E "Verification" | awk '{print $NF}')
  st=$(echo "$res" | grep -E "stats node 0" | grep -oE "rendezvous=[0-9]+ pushed=[0-9]+ push_missed=[0-9]+")
  echo "R $b.$cls pm=$pm $t $v $st" >> $out
 done
done
done
qemu/cluster --name npb down >/dev/null 2>&1
