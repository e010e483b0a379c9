#!/bin/bash
# Session 44, run 3: main 4b21554 (m46: the early trigger and the first rows prefetched before the wait) checked
# (test_cuda rs, also at overlap 2; racecheck and synccheck on rs) and s44-prep-first-chunks-per-value-head.patch
# (fvF: the first F chunks' prep items one per value head) against it in gdn bench at B=1, two rounds. Carry .cubin
# (m46, fv1, fv2, fv3 .txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m46 fv1 fv2 fv3; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { # B T "labs" [gdn bench options]
  local r="" x l j; for x in 1 2; do for l in $3; do
    j=$(timeout 60 $L/$l/gdn bench --backend cuda --json --algo chunked --B $1 --T $2 ${4:-} 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "gdn bench B=$1 T=$2 ${4:-default} ($3): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for l in m46 fv1 fv2 fv3; do echo "== $l rs: $(timeout 120 $L/$l/test_cuda rs 2>&1 | tail -n 1); overlap 2: $(GDN_CUDA_PREP_OVERLAP=2 timeout 120 $L/$l/test_cuda rs 2>&1 | tail -n 1)"; done
row 1 4096 "m46 fv1 fv2 fv3"
row 1 2048 "m46 fv1 fv2 fv3"
row 1 16384 "m46 fv1 fv2 fv3"
row 1 32768 "m46 fv1 fv2 fv3"
for t in racecheck synccheck; do echo "== m46 $t rs: $(timeout 240 compute-sanitizer --tool $t $L/m46/test_cuda rs 2>&1 | tail -n 2 | tr '\n' ' ')"; done
) 2>&1 | tee $OUT/run3.log
