# Session 86 (one GPU, ~350 s): what s86-c4-x1.sh's 200 s bound left of multigpu_4ranks_1gpu, at 4
# ranks on one GPU: the last seven Overlap tests and the collectives' parametrized suites (Collectives/*:
# all_to_all_v's among them; they ran at 8 ranks in that call; DebugChecks skips without its variable).
#   COMMIT=<sha> bash tools/call.sh tools/steps/s86-c5-x1.sh (carry [".deps/googletest", ".deps/anchors"])
FILTER='Overlap.OwnGemmEpilogueRing*:Overlap.ReduceScatterForms*:Overlap.OwnGemmRowShards*:Overlap.TransposedGemmDynamic*:Overlap.EpilogueRingOfVirtual*:Overlap.RowsNot*:Overlap.Knobs*:Collectives/*' TLIMIT=330 T 4 4 SYMMEM_TIMEOUT_MS=100000
true
