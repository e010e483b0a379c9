#!/bin/bash
# Written in session 43 for the next session (built, not run): the persistent prep's next-row prefetch (9fcede7) two
# items ahead (pa2 = lab_build.sh pa2 "" -DSP_PREFETCH_AHEAD=2) and at every length up to T=32768 (pc512 = lab_build.sh
# pc512 "" -DSP_PREFETCH_CHUNKS=512), against m45 (9fcede7's main build; 1456862 gives the same PTX). Carry .cubin
# (m45.txz, pa2.txz, pc512.txz). The question for pc512: does T=32768 gain or lose in gdn bench's graph shapes (session
# 43, runs 6-7: -2.9 to +6.2 us with the shape and the machine, bench_cuda -6 to -10)?
set -u
L=/tmp/L; mkdir -p $L; for x in m45 pa2 pc512; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for l in pa2 pc512; do echo "== $l rs: $(timeout 100 $L/$l/test_cuda rs 2>&1 | tail -n 1)"; done
for T in 4096 16384 32768; do for o in "" "--graph-calls 1" "--graph-calls 4"; do
  r=""; for x in 1 2; do for l in m45 pa2 pc512; do
    r="$r $(timeout 60 $L/$l/gdn bench --backend cuda --json --algo chunked --B 1 --T $T $o 2>&1 | f median_us)"; done; r="$r |"; done
  echo "gdn bench T=$T ${o:-default} (m45 pa2 pc512): $r"; done; done
for c in "1 4096" "1 32768"; do r=""; for x in 1 2; do for l in m45 pa2 pc512; do
  r="$r $(timeout 60 $L/$l/bench_cuda --one $c --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "bench_cuda B,T=$c (m45 pa2 pc512): $r"; done) 2>&1 | tee $OUT/next.log
