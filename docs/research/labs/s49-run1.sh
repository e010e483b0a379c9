#!/bin/bash
# Written in session 48 (no device lent that session) for session 49: one device command, carry .cubin (m59, gs,
# rd, tl4: s49-build.sh). Issue 4's question: why do the persistent grids lose at T <= 5 (verify T=4 B=64: one item per
# CTA 71.6 us, persistent 74.0, ranges 76.2; session 47) and win from T=7?
#  1. m59 checked: test_cuda quick (the grids' counts printed). Every bench row prints gdn bench's own check (err, ok).
#  2. gdn bench verify B=64 at T=4 and T=8, two rounds: m59 by its rule; one item per CTA without front or tail; gs's
#     persistent grid at K = 528 (the resident CTAs), 1056 and 2048 CTAs (2048 = its items: one item per CTA, the same
#     kernel as the row before), and its range grid at K = 528, 1056, 2048 (a head a CTA, the RANGE kernel), 4096 and
#     8192 (2 and 1 tiles a CTA). If ranges at K = 2048 match one item per CTA, the RANGE code costs nothing and the
#     loss is in walking several items. And one item per CTA with the items scrambled (gs, GDN_LAB_SCRAMBLE=1029: CTA
#     b takes item 1029 b mod 2048, so the resident CTAs' heads spread over the whole state as the ranges' do; m=1:
#     unscrambled, the lab's own cost): if that is as slow as ranges, the loss is the spread, not the walk. And the
#     candidate fix for that case, rd's "ranges in rounds" (s48-pairs-range-rounds.patch): full rounds of a head per
#     CTA over a window of consecutive heads, then the remainder as ranges, so that the CTAs end together. The same
#     at B=256 (one round), and there at T=2 too (ranges 7.6% slower than one item per CTA in session 47).
#     Then B=64 without programmatic launches (GDN_CUDA_PDL=0): one item per CTA lets the next call's first wave
#     start (and prefetch) while this call drains, persistent grids hold every slot to their end; if one item per
#     CTA loses its lead at T=4 without PDL, that overlap is part of it.
#  3. tl4's per-item timeline (s47-timeline3.py) at T=4 and T=8 B=64: one item per CTA, persistent, ranges, and
#     ranges at K = 2048.
set -u
L=/tmp/L; mkdir -p $L; for p in m59 gs rd tl4; do tar -C $L -xJf .cubin/$p.txz; done
f() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2; }
one() { local l=$1; shift; local j; j=$(timeout 90 env "$@" --backend cuda --json 2>>$OUT/stderr.txt)
  echo "$l $j" >> $OUT/json.txt
  printf '%-48s %9s us  err %s ok %s\n' "$l" "$(echo "$j" | f median_us)" "$(echo "$j" | f rel_err)" "$(echo "$j" | f ok)"; }
S=$SECONDS
(nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== m59 test_cuda quick"
timeout 220 $L/m59/test_cuda quick 2>&1 | grep -E "calls on|calls with|PASS|FAIL" | tail -n 8
echo "checks done at $((SECONDS-S)) s"
for T in 4 8; do for r in 1 2; do
  one "T=$T r$r gs ranges K=77 (an odd grid)" GDN_CUDA_FAST_LPR=4 GDN_LAB_GRID_CTAS=77 $L/gs/gdn bench --B 64 --T $T
  one "T=$T r$r m59 rule" X=1 $L/m59/gdn bench --B 64 --T $T
  one "T=$T r$r m59 one item a CTA, no front, tail" GDN_CUDA_FAST_LPR=5 GDN_CUDA_FAST_TAIL=0 GDN_CUDA_FAST_FRONT=0 \
    $L/m59/gdn bench --B 64 --T $T
  for k in 528 1056 2048; do
    one "T=$T r$r gs persistent K=$k" GDN_CUDA_FAST_LPR=3 GDN_LAB_GRID_CTAS=$k $L/gs/gdn bench --B 64 --T $T; done
  for k in 528 1056 2048 4096 8192; do
    one "T=$T r$r gs ranges K=$k" GDN_CUDA_FAST_LPR=4 GDN_LAB_GRID_CTAS=$k $L/gs/gdn bench --B 64 --T $T; done
  for m in 1 1029; do
    one "T=$T r$r gs one item a CTA, scrambled m=$m" GDN_CUDA_FAST_LPR=5 GDN_CUDA_FAST_TAIL=0 GDN_CUDA_FAST_FRONT=0 \
      GDN_LAB_SCRAMBLE=$m $L/gs/gdn bench --B 64 --T $T; done
  one "T=$T r$r rd ranges in rounds" GDN_CUDA_FAST_LPR=4 $L/rd/gdn bench --B 64 --T $T
done; done
for T in 4 8; do # without programmatic launches: does one item per CTA win at T=4 by overlapping the previous call?
  one "T=$T PDL=0 m59 rule" GDN_CUDA_PDL=0 $L/m59/gdn bench --B 64 --T $T
  one "T=$T PDL=0 gs persistent K=528" GDN_CUDA_PDL=0 GDN_CUDA_FAST_LPR=3 $L/gs/gdn bench --B 64 --T $T
  one "T=$T PDL=0 gs ranges K=528" GDN_CUDA_PDL=0 GDN_CUDA_FAST_LPR=4 $L/gs/gdn bench --B 64 --T $T
done
for T in 2 4 8; do
  one "B=256 T=$T m59 rule" X=1 $L/m59/gdn bench --B 256 --T $T
  one "B=256 T=$T gs ranges K=528" GDN_CUDA_FAST_LPR=4 $L/gs/gdn bench --B 256 --T $T
  one "B=256 T=$T gs one item a CTA, scrambled m=1029" GDN_CUDA_FAST_LPR=5 GDN_CUDA_FAST_TAIL=0 GDN_CUDA_FAST_FRONT=0 \
    GDN_LAB_SCRAMBLE=1029 $L/gs/gdn bench --B 256 --T $T
  one "B=256 T=$T m59 one item a CTA, no front, tail" GDN_CUDA_FAST_LPR=5 GDN_CUDA_FAST_TAIL=0 GDN_CUDA_FAST_FRONT=0 \
    $L/m59/gdn bench --B 256 --T $T
  one "B=256 T=$T rd ranges in rounds" GDN_CUDA_FAST_LPR=4 $L/rd/gdn bench --B 256 --T $T
done
echo "bench done at $((SECONDS-S)) s"
for T in 4 8; do for g in 5 3 4 4:2048; do
  lpr=${g%%:*}; k=0; [ "$g" != "$lpr" ] && k=${g#*:}; n=${T}_${lpr}_$k
  echo "== tl4 --one 64 $T, GDN_CUDA_FAST_LPR=$lpr GDN_LAB_GRID_CTAS=$k: $(GDN_CUDA_FAST_LPR=$lpr GDN_LAB_GRID_CTAS=$k \
    GDN_LAB_TL_FILE=$OUT/a_$n.bin GDN_LAB_TL2_FILE=$OUT/b_$n.bin timeout 60 $L/tl4/bench_cuda --one 64 $T 2>&1 | tail -n 1)"
  python3 docs/research/labs/s47-timeline3.py $OUT/a_$n.bin $OUT/b_$n.bin > $OUT/tl_$n.txt 2>&1
  head -n 3 $OUT/tl_$n.txt; rm -f $OUT/a_$n.bin $OUT/b_$n.bin; done; done
tar -C $OUT -cJf $OUT/timelines.txz $(cd $OUT && ls tl_*.txt) && rm -f $OUT/tl_*.txt
echo "done at $((SECONDS-S)) s") 2>&1 | tee $OUT/run1.log
