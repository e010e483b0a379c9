#!/bin/bash
# Session 41, run 2: the persistent prep's flag fence by one thread (s41-prep-publish-one-fence.patch; pb1 at once
# after the group's barrier, pb2 deferred to beside the next item's row copies, pb4 with the proxy fences after the
# next item's rows landed; pb0 the patch without its define = main's code), against m41 (main's build).
set -u
L=/tmp/L; mkdir -p "$L"; tar -C "$L" -xJf .cubin/m41.txz; tar -C "$L" -xJf .cubin/pb.txz
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
for l in pb1 pb2 pb4; do
  echo "== $l test_cuda rs: default, GDN_CUDA_PREP_OVERLAP=2"
  timeout 120 "$L/$l/test_cuda" rs 2>&1 | tail -n 1
  GDN_CUDA_PREP_OVERLAP=2 timeout 120 "$L/$l/test_cuda" rs 2>&1 | tail -n 1
done
echo "== bench_cuda --one 1 T --chunked: m41 pb0 pb1 pb2 pb4, three rounds"
for T in 2048 4096 32768; do
  r=""; for x in 1 2 3; do for l in m41 pb0 pb1 pb2 pb4; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one 1 $T --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "B=1 T=$T: $r"; done
echo "== gdn bench (checked): B=1 T=4096, 32768"
for T in 4096 32768; do for l in m41 pb0 pb1 pb2 pb4; do
  echo "$l T=$T $(timeout 120 "$L/$l/gdn" bench --backend cuda --json --algo chunked --B 1 --T $T 2>/dev/null | grep -oE '"(median_us|rel_err)":[^,}]*' | tr '\n' ' ')"
done; done
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv
