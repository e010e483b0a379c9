#!/bin/bash
# Session 43, run 7: why run 6's m44 (the persistent prep's next rows prefetched evict-last) is faster in bench_cuda
# (4 calls a graph on one pool) and slower in gdn bench at B=1 T=32768 (8 calls a graph, replays back to back): the
# same builds in gdn bench at 1, 4 and 8 calls a graph and with idle replays, at T=8192, 16384, 32768; two rounds.
set -u
L=/tmp/L; mkdir -p $L; for x in m43 m44; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
S=$SECONDS
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for T in 32768 16384 8192; do for o in "" "--graph-calls 1" "--graph-calls 4" "--idle-replays"; do
  r=""; for x in 1 2; do for l in m43 m44; do
    r="$r $(timeout 60 $L/$l/gdn bench --backend cuda --json --algo chunked --B 1 --T $T $o 2>&1 | f median_us)"; done; r="$r |"; done
  echo "gdn bench T=$T ${o:-default} (m43 m44): $r"; done; echo "at $((SECONDS-S)) s"; done
) 2>&1 | tee $OUT/run7.log
