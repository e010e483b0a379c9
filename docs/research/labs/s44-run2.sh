#!/bin/bash
# Session 44, run 2: s44-early-trigger.patch (et1: the overlapped state pass triggers the stream's next kernel at its
# start; et3: and the persistent prep prefetches its first items' rows into L2 before its wait) against m45 (9fcede7's
# main build): test_cuda rs (also at overlap 2), quick and memcheck on et3; gdn bench at B=1, two rounds, in the default
# graph shape and with one call a graph. Carry .cubin (m45, et1, et3 .txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m45 et1 et3; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { # B T "labs" [gdn bench options]
  local r="" x l j; for x in 1 2; do for l in $3; do
    j=$(timeout 60 $L/$l/gdn bench --backend cuda --json --algo chunked --B $1 --T $2 ${4:-} 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "gdn bench B=$1 T=$2 ${4:-default} ($3): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for l in et1 et3; do echo "== $l rs: $(timeout 120 $L/$l/test_cuda rs 2>&1 | tail -n 1); overlap 2: $(GDN_CUDA_PREP_OVERLAP=2 timeout 120 $L/$l/test_cuda rs 2>&1 | tail -n 1)"; done
row 1 4096 "m45 et1 et3"
row 1 2048 "m45 et1 et3"
row 1 16384 "m45 et1 et3"
row 1 32768 "m45 et1 et3"
row 1 4096 "m45 et1 et3" "--graph-calls 1"
echo "== et3 quick: $(timeout 200 $L/et3/test_cuda quick 2>&1 | tail -n 1)"
echo "== et3 memcheck rs: $(timeout 200 compute-sanitizer --tool memcheck $L/et3/test_cuda rs 2>&1 | tail -n 2 | tr '\n' ' ')"
) 2>&1 | tee $OUT/run2.log
