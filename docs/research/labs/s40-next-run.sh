#!/bin/bash
# For session 40 (written in session 39, not run): what makes the B=1 state pass slower a chunk beside the prep than
# alone (1.38 against 1.33 us, session 33's trace). s39-prep-traffic-lab.patch takes the prep's HBM traffic away
# while it keeps its work and flags (timing only: wrong results, so bench_cuda, which does not check outputs):
# pw1 no dirty write-backs, pw2 no HBM row reads, pw3 both, pw5 the workspace never leaving L2 (the prep writes and
# the state pass reads every chunk's blocks at the first chunk's), pw7 that and the rows. Build first, on the CPU
# machine (build/ at HEAD; session 39 left .cubin/pw.txz, built from this patch):
#   for n in 0 1 2 3 5 7; do docs/research/labs/lab_build.sh pw$n s39-prep-traffic-lab.patch -DGDN_LAB_PW=$n; done
#   (cd /tmp/labs && tar cJf /work/main/.cubin/pw.txz pw{0,1,2,3,5,7}/bench_cuda)
# and carry .cubin. Reading: the overlapped T=32768 time over 512 chunks against the in-turn state pass's rate
# (GDN_CUDA_PREP_OVERLAP=0 rows below; its state pass alone is the call less the prep's time). If pw1 or pw3 bring the
# overlapped calls down by ~3% (T=32768 ~20 us), the prep's write-backs are the interference (pw5: the workspace's
# HBM traffic as a whole), and discarding the dead workspace lines after the state pass reads them
# (discard.global.L2) or evict-first stores are the next lab; if none moves, it is not the memory traffic.
set -u
L=/tmp/L; mkdir -p "$L"; tar -C "$L" -xJf .cubin/pw.txz
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv
med() { grep -oE "median +[0-9]+\.[0-9]+" | grep -oE "[0-9.]+$"; }
echo "== bench_cuda --one 1 T --chunked: pw0 pw1 pw2 pw3 pw5 pw7, three rounds"
for T in 2048 4096 32768; do
  r=""; for x in 1 2 3; do for l in pw0 pw1 pw2 pw3 pw5 pw7; do
    r="$r $(timeout 60 "$L/$l/bench_cuda" --one 1 $T --chunked 2>&1 | med)"; done; r="$r |"; done
  echo "T=$T: $r"; done
echo "== GDN_CUDA_PREP_OVERLAP=0 (in turn): pw0 pw5, two rounds"
for T in 4096 32768; do
  r=""; for x in 1 2; do for l in pw0 pw5; do
    r="$r $(GDN_CUDA_PREP_OVERLAP=0 timeout 60 "$L/$l/bench_cuda" --one 1 $T --chunked 2>&1 | med)"; done; done
  echo "T=$T in turn: $r"; done
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv
