#!/bin/bash
# Written in session 47 for the next session (not run): m58 (c07ce3e's Release build; HEAD's kernels: the pairs
# kernel's grids above T=5) on every row of issues 4 and 5 and on verify T=6 and T=8, one round, and fla beside it in
# the same command (s37-bench-fla.py on the git-ignored .fla, never committed), its usual rows and fused_recurrent at
# T=8 B=64 and 256. Carry .cubin (m58.txz) and .fla. Another build: M=NAME (session 48: s49-run2.sh runs it on m59).
set -u
M=${M:-m58}
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/$M.txz
G=$L/$M/gdn
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
one() { local l=$1; shift; local j; j=$(timeout 90 env "$@" --backend cuda --json 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-40s %9s us  %%BW %7s err %s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f pct_mem_bw)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
S=$SECONDS
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
for B in 1 64 256; do one "decode B=$B" X=1 $G bench --B $B --T 1; done
for B in 1 64; do one "verify T=4 B=$B" X=1 $G bench --B $B --T 4; done
one "verify T=4 B=64 capture" X=1 $G bench --B 64 --T 4 --capture
for c in "64 6" "256 6" "64 8" "256 8"; do set -- $c; one "verify T=$2 B=$1" X=1 $G bench --B $1 --T $2; done
for c in "1 512" "1 4096" "1 32768" "8 4096" "64 4096"; do set -- $c
  one "chunked B=$1 T=$2" X=1 $G bench --algo chunked --B $1 --T $2; done
echo "gdn done at $((SECONDS-S)) s"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
timeout 300 python3 docs/research/labs/s37-bench-fla.py 2>&1 | grep -v Warning
timeout 120 python3 docs/research/labs/s37-bench-fla.py rec:64:6,rec:256:6,rec:64:8,rec:256:8 2>&1 | grep -v Warning
echo "done at $((SECONDS-S)) s") 2>&1 | tee $OUT/next.log
