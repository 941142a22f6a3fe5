# Session 81, call 6 (2 GPUs): the README main job on the final code (175fc4d: all_to_all_v ticket after the counts barrier).
MAINJOB 540
true
