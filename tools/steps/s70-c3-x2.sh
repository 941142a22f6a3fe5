# Steps for tools/call.sh on a 2-GPU machine (session 70, call 3): call 2 found ~1.3 us lost as
# soon as a wait left its eager phase, even where its pause was ~200 ns (4 MiB with 8 us eager),
# and 128 MiB direct slower than main unless the pauses reached 2 us. Here the seen word acquired
# by a second load with acquire instead of a system fence: the work tree (8 us eager, 1/64 of the
# time past it, up to 1 us) beside a16s6 (16 us eager), a8n (8 us eager, then relaxed polls with
# no pause), a8s6c4 (pauses up to 4 us), call 2's g16s6 (16 us eager, fence) and main,
# alternating, twice: broadcast 1-128 MiB. ~3 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s70-c3-x2.sh
AAB bc "main a16s6 a8n a8s6c4 g16s6" broadcast -b 1048576 -e 134217728 -f 2
RS "bc-*"
true
