#!/bin/bash
# Session 46, run 8. fr = s46-pairs-front-half.patch on 0f6a676 (GDN_LAB_FRONT=F: the first F heads at half the tiles
# per CTA besides the drain rule's tail; 0 = main's kernel): gdn bench verify, two rounds; checks. Carry .cubin (fr).
set -u
L=/tmp/L; mkdir -p $L; for x in fr; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { local bin=$1 var=$2 B=$3 T=$4 r="" x k j; shift 4; for x in 1 2; do for k in "$@"; do
    j=$(env $var=$k timeout 60 $L/$bin/gdn bench --backend cuda --json --B $B --T $T 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "$bin gdn bench B=$B T=$T ($var = $*): $r"; }
(row fr GDN_LAB_FRONT 64 4 0 48 96 132 264
row fr GDN_LAB_FRONT 256 4 0 132 264
row fr GDN_LAB_FRONT 128 4 0 132
row fr GDN_LAB_FRONT 64 8 0 132
echo "== fr sanitize (not under a sanitizer), pairs, tail 3, front 5: $(GDN_LAB_FRONT=5 GDN_CUDA_FAST_TAIL=3 GDN_CUDA_FAST_LPR=2 timeout 60 $L/fr/test_cuda sanitize 2>&1 | tail -n 1)"
echo "== fr rs, front 132: $(GDN_LAB_FRONT=132 timeout 60 $L/fr/test_cuda rs 2>&1 | tail -n 1)"
) 2>&1 | tee $OUT/run8.log
