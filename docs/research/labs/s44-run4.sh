#!/bin/bash
# Session 44, run 4: s44-prep-first-chunks-per-value-head-hoisted.patch (fhF: the first F chunks' prep items one per
# value head, the state pass's flag addresses hoisted) against main 4b21554 (m46) in gdn bench at B=1, two rounds; then
# m46 on every row of issues 4 and 5 (gdn bench, one round) and fla bc3b101d beside it (s37-bench-fla.py; carry .fla,
# git-ignored, never committed) in the same command. Carry .cubin (m46, fh1, fh2 .txz) and .fla.
set -u
L=/tmp/L; mkdir -p $L; for x in m46 fh1 fh2; do tar -C $L -xJf .cubin/$x.txz; done
G=$L/m46/gdn
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
row() { # B T "labs" [gdn bench options]
  local r="" x l j; for x in 1 2; do for l in $3; do
    j=$(timeout 60 $L/$l/gdn bench --backend cuda --json --algo chunked --B $1 --T $2 ${4:-} 2>&1)
    r="$r $(echo "$j" | f median_us)"; [ "$(echo "$j" | f ok)" = "true" ] || r="$r(NOT OK)"; done; r="$r |"; done
  echo "gdn bench B=$1 T=$2 ${4:-default} ($3): $r"; }
one() { local l=$1; shift; local j; j=$(timeout 90 env "$@" --backend cuda --json 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-40s %9s us  %%BW %7s err %s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f pct_mem_bw)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
S=$SECONDS
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for l in fh1 fh2; do echo "== $l rs: $(timeout 120 $L/$l/test_cuda rs 2>&1 | tail -n 1); overlap 2: $(GDN_CUDA_PREP_OVERLAP=2 timeout 120 $L/$l/test_cuda rs 2>&1 | tail -n 1)"; done
row 1 4096 "m46 fh1 fh2"
row 1 2048 "m46 fh1 fh2"
row 1 32768 "m46 fh1 fh2"
echo "labs done at $((SECONDS-S)) s"
for B in 1 64 256; do one "decode B=$B" X=1 $G bench --B $B --T 1; done
for B in 1 64; do one "verify T=4 B=$B" X=1 $G bench --B $B --T 4; done
one "verify T=4 B=64 capture" X=1 $G bench --B 64 --T 4 --capture
for c in "1 512" "1 4096" "1 32768" "8 4096" "64 4096"; do set -- $c
  one "chunked B=$1 T=$2" X=1 $G bench --algo chunked --B $1 --T $2; done
echo "gdn done at $((SECONDS-S)) s"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
timeout 280 python3 docs/research/labs/s37-bench-fla.py 2>&1 | grep -v Warning
echo "done at $((SECONDS-S)) s") 2>&1 | tee $OUT/run4.log
