#!/bin/bash
# Written in session 48 (no device lent that session) for session 49: s48-next-run.sh (session 47's, never run) on
# m59 (s49-build.sh: HEAD's Release build) instead of m58: every row of issues 4 and 5 and verify T=6 / T=8, one
# round, and fla beside it in the same command (s37-bench-fla.py on the git-ignored .fla, never committed), its usual
# rows and fused_recurrent at T=6 and T=8, B=64 and 256. Carry .cubin (m59.txz) and .fla.
M=m59 exec bash "$(dirname "$0")/s48-next-run.sh"
