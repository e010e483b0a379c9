#!/bin/bash
# Session 46, run 9. fr (run 8's build): the front's F mapped at B=96, 128 and 256 (T=4) and T=3 B=256, two rounds;
# then quick with the pairs kernel, the tail and the front forced. Carry .cubin (fr).
set -u
L=/tmp/L; mkdir -p $L; for x in fr; do tar -C $L -xJf .cubin/$x.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { local bin=$1 var=$2 B=$3 T=$4 r="" x k j; shift 4; for x in 1 2; do for k in "$@"; do
    j=$(env $var=$k timeout 60 $L/$bin/gdn bench --backend cuda --json --B $B --T $T 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "$bin gdn bench B=$B T=$T ($var = $*): $r"; }
(row fr GDN_LAB_FRONT 96 4 0 66 132 200
row fr GDN_LAB_FRONT 128 4 0 96 200
row fr GDN_LAB_FRONT 256 4 0 96 200 400
row fr GDN_LAB_FRONT 256 3 0 132
echo "== fr quick, pairs, tail 3, front 5: $(GDN_LAB_FRONT=5 GDN_CUDA_FAST_TAIL=3 GDN_CUDA_FAST_LPR=2 timeout 110 $L/fr/test_cuda quick 2>&1 | tail -n 1)"
) 2>&1 | tee $OUT/run9.log
