#!/bin/bash
# Session 40, run 6: the candidate (kp: the persistent prep's k, q rows marked evict-last in L2, run 5's hn2 taken to
# the overlapped prep only; built from the tree with lab_build.sh kp "" "") against main's code (pw0 of run 1):
# correctness (test_cuda rs), the B=1 rows and B=64 (the per-item prep, unchanged), three rounds; DRAM bytes by ncu.
set -u
L=/tmp/L; mkdir -p "$L"; tar -C "$L" -xJf .cubin/kp.txz; tar -C "$L" -xJf .cubin/pw.txz pw0/bench_cuda
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
echo "== kp test_cuda rs"
timeout 120 "$L/kp/test_cuda" rs 2>&1 | tail -n 1
echo "== bench_cuda --one B T --chunked: pw0 kp, three rounds"
for BT in "1 2048" "1 4096" "1 32768" "64 4096"; do
  r=""; for x in 1 2 3; do for l in pw0 kp; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one $BT --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "B T=$BT: $r"; done
echo "== gdn bench (checked against the oracle), kp: B=1 T=4096 and 32768"
for T in 4096 32768; do timeout 120 "$L/kp/gdn" bench --backend cuda --json --algo chunked --B 1 --T $T 2>/dev/null | grep -oE '"(median_us|rel_err|max_rel_err)":[^,}]*' | head -3 | tr '\n' ' '; echo; done
echo "== ncu of one whole graph (the passes overlapped as timed; bench_cuda's graph holds 4 calls): DRAM bytes"
tar -C "$L" -xJf .cubin/pw.txz pw2/bench_cuda
for T in 4096; do for l in pw0 kp pw2; do
  echo "-- $l T=$T: $(timeout 150 ncu --graph-profiling graph -c 1 --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum "$L/$l/bench_cuda" --one 1 $T --chunked 2>&1 | grep -E "dram__bytes|lts__t_sectors|ERR|rror" | tr -s ' ' | tr '\n' ';')"
done; done
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv
