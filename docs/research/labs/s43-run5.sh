#!/bin/bash
# Session 43, run 5: the persistent prep's next-item rows prefetched into L2 (s43-prep-next-rows-l2-keep.patch):
# nr1 = session 40's nr1 (plain prefetch once this item's rows landed), nr9 = the same evict-last, nr10 = evict-last
# before this item's rows are issued; m43 = 0ea3e7b's main build. Carry .cubin (m43, nr1, nr9, nr10).
set -u
L=/tmp/L; mkdir -p $L; for x in m43 nr1 nr9 nr10; do tar -C $L -xJf .cubin/$x.txz; done
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for l in nr9 nr10; do echo "== $l test_cuda rs: $(timeout 100 $L/$l/test_cuda rs 2>&1 | tail -n 1)"; done
for c in "1 2048" "1 4096" "1 32768" "8 4096"; do
  r=""; for x in 1 2 3; do for l in m43 nr1 nr9 nr10; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $c --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "bench_cuda B,T=$c (m43 nr1 nr9 nr10): $r"; done
for l in m43 nr9; do echo "$l gdn bench T=4096: $(timeout 60 $L/$l/gdn bench --backend cuda --json --algo chunked --B 1 --T 4096 2>&1 | grep -oE '"(median_us|rel_err|ok)": *[^,}]+' | tr '\n' ' ')"; done
) 2>&1 | tee $OUT/run5.log
