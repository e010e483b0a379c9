#!/bin/bash
# Session 44, run 5: s44-fast-l2-priorities.patch (dl1: the fast path's pre-wait L2 prefetch evict-last; dl2: the state
# loads evict-first; dl3: both) against main (m46 = 4b21554's build; the fast path unchanged since) in gdn bench, decode
# and verify at large batch, two rounds; test_cuda quick on dl3. Carry .cubin (m46, dl1, dl2, dl3 .txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m46 dl1 dl2 dl3; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { # B T "labs"
  local r="" x l j; for x in 1 2; do for l in $3; do
    j=$(timeout 60 $L/$l/gdn bench --backend cuda --json --B $1 --T $2 2>&1)
    r="$r $(echo "$j" | f median_us) ($(echo "$j" | f pct_mem_bw))"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "gdn bench B=$1 T=$2 ($3): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
row 64 1 "m46 dl1 dl2 dl3"
row 256 1 "m46 dl1 dl2 dl3"
row 64 4 "m46 dl1 dl2 dl3"
row 8 1 "m46 dl1 dl2 dl3"
row 1 1 "m46 dl1 dl2 dl3"
echo "== dl3 quick: $(timeout 200 $L/dl3/test_cuda quick 2>&1 | tail -n 1)"
) 2>&1 | tee $OUT/run5.log
