#!/bin/bash
# Session 42, run 2: the workspace's blocks on whole 128-byte lines with the scalars' last 32-byte sector written in
# full (s42-workspace-lines.patch, pd = -DGDN_LAB_PAD=1), and that with run 1's tb (pt = both patches, both defines),
# against main (m41) and tb.
set -u
L=/tmp/L; mkdir -p $L; for x in m41 tb pd pt; do tar -C $L -xJf .cubin/$x.txz; done
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv | tail -1
S=$SECONDS
for l in pd pt; do
  echo "== $l test_cuda rs: $(timeout 100 $L/$l/test_cuda rs 2>&1 | tail -n 1); overlap 2: $(GDN_CUDA_PREP_OVERLAP=2 timeout 100 $L/$l/test_cuda rs 2>&1 | tail -n 1)"; done
echo "tests done at $((SECONDS-S)) s"
for c in "1 2048" "1 4096" "1 32768" "8 4096" "64 4096"; do
  r=""; for x in 1 2 3; do for l in m41 pd; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $c --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "bench_cuda B,T=$c (m41 pd): $r"; done
echo "bench_cuda done at $((SECONDS-S)) s"
gb() { local j; j=$(timeout 90 "$L/$1/gdn" bench --backend cuda --json --algo chunked --B $2 --T $3 ${4:-} 2>/dev/null); echo "$(echo "$j" | f median_us)/$(echo "$j" | f rel_err)"; }
for r in 1 2; do
  for T in 4096 32768; do
    echo "gdn bench r$r B=1 T=$T default (m41 pd): $(gb m41 1 $T) $(gb pd 1 $T)"
    echo "gdn bench r$r B=1 T=$T bf16 (m41 tb pd pt): $(gb m41 1 $T '--precision bf16') $(gb tb 1 $T '--precision bf16') $(gb pd 1 $T '--precision bf16') $(gb pt 1 $T '--precision bf16')"
  done
  echo "gdn bench r$r B=64 T=4096 default (m41 pd): $(gb m41 64 4096) $(gb pd 64 4096)"
  echo "round $r at $((SECONDS-S)) s"
done
echo "== pt test_cuda quick: $(timeout 200 $L/pt/test_cuda quick 2>&1 | tail -n 1)"
echo "done at $((SECONDS-S)) s"
