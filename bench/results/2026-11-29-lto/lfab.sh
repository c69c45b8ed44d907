#!/bin/bash
cd /work/main
for k in $(seq $1); do
 for v in $VS; do
  cp /tmp/tern-$v.elf build/tern.elf
  python3 bench/run_all.py --only latfloor --reps 5 --out $OUTD/$v-$k > $OUTD/$v-$k.log 2>&1
 done
done
cp /tmp/tern-old.elf build/tern.elf
echo END > $OUTD/END
