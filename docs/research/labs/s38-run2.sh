#!/bin/bash
# Session 38, run 2 (device; carry .cubin with base.txz and fb2.txz, and build/gdn):
#   fb2 = s38-fold-beta-tf32.patch: as s38-fold-beta.patch for the tf32 form only (layout 2), with T diag(b) made by
#         solving for the right-hand side diag(b) I (the strip's first block scaled, four FMULs a strip) instead of
#         scaling every store (run 1's fb: slower in tf32, and in bf16 over the 4e-3 bar);
#   then main's launcher with decode at 16 lanes on one tile per CTA (build/gdn) against GDN_CUDA_FAST_J=2.
set -u
L=/tmp/L; mkdir -p $L; for l in base fb2; do tar -C $L -xJf .cubin/$l.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
echo "== fb2 test_cuda rs"; timeout 300 $L/fb2/test_cuda rs > $OUT/fb2_rs.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS|rel RMS" $OUT/fb2_rs.log | tail -12
echo "== fb2 test_cuda quick"; timeout 300 $L/fb2/test_cuda quick > $OUT/fb2_quick.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/fb2_quick.log | tail -3
one() { local l=$1; local g=$2; shift 2; local j; j=$(timeout 90 $g bench --backend cuda --json "$@" 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-40s %9s us  err %s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
for r in 1 2 3; do
  for c in "1 512" "1 4096" "1 32768" "8 4096" "64 4096"; do set -- $c
    for l in base fb2; do one "$l B=$1 T=$2 r$r" $L/$l/gdn --algo chunked --B $1 --T $2; done
  done
done
echo "== decode: main's launcher (J=1 at 16 lanes) against J=2"
dj() { local l=$1; shift; local j; j=$(timeout 60 env "$@" 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-28s %9s us  %%BW %6s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f pct_mem_bw)" "$(echo "$j" | f ok)"; }
for r in 1 2; do
  for B in 1 2 4 6 8 12 16 64; do
    dj "B=$B main r$r" X=0 build/gdn bench --backend cuda --json --B $B --T 1
    dj "B=$B J=2 r$r" GDN_CUDA_FAST_J=2 build/gdn bench --backend cuda --json --B $B --T 1
  done
done
echo "== main test_cuda quick (decode J rule)"; timeout 300 build/tests/test_cuda quick > $OUT/main_quick.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/main_quick.log | tail -3
