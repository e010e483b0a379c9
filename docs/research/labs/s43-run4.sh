#!/bin/bash
# Session 43, run 4: main (m43 = 0ea3e7b's build) on every row of issues 4 and 5 (gdn bench, one round), verify T=4
# B=64 on the persistent pairs grid at J = 1, 2, 4 (GDN_CUDA_FAST_LPR=3, GDN_CUDA_FAST_J), and fla beside it
# (s37-bench-fla.py; carry .fla: fla bc3b101d's fla/ by git archive, git-ignored, never committed) in one command.
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/m43.txz
G=$L/m43/gdn
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
one() { local l=$1; shift; local j; j=$(timeout 90 env "$@" --backend cuda --json 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-40s %9s us  %%BW %7s err %s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f pct_mem_bw)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
S=$SECONDS
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for B in 1 64 256; do one "decode B=$B" X=1 $G bench --B $B --T 1; done
for B in 1 64; do one "verify T=4 B=$B" X=1 $G bench --B $B --T 4; done
for j in 1 2 4; do one "verify T=4 B=64 persistent J=$j" GDN_CUDA_FAST_LPR=3 GDN_CUDA_FAST_J=$j $G bench --B 64 --T 4; done
one "verify T=4 B=64 capture" X=1 $G bench --B 64 --T 4 --capture
for c in "1 512" "1 4096" "1 32768" "8 4096" "64 4096"; do set -- $c
  one "chunked B=$1 T=$2" X=1 $G bench --algo chunked --B $1 --T $2; done
echo "gdn done at $((SECONDS-S)) s"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
timeout 400 python3 docs/research/labs/s37-bench-fla.py 2>&1 | grep -v Warning
echo "done at $((SECONDS-S)) s") 2>&1 | tee $OUT/run4.log
