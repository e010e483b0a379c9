#!/bin/bash
# Session 31, third device command: ncu source counters (per-SASS-instruction stall samples) of the two-stage
# state pass alone (GDN_CUDA_PREP_OVERLAP=0), base = bbf64b5's kernels (lab_build.sh base), B=1 T=4096.
# Out: $OUT/rs_source.csv (ncu --page source --print-source sass), $OUT/rs_details.txt.
set -u
L=/tmp/L; mkdir -p "$L"; tar -C "$L" -xJf .cubin/base.txz
export GDN_CUDA_PREP_OVERLAP=0
timeout 200 ncu --section SourceCounters --section WarpStateStats --section SchedulerStats --section LaunchStats \
    -k regex:chunk_split_state_rs -c 1 -o "$OUT/rs" "$L/base/bench_cuda" --one 1 4096 --chunked > "$OUT/ncu.log" 2>&1
echo "ncu rc=$?"; tail -3 "$OUT/ncu.log"
ncu --import "$OUT/rs.ncu-rep" --page details > "$OUT/rs_details.txt" 2>&1; echo "details rc=$?"
ncu --import "$OUT/rs.ncu-rep" --page source --print-source sass --csv > "$OUT/rs_source.csv" 2>&1; echo "source rc=$?"
wc -c "$OUT"/*; grep -iE "stall|warp cycles|issued|eligible" "$OUT/rs_details.txt" | head -30
