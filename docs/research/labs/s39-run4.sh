#!/bin/bash
# Session 39, run 4: main (m39 = d1a426a's build/gdn) at every row of issues 4 and 5, two rounds; and where the
# overlapped order starts to pay at B=1 (GDN_CUDA_PREP_OVERLAP=2 forces it, 0 turns it off; the launcher takes it
# from two rounds of prep items, T > 1024 on the Qwen layer).
set -u
L=/tmp/L; mkdir -p $L; tar -C $L -xJf .cubin/m39.txz
G=$L/m39/gdn
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv | tail -1
one() { local l=$1; shift; local j; j=$(timeout 90 env "$@" --backend cuda --json 2>>$OUT/stderr.txt); echo "$j" >> $OUT/json.txt
  printf '%-36s %9s us  %%BW %7s err %s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f pct_mem_bw)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
S=$SECONDS
for r in 1 2; do
  for B in 1 8 64 256; do one "decode B=$B r$r" X=1 $G bench --B $B --T 1; done
  for B in 1 64; do one "verify T=4 B=$B r$r" X=1 $G bench --B $B --T 4; done
  one "verify T=4 B=64 capture r$r" X=1 $G bench --B 64 --T 4 --capture
  for c in "1 512" "1 4096" "1 32768" "8 4096" "64 4096"; do set -- $c
    one "chunked B=$1 T=$2 r$r" X=1 $G bench --algo chunked --B $1 --T $2; done
  for T in 4096 32768; do one "chunked B=1 T=$T bf16 r$r" X=1 $G bench --algo chunked --B 1 --T $T --precision bf16; done
  for T in 768 1024 1280 1536 2048; do
    one "chunked B=1 T=$T r$r" X=1 $G bench --algo chunked --B 1 --T $T
    one "chunked B=1 T=$T ovl=2 r$r" GDN_CUDA_PREP_OVERLAP=2 $G bench --algo chunked --B 1 --T $T
    one "chunked B=1 T=$T ovl=0 r$r" GDN_CUDA_PREP_OVERLAP=0 $G bench --algo chunked --B 1 --T $T
  done
  echo "round $r at $((SECONDS-S)) s"
done
