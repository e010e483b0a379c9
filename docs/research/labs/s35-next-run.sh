#!/bin/bash
# Session 35's lab for the next session (built and compile-checked here, not run: the device time was spent).
#   vb = s35-state-pass-vb-helpers.patch -DGDN_LAB_VB=1: three helper warps write each landed stage's V^T diag(bt)
#   in f32, so the B=1 state pass's compute warps make R^T by one FFMA an element (about 60 of their 603
#   instructions a chunk fewer by a reading of the source, all on the chain between X^T's wait and D^T's issue; precision unchanged).
#   Session 15 found the chunk's time follows the compute warps' instruction count (4-7% per 96 instructions),
#   session 31 that the same kind of helper (a warp rescaling each stage, sgw) lost 3% to its extra wait: this
#   asks which wins here. 248 registers, no spills, no C7518, 256 threads, about 186 KB of shared memory.
#   nort = the same patch with -DGDN_LAB_NORT=1: R^T's element-wise work compiled out (wrong results; timed only):
#   the most any cut of that step could gain. If nort is no faster than base, drop vb whatever its own time.
#   nort2 = -DGDN_LAB_NORT=2: every scaling on the chain compiled out too (gl S, cf D^T, Y^T diag(sq)): the bound
#   for DESIGN's step (e), the scalings folded into the operands (which would cost precision and prep time).
# Build here first (a Release build in build/; about 4 minutes each, two at once):
#   docs/research/labs/lab_build.sh base "" ""
#   docs/research/labs/lab_build.sh vb s35-state-pass-vb-helpers.patch -DGDN_LAB_VB=1
#   docs/research/labs/lab_build.sh nort s35-state-pass-vb-helpers.patch -DGDN_LAB_NORT=1
#   docs/research/labs/lab_build.sh nort2 s35-state-pass-vb-helpers.patch -DGDN_LAB_NORT=2
#   for l in base vb nort nort2; do rm -rf /tmp/pk/$l; mkdir -p /tmp/pk/$l && cp /tmp/labs/$l/{gdn,bench_cuda,test_cuda} /tmp/pk/$l/ &&
#       tar -C /tmp/pk -cJf .cubin/$l.txz $l; done
# Then on the device (carry .cubin; about 3 minutes): bash docs/research/labs/s35-next-run.sh
# If vb wins: merge without the lab define (the helper warps' count in RS_PW_THREADS), then on the device
# test_cuda rs / quick, compute-sanitizer memcheck and racecheck of `test_cuda rs`, and CI.
set -u
L=/tmp/L; mkdir -p $L; for l in base vb nort nort2; do tar -C $L -xJf .cubin/$l.txz; done
for m in 1 2 0; do echo "== vb test_cuda rs GDN_CUDA_PREP_OVERLAP=$m"
  GDN_CUDA_PREP_OVERLAP=$m timeout 120 $L/vb/test_cuda rs > $OUT/vb_rs_$m.log 2>&1; echo rc=$?
  grep -E "FAIL|^PASS" $OUT/vb_rs_$m.log | tail -3; done
cuobjdump -sass -fun '_Z27chunk_split_state_rs_kernelILi128ELi2ELi1ELi1ELb0EEv15gdn_cuda_params7rs_maps' $L/vb/gdn > $OUT/vb_rs_sass.txt 2>&1
echo "vb state pass SASS: $(grep -c HGMMA $OUT/vb_rs_sass.txt) HGMMA, $(grep -c FMUL $OUT/vb_rs_sass.txt) FMUL, $(grep -cE '^ +/\*[0-9a-f]+\*/' $OUT/vb_rs_sass.txt) instructions"
for c in "1 512" "1 2048" "1 4096" "1 32768" "2 4096" "8 4096"; do set -- $c
  r=""; for l in base vb nort nort2 base vb nort nort2; do r="$r $(timeout 60 $L/$l/bench_cuda --one $1 $2 --chunked 2>&1 | grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$")"; done
  echo "bench_cuda B=$1 T=$2 (base vb nort nort2, twice): $r"; done
for c in "1 512" "1 4096" "1 32768" "8 4096"; do set -- $c
  r=""; for l in base vb; do r="$r | $(timeout 60 $L/$l/gdn bench --backend cuda --algo chunked --B $1 --T $2 2>&1 | awk '/^prefill/ {print $4, $10}')"; done
  echo "gdn bench B=$1 T=$2 (base vb): $r"; done
echo "== vb test_cuda quick"; timeout 300 $L/vb/test_cuda quick > $OUT/vb_quick.log 2>&1; echo rc=$?; grep -E "FAIL|^PASS" $OUT/vb_quick.log | tail -2
