#!/bin/bash
# Session 44, run 1: s44-next-run.sh's question (the next-row prefetch two items ahead, pa2, and up to T=32768, pc512)
# and the prep-fill lab (s44-prep-fill-alone.patch: ff1 the groups-outer item order; ff2cK also the first K chunks'
# items alone on their SMs) against m45 (9fcede7's main build), in gdn bench's default graph shape, two rounds; the
# ff labs checked by test_cuda rs. Carry .cubin (m45, pa2, pc512, ff1, ff2c1, ff2c2, ff2c3 .txz).
set -u
L=/tmp/L; mkdir -p $L; for x in m45 pa2 pc512 ff1 ff2c1 ff2c2 ff2c3; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { # B T "labs" [gdn bench options]
  local r="" x l j; for x in 1 2; do for l in $3; do
    j=$(timeout 60 $L/$l/gdn bench --backend cuda --json --algo chunked --B $1 --T $2 ${4:-} 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "gdn bench B=$1 T=$2 ${4:-default} ($3): $r"; }
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for l in ff1 ff2c1 ff2c3; do echo "== $l rs: $(timeout 120 $L/$l/test_cuda rs 2>&1 | tail -n 1)"; done
row 1 4096 "m45 pa2 pc512 ff1 ff2c1 ff2c2 ff2c3"
row 1 2048 "m45 ff1 ff2c1 ff2c2 ff2c3"
row 1 16384 "m45 pa2 pc512 ff1 ff2c1 ff2c2"
row 1 32768 "m45 pa2 pc512 ff1 ff2c1 ff2c2"
row 8 4096 "m45 ff1 ff2c1 ff2c2"
row 1 32768 "m45 pc512" "--graph-calls 1"
row 1 32768 "m45 pc512" "--graph-calls 4"
) 2>&1 | tee $OUT/run1.log
