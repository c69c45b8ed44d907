#!/bin/bash
# usage: npbland.sh OUT ROUNDS: one 4-node cluster; NPB class A built against libmsg before (old) and after (new) landing buffers, alternating per benchmark
cd /work/main
out=$1; rounds=$2
qemu/cluster --name npbl up -n 4 --boot direct --mem 512M --tcg >/dev/null 2>&1 || echo "up failed" >> $out
for r in $(seq $rounds); do
 for b in cg ft is mg; do
  for v in old new; do
   res=$(qemu/cluster --name npbl exec env TERN_MPI_STATS=1 build/bin/yod -sz 4 /tmp/npb-$v/npb-tern/bin/$b.A.x 2>&1)
   t=$(echo "$res" | grep -E "Time in seconds" | awk '{print $NF}')
   ver=$(echo "$res" | grep -E "Verification" | awk '{print $NF}')
   st=$(echo "$res" | grep -E "stats node 0" | grep -oE "rendezvous=[0-9]+ pushed=[0-9]+ push_missed=[0-9]+")
   echo "R $b.A $v round $r $t $ver $st" >> $out
  done
 done
done
qemu/cluster --name npbl down >/dev/null 2>&1
echo END >> $out
