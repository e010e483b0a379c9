#!/bin/bash
# Session 43, run 8: main with the next rows prefetched up to 256 chunks a sequence (m45, the tree's build) checked
# (test_cuda rs, also at overlap 2) and timed against m43 (0ea3e7b's build) in gdn bench, two rounds.
set -u
L=/tmp/L; mkdir -p $L; for x in m43 m45; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== m45 rs: $(timeout 100 $L/m45/test_cuda rs 2>&1 | tail -n 1); overlap 2: $(GDN_CUDA_PREP_OVERLAP=2 timeout 100 $L/m45/test_cuda rs 2>&1 | tail -n 1)"
for T in 4096 16384 32768; do
  r=""; for x in 1 2; do for l in m43 m45; do
    j=$(timeout 60 $L/$l/gdn bench --backend cuda --json --algo chunked --B 1 --T $T 2>&1)
    r="$r $(echo "$j" | f median_us) ($(echo "$j" | f rel_err) $(echo "$j" | f ok))"; done; r="$r |"; done
  echo "gdn bench T=$T (m43 m45): $r"; done
) 2>&1 | tee $OUT/run8.log
