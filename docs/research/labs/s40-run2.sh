#!/bin/bash
# Session 40, run 2: the persistent prep's next item's k, q rows prefetched into L2 (s40-prep-next-rows-l2.patch,
# -DGDN_LAB_NR: 1 after this item's rows landed, 2 before they are issued, 5 / 6 the same two items ahead; 0 the
# lab source without the define), beside run 1's pw2 (the prep's rows from its first chunk: timing only).
# Built with lab_build.sh nrN s40-prep-next-rows-l2.patch -DGDN_LAB_NR=N, packed in .cubin/nr.txz.
set -u
L=/tmp/L; mkdir -p "$L"; tar -C "$L" -xJf .cubin/nr.txz; tar -C "$L" -xJf .cubin/pw.txz pw2/bench_cuda
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
echo "== test_cuda rs: nr1 nr2 nr6"
for l in nr1 nr2 nr6; do echo "$l: $(timeout 120 "$L/$l/test_cuda" rs 2>&1 | tail -n 1)"; done
echo "== bench_cuda --one B T --chunked: nr0 nr1 nr2 nr5 nr6 pw2, three rounds"
for BT in "1 2048" "1 4096" "1 32768" "8 4096"; do
  r=""; for x in 1 2 3; do for l in nr0 nr1 nr2 nr5 nr6 pw2; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $BT --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "B T=$BT: $r"; done
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv
