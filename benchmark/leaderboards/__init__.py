"""Leaderboards: MLGym's scoring (best attempt / best submission, performance profiles, AUP) in
pure Python (scoring), MLGym's released results read (mlgym_results) and imported as runs
(imports), the board over stored runs (board), tables and charts as plain data (tables), and the
pages (forms, views)."""
