#!/bin/bash
# Session 38, run 1 (device; carry .cubin with base.txz and fb.txz from lab_build.sh):
#   fb = s38-fold-beta.patch: the prep writes T diag(b) for the register-sourced state pass (layouts 2, 3) and
#        sk = gam ksc, so that pass's R^T = V^T - X^T diag(sk) is one FFMA an element (no diag(b), no bt loads);
#   then s38-next-run.sh's decode tiles-per-CTA sweep on main's gdn.
set -u
L=/tmp/L; mkdir -p $L; for l in base fb; do tar -C $L -xJf .cubin/$l.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
echo "== fb test_cuda rs"; timeout 300 $L/fb/test_cuda rs > $OUT/fb_rs.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/fb_rs.log | tail -3
echo "== fb test_cuda quick"; timeout 300 $L/fb/test_cuda quick > $OUT/fb_quick.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/fb_quick.log | tail -3
one() { local l=$1; local g=$2; shift 2; local j; j=$(timeout 90 $g bench --backend cuda --json "$@" 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-40s %9s us  err %s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
for r in 1 2; do
  for c in "1 512" "1 4096" "1 32768" "8 4096" "64 4096"; do set -- $c
    for l in base fb; do one "$l B=$1 T=$2 r$r" $L/$l/gdn --algo chunked --B $1 --T $2; done
    if [ $1 = 1 ] && [ $2 != 512 ]; then for l in base fb; do one "$l B=$1 T=$2 bf16 r$r" $L/$l/gdn --algo chunked --B $1 --T $2 --precision bf16; done; fi
  done
done
echo "== decode J sweep (main)"
G=$L/base/gdn
dj() { local l=$1; shift; local j; j=$(timeout 60 env "$@" 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-28s %9s us  %%BW %6s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f pct_mem_bw)" "$(echo "$j" | f ok)"; }
for r in 1 2; do
  for B in 2 4 8 16 32 64; do
    dj "B=$B default r$r" X=0 $G bench --backend cuda --json --B $B --T 1
    dj "B=$B J=1 r$r" GDN_CUDA_FAST_J=1 $G bench --backend cuda --json --B $B --T 1
    dj "B=$B LPR=8 J=1 r$r" GDN_CUDA_FAST_J=1 GDN_CUDA_FAST_LPR=8 $G bench --backend cuda --json --B $B --T 1
  done
done
