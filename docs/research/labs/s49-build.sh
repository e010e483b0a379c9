#!/bin/bash
# Written in session 48 (no device lent that session) for the next: builds here, in about 15 minutes on the 2-core
# machine, what s49-run1.sh and s49-run2.sh carry in .cubin (git-ignored):
#   m59 = HEAD's Release build (gdn, bench_cuda, test_cuda): session 47's grids with the arithmetic moved to
#         src/cuda/pairs_map.h (session 48; PTX of the pairs kernels unchanged but for each CTA's walk set-up);
#   gs  = s48-pairs-grid-size.patch (-DGDN_LAB_GRID=1 -DGDN_LAB_SCR=1): the persistent and range grids at
#         GDN_LAB_GRID_CTAS CTAs, and one item per CTA in a scrambled order (GDN_LAB_SCRAMBLE);
#   rd  = that and s48-pairs-range-rounds.patch (-DGDN_LAB_GRID=1 -DGDN_LAB_RND=1): the range grid in rounds;
#   tl4 = s48-pairs-timeline.patch and the same (-DGDN_LAB_TL=1 -DGDN_LAB_GRID=1): session 47's per-item timeline
#         (s47-pairs-range-timeline.patch rebased onto pairs_map.h), read by s47-timeline3.py.
# fla's Python sources go in the git-ignored .fla/fla (the device tool's fetch of fla-org/flash-linear-attention,
# then its fla folder copied there; never committed).
set -e
cd "$(dirname "$0")/../../.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j 2 > /tmp/s49-build.log 2>&1 || { tail -n 30 /tmp/s49-build.log; exit 1; }
mkdir -p .cubin
pack() { # NAME DIR_WITH_gdn DIR_WITH_TESTS
    rm -rf "/tmp/$1" && mkdir -p "/tmp/$1" && cp "$2/gdn" "$3/bench_cuda" "$3/test_cuda" "/tmp/$1/" &&
        tar -C /tmp -cJf ".cubin/$1.txz" "$1" && echo "packed .cubin/$1.txz"
}
pack m59 build build/tests
D=docs/research/labs
$D/lab_build.sh gs "s48-pairs-grid-size.patch" "-DGDN_LAB_GRID=1 -DGDN_LAB_SCR=1" && pack gs /tmp/labs/gs /tmp/labs/gs
$D/lab_build.sh rd "s48-pairs-grid-size.patch s48-pairs-range-rounds.patch" "-DGDN_LAB_GRID=1 -DGDN_LAB_RND=1" &&
    pack rd /tmp/labs/rd /tmp/labs/rd
$D/lab_build.sh tl4 "s48-pairs-timeline.patch s48-pairs-grid-size.patch" "-DGDN_LAB_TL=1 -DGDN_LAB_GRID=1" &&
    pack tl4 /tmp/labs/tl4 /tmp/labs/tl4
du -sh .cubin
