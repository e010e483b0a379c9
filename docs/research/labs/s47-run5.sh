#!/bin/bash
# Session 47 run 5: nx = s47-pairs-next-tile0.patch with -DGDN_LAB_NEXT0 on c07ce3e (m58's tree): on the persistent and
# range grids each item's last tile loads the next item's tile 0. Checked with every pairs call on the range grid (rs at
# GDN_CUDA_FAST_LPR=4), then gdn bench, m58 against nx, by grid (LPR 0 = the rule,
# 3 persistent, 4 ranges), two rounds. Carry .cubin (m58.txz, nx.txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m58 nx; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
one() { local b=$1 B=$2 T=$3 j; shift 3; j=$(env "$@" timeout 60 $L/$b/gdn bench --backend cuda --json --B $B --T $T 2>&1)
  echo -n " $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || echo -n "(NOT OK)"; }
row() { local B=$1 T=$2 x k; shift 2; echo -n "B=$B T=$T (m58 nx at LPR = $*):"
  for x in 1 2; do for k in "$@"; do one m58 $B $T GDN_CUDA_FAST_LPR=$k; one nx $B $T GDN_CUDA_FAST_LPR=$k; done; echo -n " |"; done; echo; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== nx rs LPR=4: $(GDN_CUDA_FAST_LPR=4 timeout 120 $L/nx/test_cuda rs 2>&1 | tail -n 1)"
row 64 4 0 3 4; row 256 4 0 4; row 64 8 0 3; row 256 8 0; row 64 5 0 4
) 2>&1 | tee $OUT/run5.log
