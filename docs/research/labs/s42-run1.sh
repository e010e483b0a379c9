#!/bin/bash
# Session 42, run 1: the workspace's consumed lines dropped from L2 without a write-back (s42-workspace-discard.patch,
# ds = -DGDN_LAB_DSC=1) and precision BF16's state pass copying only the bf16 half of T's region (s42-tb-t-half.patch,
# tb = -DGDN_LAB_TB8=1), against main (m41 = 809d213's kernels, PTX-identical to HEAD's).
set -u
L=/tmp/L; mkdir -p $L; for x in m41 ds tb; do tar -C $L -xJf .cubin/$x.txz; done
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv | tail -1
S=$SECONDS
echo "== ds test_cuda rs: $(timeout 100 $L/ds/test_cuda rs 2>&1 | tail -n 1); overlap 2: $(GDN_CUDA_PREP_OVERLAP=2 timeout 100 $L/ds/test_cuda rs 2>&1 | tail -n 1)"
echo "== tb test_cuda rs: $(timeout 100 $L/tb/test_cuda rs 2>&1 | tail -n 1)"
echo "tests done at $((SECONDS-S)) s"
for T in 2048 4096 32768; do
  r=""; for x in 1 2 3; do for l in m41 ds; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one 1 $T --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "bench_cuda B=1 T=$T (m41 ds): $r"; done
echo "bench_cuda done at $((SECONDS-S)) s"
gb() { local j; j=$(timeout 90 "$L/$1/gdn" bench --backend cuda --json --algo chunked --B 1 --T $2 ${3:-} 2>/dev/null); echo "$(echo "$j" | f median_us)/$(echo "$j" | f rel_err)"; }
for r in 1 2; do
  for T in 4096 32768; do
    echo "gdn bench r$r T=$T default (m41 ds): $(gb m41 $T) $(gb ds $T)"
    echo "gdn bench r$r T=$T bf16 (m41 ds tb): $(gb m41 $T '--precision bf16') $(gb ds $T '--precision bf16') $(gb tb $T '--precision bf16')"
  done
  echo "round $r at $((SECONDS-S)) s"
done
echo "== ds test_cuda quick: $(timeout 200 $L/ds/test_cuda quick 2>&1 | tail -n 1)"
echo "done at $((SECONDS-S)) s"
