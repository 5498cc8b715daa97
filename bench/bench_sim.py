"""Benchmark: the embedded event engine against SimPy, and a full FB-2009 day with LATE.

Part 1 -- the same small model written twice: Poisson job arrivals, one task per job, a pool of
``S`` slots served FIFO, exponential or Pareto service times, no speculation. The SimPy peer
(``simpy.Resource``, one process per job) is defined in this file. Both are fed the same
arrival and service times and must produce the same completion times (checked); the script
prints model events per second (one arrival and one departure per job) for both and their
ratio, for the event loop alone and end to end (``sim_bridge.simulate`` including workload
set-up, result tables and summary), in wall time and in CPU (process) time -- compare CPU
times on a loaded machine. ``simulate`` runs this model on its compiled loop (no policy hook
can act); the general Python loop (``engine="python"``), which every other policy runs on,
is measured too.

Part 2 -- a full FB-2009 day (SWIM ``FB-2009_samples_24_times_1hr_0.tsv``, 64 MB blocks,
~430k tasks) on 600 nodes x 2 slots with LATE and FIFO placement, each case in its own
subprocess so that its peak RSS is its own: wall time, CPU time, engine time, events, peak
memory -- for the streaming run (``trace_sink``: the trace written to Parquet as jobs
finish) against its named peer, the in-memory run (``simulate()`` keeping every attempt to
build the tables at the end), with the ratios streaming / in-memory; then the streaming run
with the sliding window of contention paths (``Cluster.hold``) against the streaming run
that keeps every path step (``STRAGGLER_KEEP_PATHS=1``, "before"), and the window's peak
RSS over the day against its first 6 hours (flat memory: at most 1.2). Each child also
prints its RSS right after ``import sim_bridge`` and right after its first contention
day-block (``world.PersistentLevels.block``), the fixed part of the memory budget.

Part 3 -- FB-2010 (SWIM ``FB-2010_samples_24_times_1hr_0.tsv``, 24,442 jobs, 16.6M tasks,
6,110 slot-days of base work) streamed on a cluster sized for the day (default 12,000 nodes
x 10 slots, see "Sizing" below: 12,000 x 10 until 2026-11-24), with LATE and without
speculation: one run of the day each
(``--fb2010-hours 24``; other horizons run separately), its figures marked when its clock
passed 1, 6 and 24 simulated hours; the same figures, the realised load (task-seconds /
(slots x makespan)), and the peak-RSS ratio at 24 h / 6 h (flat memory: at most 1.2). Goals
(issue 13): the day with LATE in under 10 minutes on one core and under 4 GB; the FB-2009
day under 300 MB.

Sizing the FB-2010 day (2026-11-24): "nominal load 0.4" counts base work only, and in the
default world an FB-2010 attempt runs ~10x its nominal work at the median (verify runs:
FB-2010 0.1 h on 300 x 10, duration / input_work median 10.2, sum 15.2 without speculation,
14.4 with LATE's copies; FB-2009 3.0 and 4.3), whatever the co-tenants at launch: the
background contention of its profiles, not the cluster's size. So the day's realised work is
~88,000 slot-days, and a realised load <= 0.8 over about a day needs >= ~110,000 slots
(~11,000 x 10). Measured with a sampler thread on the engine (as the children's 1/6/24 h
marks; the start commit's code, LATE, streamed): on 1,500 x 10 the day backlogs -- at 9
simulated h 1.20M events in 610 s CPU, 1,506 live jobs and growing, RSS 4.3 GB (stopped
there); on 3,000 x 10 every slot was busy from 0.1 h with up to 186k tasks waiting at 1 h;
on 6,000 x 10 busy from 0.46 h; on 12,000 x 10 the first 1.5 h took 430 s CPU (799k events,
0.54 ms an event; slots up to 98% busy at 1.26 h) with a 7.5 GB peak (4.9 GB after it: the
paths of 12,000 nodes, ~1.1 GB per day-block of levels). The day at that size would be ~2.5
h of CPU and over 4 GB; neither goal is met. (The default ``--fb2010-nodes`` was 1,500 until
the session below, which is NOT a day-sized cluster in this world; it was 12,000 next.)

Sizing, revised (2026-11-24): 12,000 x 10 holds the day's mean but not its bursts. The
trace's base work is 0.051 of 120,000 slot-days, its busiest hours (13 and 15) 0.12 and 0.11
of 120,000 slot-hours, and the world realises base work ~18x (a 0.5 h replay without
speculation on 12,000 x 10: task-seconds / base work 18.3), so 12,000 x 10 is loaded ~0.9 on
the day's mean and saturates in hours 7, 13 and 15. The default is now 33,000 x 10: its busiest
hour realises ~0.8, the day's mean ~0.34; the LATE day on it never left a task waiting at any
10 s sample (328,432 of 330,000 slots busy at 14 h).

Part 4 -- Alibaba 2017 (``batch_task_v2017``) at full scale: the day holds 11,644 jobs and
10.2M task instances, 90,542 slot-days of base work; the default cluster, 1,300 nodes (the
trace's machines, as its publications count them) x 176 slots, puts the day's base work at a
nominal load of 0.4, as part 3's 1,500 x 10 does for FB-2010. Streamed with LATE and without
speculation at ``--ali2017-hours`` (default the first 0.25 h, 71,049 tasks in 6 jobs: the
largest slice measured; an hour holds 487k tasks).

Measured on 2026-11-24 (a 2-core machine shared with other jobs, load average 4-7: compare
CPU seconds, not wall). ``python bench/bench_sim.py --skip-part1 --skip-fb2010
--ali2017-hours --data-dir ../shared/data``, the FB-2009 day with LATE, after this session's
three memory changes, each bit-identical or nearly: (1) the contention day-block draws 2 MiB
chunks of the same normal stream and filters them in place (``PersistentLevels.block``, no
``scipy.signal``): RSS 108 MB after ``import sim_bridge``, 156 MB after the first 600-node
block (was 122 and 219); (2) ``Cluster.end_with`` no longer draws day-blocks past the work's
end, so the horizon stays within two blocks of the furthest step read (was five: 120 h at
13.8 h simulated); the engine's checkpoint test reads that horizon, so 5 of the streamed
day's 436,034 rows move in the last bits (max 1.5e-11 s; in-memory runs are equal); (3) a
streamed run releases each finished job once the sink has written it (``Job.release``
breaks the job <-> task <-> attempt cycles the paused collector never freed; traces equal).
The streamed day then peaks at 614 MB (1,006 MB at the session's start, 923 MB after (1) and
(2)); keeping every path step 670 MB; in memory 1,198 MB; its first 6 hours 506 MB (day / 6 h
= 1.21, the goal 1.2). The 300 MB goal is not met: what remains is ~107 MB of import, ~50 MB
of contention paths (a day ahead at most), ~10 MB of the engine's per-task arrays, and the
Task and Attempt objects of the jobs still running (~1.6 KB of RSS per live attempt; 165k
live attempts for 219 running jobs at 9 h: a few very large jobs), whose peak near 15 h the
allocator does not return. Writing an attempt's row when it closes, or leaner Task/Attempt
objects, would be the next step. The next session (same day, same command; the before
figures from the unchanged code interleaved with the after runs in one script, 3 reps for
the day, 3 for 6 h) did that without changing a row (task and job tables DataFrame.equals
before/after, the streamed Parquet read back): a closed attempt sheds its launch record into
its job's flat array and its rate memo (a finished one its segment state; its done task
shares one read-only empty ``live``), the sink reads a finished job's rows into flat columns
when it receives it and releases the job at the next one, builds a flush's table 8,192 rows
at a time and encodes on the system allocator. The streamed day peaks at 451-476 MB (was
620-622), its first 6 hours at 391-413 MB (was 510): day / 6 h = 1.15 (was 1.22). CPU: the
day 42.7-44.7 s (was 38.6-42.9, about +6%: every after run was slower), 6 h 12.3-12.7 s
(was 12.4-13.1). At 9 h (190,685 tasks, 165,157 attempts of 170 live jobs) the live objects
hold 120 MB (Python deep size; was 215): Attempt 30 MB, Task 24, attempts lists 12, the
flat launch records 11, int uids/indices/offsets ~20, floats ~14. The peak is now one of two
transients over a live state of ~380 MB: the largest job (114k attempts) written as one row
group at 13 h (its Arrow table ~45 MB, to ~455 MB), and the second contention day-block
drawn at 24 h (+~80 MB, ``Cluster._extend``). 300 MB stays out of reach while every task of
a live job is a Python object (``job.tasks``, ``task.attempts`` are the policies' API).
2026-11-24, a third session (same command's part 2 through ``run_case``, the start commit
426db0e's checkout and this one interleaved, 3 reps of the day and of 6 h): ``import sim_bridge``
and a streamed run load no pandas (NumPy columns go straight to Arrow buffers, the summary is
computed from flat columns, ``SimulationResult.jobs`` is built on first access); a job bigger
than the sink's buffer is written in row groups of at most ``row_group_rows`` rows; a new
contention day-block is drawn in place after the kept steps (the old window freed first). RSS
after import 105 -> 31 MB, after the first day-block 157 -> 94 MB; the streamed day peaks at
371-376 MB (453-454), its first 6 hours at 309-310 MB (395-397): day / 6 h = 1.21; CPU the day
24.0-31.3 s (24.0-30.4), 6 h 7.5-9.0 s (8.1-10.1): no change beyond noise. Same tables and
Parquet rows. The peak is now the live Task/Attempt objects of the big jobs at 12-15 h (2.4M
Python objects allocated at 9-12 h), which the allocator keeps after the jobs go; left of the
fixed part: ``scipy.special`` (``expit``, ~28 MB, imported with the first day-block) and
``pyarrow`` (~30 MB, at the first flush).
From an earlier run,
``--fb2010-hours 1`` on 1,500 x 10 slots (realised load 0.42 at 1 h, <= 0.8): LATE 977 jobs,
514,865 tasks, 525,639 events, 585 s CPU (1,370 s wall), 3,378 MB peak (measured before the
rates ahead were computed per node); no speculation: 515,842 events, 419 s CPU (574 s
wall), 3,575 MB peak, its stragglers running on for days (p99 JCT 36.7 h, so the realised
load over the makespan is 0.02, and the oldest live job holds the window open behind the
clock). The per-event cost there (~1 ms, 10x FB-2009's) grows with the 15,000 slots, so the
FB-2010 day is far from 10 minutes; 6 and 24 h were not run (this session's engine work
halves the per-event cost of in-memory runs at 10 slots a node, but streamed runs, which
the day needs, only by 15%). Part 4, ``--skip-part1 --skip-fb2009 --skip-fb2010
--ali2017-hours 0.25 --ali2017-policies late none``: Alibaba 2017's first 0.25 h at full
scale on 1,300 x 176 slots with LATE: 6 jobs, 71,049 tasks, 92,244 attempts, 97,058 events
in 1,033 s CPU (10.6 ms an event: the cost grows with the 228,800 slots), peak 4,055 MB
(197 MB after the first contention block); without speculation 71,055 events in 583 s CPU
(8.2 ms an event), peak 3,107 MB. The realised load over the makespan is 0.02 and 0.00 (a
day-sized cluster, a quarter hour of jobs whose stragglers run on). The full day (10.2M
tasks) is out of reach of the Python loop at this cost; this slice is the largest measured.
Again on 2026-11-24, after this session's co-tenant and scan work (same command, LATE only):
the same 6 jobs, 92,244 attempts and 97,058 events in 363.5 s CPU (2.8x less), peak
3,470 MB.

Per event, against the start commit (2026-11-24, the machine loaded by other jobs: load
average 4-17 on 2 cores, wall 2-8x CPU; compare CPU). ``--skip-part1 --skip-fb2009
--skip-fb2010 --ali2017-hours --peer-tree ../ref --peer-hours 0.05 --repeat 2`` streams
FB-2010's first 0.05 h (47 jobs, 32,627 tasks) on 1,500 x 10 slots with this checkout and
with the peer checkout (c42cd8a), interleaved, best of 2 each: LATE 0.470 ms an event
(peer 0.492, 0.96x; two earlier rounds 0.93x and 0.99x), the day extrapolated at this cost
149 min CPU; without speculation 0.355 ms (peer 0.388, 0.92x; earlier 1.02x), 98 min --
that path did not change, so +-8% is this machine's noise and the per-event gain is within
it. The change: ``SimView.progress_many`` reads an attempt under
co-located demand inline when its last read lies in the step it is still in (the memoised
step rate times the time since, ``Cluster.work_with``'s own float operations), and LATE
recomputes its slow-node quantile only after an attempt finished; LATE's ``on_tick`` CPU
(a wrapper, same slice) went from 5.1-5.6 s to 4.4-4.5 s of 17-19 s. Same tables
(``DataFrame.equals``) on FB-2009 1 h 50 x 2 (none, LATE, Mantri, Dolly), FB-2010 0.1 h
300 x 10 LATE and a streamed FB-2009 3 h LATE run. Where the rest goes (py-spy, this
slice): ~60% re-solving co-tenants' end times at each launch and close
(``_solve_launch``, ``_tenants_left``: ``Cluster.end_with``/``rate_with``, 14 re-solves
per attempt at 10 slots a node), ~25% LATE's scan (it must read every live attempt of a
job with a candidate: each read's ``_prog`` update feeds later reads' rounding), the rest
arrivals, placement and the loop. Many re-solves give the attempt exactly the end it had
(a heap compaction found 50,888 current entries for 15,000 running attempts): a cheaper
test for an unchanged rate would save most of them. An exact compaction of the event heap
(outdated and duplicate entries set aside by time, put back when one would act) cut the
pops from 480k to 125k without a measurable CPU change (11.4-12.8 s either way) and cost
~30 MB: not kept. The extrapolated day assumes this slice's per-event cost; the 1 h run
above (load 0.42, up to 15,000 live attempts) cost ~1.1 ms an event, so the day stays
hours of CPU with LATE, not 10 minutes.

2026-11-24, later (the same command with ``--peer-tree`` the start commit 426db0e and
an absolute ``--out``): LATE 0.291 ms an event (peer 0.323, 0.90x), without speculation
0.203 ms (peer 0.215, 0.94x: that path did not change, so about 6% is noise). The change:
LATE computes its rates, candidate tests and estimates on arrays over the scan's batch (the
per-attempt formulas element by element), ``SimView.progress_many``'s loop clamps with
comparisons and tests an inline read's step once per distinct last-read time, Mantri counts
durations by bisection on a list instead of ``np.searchsorted`` per attempt, Hopper reads a
job's virtual size once a pass and no longer copies waiting queues. On-tick CPU (a wrapper,
interleaved pairs, streamed): LATE FB-2010 0.1 h 1,500 x 10 3.14 -> 2.46 s (engine 14.4 ->
13.3 s), 300 x 10 1.23 -> 1.05 s (the scan is ~9% there: slots are rarely free); Mantri
0.05 h 300 x 10 12.0 -> 7.4 s (engine 24.1 -> 19.3 s). Same tables as the start commit.

2026-11-24, later (co-tenant re-solves: one fused loop, ``AttemptPhysics._retenant``; the
others' demand sums in C, ``others_demand``; long solves from one instant share their rate
chunks, ``Cluster.end_with(chunks=)``; tables equal). The same command, peer the start
commit 426db0e: LATE 0.229 ms an event (peer 0.252, 0.91x), none 0.185 (peer 0.201, 0.92x).
At 176 slots a node (Alibaba 2017's first 0.1 h at scale 0.05, 3,336 tasks on 20 x 176,
LATE, streamed; a script interleaving both trees, 2 runs each): 0.73-0.78 ms an event, peer
2.07 (2.7x faster). There (cProfile, SYN on 2 x 176) ~30% is the fused loop itself and
~28% popping stale heap entries (one per re-solve; not made lazy: not provably exact).

2026-11-24, the next session: bounded solves. A streamed run solved an attempt's end at once
whenever it "could end within 1/32 of the paths at the node's fastest rate"; on slowed nodes
(bad nodes, 176 tenants) those ends lay days ahead, and each such solve drew days of paths for
every node: on 12,000 x 10 a 0.55 GB day-block at 0.44, 0.74, 0.81 and 1.17 h, 5.8 GB RSS at
1.2 h. Now a solve reads only the paths drawn so far and goes on where they end when the clock
gets there (``Cluster.end_with(within=True)``, ``PastPaths``, ``end_resume``): the same float,
so streamed runs equal in-memory runs bit for bit, and they defer solves under co-located
demand as in-memory runs do. The originals' draws are made job by job as jobs arrive
(``TaskDraws``: on the FB-2010 day at 12,000 x 10, RSS at the loop's start 1,132 -> 751 MB,
setup peak 2,157 -> 1,271 MB, setup CPU 9.1 -> 4.4 s), and a block's logistic map runs in C
(no scipy in a streamed run). In-memory tables equal the start commit's. Measured (a 2-core
machine shared with other runs; CPU seconds):

- FB-2009 day streamed (``--skip-part1 --skip-fb2010 --ali2017-hours``): 27.7 s CPU, peak
  356 MB (6 h: 289 MB; day / 6 h 1.23, goal <= 1.2); interleaved with the start commit
  c2bb836, 2 runs each: CPU 29.5 / 30.5 -> 28.6 / 29.1 s, peak 377 / 371 -> 354 / 349 MB.
  The 300 MB goal is not met.
- Alibaba 2017 at full scale, LATE (``--ali2017-hours 0.25`` and ``0.5``): the first 0.25 h
  (the same 97,058 events) 363.5 -> 214.1 s CPU, 3,470 -> 614 MB; the first 0.5 h, never
  finished before (stopped at 7.75 GB), 140 jobs, 199,011 tasks, 246,006 attempts, 302,118
  events in 1,420.9 s CPU, peak 1,547 MB.
- FB-2010 per event, ``--peer-tree`` the commit with bounded solves only, 0.1 h on
  12,000 x 10: LATE 0.302 ms (peer 0.327, 0.92x), none 0.324 (0.368, 0.88x).
- FB-2010 day on 12,000 x 10, streamed, a sampler thread logging the running engine every
  10 s (the children's marks, taken from a script that can be stopped), this code:

  ==================  ===========================  ===========================
  clock passed        LATE                         no speculation
  ==================  ===========================  ===========================
  1 h                 160 s CPU, 485k events,      55 s CPU, 499k events,
                      1,827 MB (peak 1,920)        1,735 MB (peak 1,920)
  6 h                 1,426 s CPU, 3.24M events,   422 s CPU, 3.24M events,
                      526 live jobs, 3,342 MB      814 live jobs, 3,665 MB
  24 h                not reached                  not reached
  ==================  ===========================  ===========================

  (with bounded solves only: LATE 187 s / 2,286 MB at 1 h, 1,675 s / 4,030 MB at 6 h; none
  76 s / 2,162 MB and 608 s / 4,267 MB). From 1 to 6 h RSS grows with the jobs alive (272
  -> 526 with LATE) while the paths stay one day-block: at 1.3 h (none, a census of the
  running engine) they held 1.05 GB (12,000 nodes: levels 553 MB, rates and running sums of
  2 profiles), and the 754k Attempt and 769k Task objects of the 452 live jobs ~0.6 GB.
  The day did not finish: 12,000 x 10 holds the day's average (realised load ~0.73 by the
  estimate above) but not its burst at 6.5-8 h, which saturates every slot even with LATE
  (the run with bounded solves only, stopped at 8.03 h: 684,075 tasks waiting, 5.6 GB; without
  speculation, stopped at 8.12 h: 241,505 waiting, 6.1 GB). LATE's scan (every 5 s over
  every live attempt of a job with a candidate) is ~50% of its CPU (cProfile, 0.15 h).

Measured later on 2026-11-24 (the same 2-core machine running two or three replays at once:
CPU seconds of one run are inflated by up to ~20% against a quiet machine):

- FB-2009 day streamed (``--skip-part1 --skip-fb2010``): 315 MB peak with
  ``sim_bridge.lean_allocators`` (the CLI's setting, now every streamed child's), 339 MB
  with the default allocators in the same run (CPU 0.98x); in memory 1,163 MB; all paths
  kept 361 MB; day / 6 h 1.21. The 300 MB goal is not met.
- FB-2010 on 33,000 x 10 (the new default), streamed, a sampler thread logging the running
  engine every 10 s (as the children's marks): the set-up (first day-block, two profiles'
  rates) peaks at 3.0 GB, was 4.9 GB (``profile_id`` and ``BadNodes.capacity_block`` now
  work in chunks of nodes, same values). LATE, the first hour's 977 jobs to the end: 251 s
  CPU, 527k events, peak 3,598 MB (at 1.1 simulated h: 185 s, 503k events, 3,592 MB).
- FB-2010 day without speculation on 33,000 x 10, before this session's path holds (the
  engine held the paths from the oldest live job's submission): 1 h 69 s CPU / 0.50M events
  / 3,659 MB (set-up peak 4,935); 6 h 401 s / 3.21M / 5,426 MB; 12 h 1,130 s / 8.22M /
  8,151 MB; 24 h 2,641 s / 16.34M events / 11,860 MB (peak 12,339; 12,901 at 26 h, when the
  paths had grown by a second day-block). Memory grows with the jobs alive (1,322 at 24 h:
  stragglers of up to ~100 h keep their jobs, and every finished task's objects with them).
- Alibaba 2017 at full scale (1,300 x 176), LATE, the first 0.25 h: 175.7 s CPU, 97,058
  events, peak 512 MB (214.1 s and 614 MB a session earlier).
- The same, the first 0.5 h (140 jobs, 199,011 tasks, 246,006 attempts): 1,352 s CPU,
  302,118 events, peak 1,426 MB (1,420.9 s and 1,547 MB a session earlier). At 1,300 nodes a
  day-block of levels is 60 MB, under ``LAUNCH_LEVELS_MIN_BYTES``: the live jobs hold the paths.
- The same day with this session's holds (launch levels, paths held by the live attempts
  under co-located demand): 1 h 69 s / 0.49M / 3,606 MB (set-up peak 3.0 GB); 6 h 406 s /
  3.20M / 5,527 MB; 12 h 1,108 s / 8.24M / 8,398 MB; 24 h 2,462 s / 16.34M / 11,860 MB (peak
  12,047; at 26 h 11,603 MB, peak 12,047, against 12,494 and 12,901). The records of the levels
  cost ~100-250 MB before 24 h; the hold saves ~0.9 GB of peak at the second day-block. After
  the day's jobs (the drain: 85-500 live jobs, a few hundred attempts) RSS still grew to 16.4
  GB at 71.7 simulated h: attempts whose co-located demand did not change for days keep their
  segment's start, and the paths grow by a day-block a day. Not flat; not under 4 GB.

The session after (2026-11-24, evening; one or two replays ran beside each measurement, so
CPU seconds are inflated by up to ~20%; memory is not):

- A streamed run keeps each done task that ran one attempt (from scratch) as three integers
  of its job's rows (``OneFinished``; ``Job._one``: uid, node, launch record's offset)
  instead of an ``Attempt``, its list and their numbers; the trace sink reads them without
  objects (``sim_bridge._attempt_columns``); tasks never launched share empty containers; an
  original's noise draw goes once read. FB-2009 day streamed (``--skip-part1 --skip-fb2010
  --ali2017-hours``): peak 270 MB (341 MB with the code before, on this machine's fresh
  install; 290 MB with the default allocators; in memory 1,157 MB; all paths kept 294 MB;
  day / 6 h 1.14), CPU 22.6 s (in memory 21.5 s). The 300 MB goal is met.
- FB-2010 day without speculation on 33,000 x 10 (a census at job arrivals: the last mark is
  23 h): 1 h 49 s CPU / 0.46M events / 3,495 MB; 6 h 296 s / 3.20M / 4,782 MB (5,416 with
  the code before, same script); 12 h 828 s / 8.19M / 6,651 MB (8,398 last session); 23 h
  1,785 s / 15.5M / 7,621 MB (11,860 MB at 24 h last session). Memory still grows with the
  finished tasks of the jobs alive, ~530 bytes each (a ``Task`` and its numbers, the launch
  record, the row), against ~870: 6 -> 23 h is 1.59x (goal <= 1.2). The drain after the day
  reached 96 simulated hours at 14.4 GB (peak 15.7; 16.4 GB at 72 h last session).
- The progress loop of a speculation scan and LATE's first pass run in C
  (``sim_bridge._progress_core``, the Python loops their references). FB-2010 0.3 h on
  33,000 x 10 with LATE (13.5M progress reads: 11.6M inline in the memoised step, 1.76M in a
  new step, 0.12M from the cumulative rates): 873 -> 530 ns a read; ``LATE._ranked`` 22.5 ->
  21.0 s with the first pass in C; the run's engine CPU 40.5 -> 36.2 s. In isolation (a
  small crowded cluster, reads at one instant) a read is 166 -> 63 ns: at 230k live
  attempts a scan is bound by memory latency (each read touches an attempt, its last read,
  its rate memo and its demand, scattered over GBs), not by the interpreter.
- The LATE day on 33,000 x 10 with all of the above (streamed, a sampler thread every 10 s;
  stopped at 6 h to free the machine): 1.04 h 148 s CPU / 0.49M events / 3,670 MB; 6.02 h
  1,226 s / 3.27M / 5,213 MB (peak 5,219). Last session, the first hour's jobs alone: 185 s
  and 3,592 MB at 1.1 h. Not run to 24 h this session (two sessions ago the day took 2.7 h
  of CPU): the 10-minute and 4 GB goals are not met.
- Alibaba 2017 at full scale (1,300 x 176), LATE, the first hour's 516 jobs (487,092 tasks,
  541,882 attempts) to the end (``--ali2017-hours 1 --ali2017-policies late``): 681,123
  events, 3,161 s CPU, peak 2,588 MB (at 1 simulated h: 249 s, 128k events, 832 MB). The
  largest slice run so far; the 0.25 h slice: 150 s, 506 MB (without speculation 43 s and
  1,623 MB: its stragglers run to ~206 simulated hours, and below ~1,460 nodes the live
  jobs hold the paths from their submission).
- The FB-2010 day without speculation, the 10-s sampler: 1.1 h 60 s CPU / 0.50M events /
  3,551 MB; 6.05 h 318 s / 3.24M / 4,795 MB; 12.05 h 845 s / 8.25M / 6,669 MB; 24 h 1,916 s
  / 16.34M / 9,306 MB (peak 9,481; last session 11,860 and 12,047). The drain still grows by
  a day-block (~3-4 GB) at each day: 10.7 GB at 72 h, 16.4 GB at 120 h, peak 23.3 GB by 137 h
  (stopped there). The engine updates the paths' hold every 1,024 events, rare in a drain;
  updating it also before each solve that extends the paths was tried and reverted: on
  FB-2009's first 8 h on 150 x 2 it cut the largest window from 55.8 to 29.1 h, but in the
  FB-2010 drain the window is held by attempts under unchanged co-located demand, and the
  trims it allowed copy the multi-day window kept (peak 19.3 GB at 96 h, against 15.7 GB
  without it in an earlier run sampled differently: not a controlled comparison, but no
  gain either).

2026-11-25: a streamed run on a big cluster draws its contention paths a part of a day-block
at a time (``Cluster(extend_steps=...)``, chosen by ``sim_bridge._simulate.path_part_steps``:
the largest divisor of the block whose levels fit in 256 MiB, 240 steps on 33,000 nodes).
Each part redraws its block's random stream (the synthetic source's normals are ordered by
row, then step) and keeps only the part; a block's running sums go on from its start and
its own running sum. The values are the whole block's, bit for bit (``tests/test_path_parts.py``;
a battery of streamed runs with launch levels forced, 60-step parts against day-blocks:
every table and summary equal). Measured with a sampler thread every 10 s of wall time
(``dayhold.py``, outside the repo; the 10-s marks fall a little after the hour), one other
replay beside it:

- FB-2010 without speculation on 33,000 x 10, before -> after (RSS in MB): set-up 3,205 ->
  819; 1 h 3,551 -> 1,118; 6 h 4,799 -> 2,807; 12 h 6,658 -> 4,677; 18 h 7,515 -> 5,875;
  24 h 9,306 (last session) -> 6,912, peak 9,481 -> 7,733 (the copy of a 1,092-step window
  when the next part is drawn). CPU at 24 h 1,916 -> 2,004 s (16.34M events both): the six
  draws of each block's stream cost ~40 s a day. The hold then trails the clock by 3 h at
  6 h and 14 h at 24 h (an attempt under unchanged co-located demand since 9.8 h), so the
  window is 5-18 h of steps instead of one or two days.
- FB-2010 with LATE, 33,000 x 10: 1 h 129 s CPU / 0.49M events / 1,297 MB (3,670 before);
  6 h 1,103 s / 3.27M / 3,269 MB (5,213).
- What grows now: at 4 h (2,391 MB RSS) the 640 live jobs hold 1.84M finished tasks: their
  ``Task`` objects (229 MB), the numbers they point to (uid, index, work, finish time; 183
  MB), ``OneFinished`` (70 MB), the flat launch records (167 MB) and rows (43 MB): ~430
  bytes a finished task of a live job, against ~0.9 GB of paths. Flat memory from 6 to 24 h
  (2.46x now) needs those tasks out of Python objects, a change of the policy API.
- FB-2009 day streamed: unchanged (600 nodes draw whole blocks): peak 270 MB, CPU 22.3 s.
- Then the engine holds the profiles' rates and running sums from the clock, the levels from
  its oldest segment under co-located demand (``Cluster.hold(rates_from=)``; segments under
  demand read levels only). FB-2010 without speculation, parts -> parts and rates hold: 6 h
  2,807 -> 2,527 MB; 12 h 4,677 -> 4,520; 18 h 5,875 -> 5,385; 24 h 6,912 -> 6,299, peak
  7,733 -> 6,893; CPU at 24 h 2,058 s. Peak 24 h / 6 h is 2.6 (goal <= 1.2). LATE: 6 h
  1,189 s / 2,950 MB (peak 3,096); 8 h 2,115 s / 5.58M events / 3,909 MB (peak 4,347),
  stopped there: ~450 s of CPU a simulated hour by then, so the day is hours of CPU.

Measured on 2026-11-25 (b), the same sampler (``dayhold.py``), two replays at once on the
2 cores, all bit-exact (the equality battery outside the repo: every table, job table and
summary of 13 cases in memory, streamed, with launch levels and on 60-step parts equal to
the start commit's, and again with every old reader pinned):

- Single nodes' levels kept aside (``Cluster.hold(nodes=)``): an attempt that may read its
  node's levels from more than 30 minutes ago (``sim_bridge._engine._PIN_AFTER_S``; its
  last progress read in the segment, else its segment's start, or a pending solve's start:
  ``sim_bridge._path_holds``) pins its node, 32 bytes a step, instead of holding 33,000
  nodes' (1 MB a step). The hold now trails the clock by 0.2-0.7 h instead of 3-14 h, with
  200-1,600 nodes pinned and under 1 MB kept aside.
- A done task of a live job whose one attempt finished becomes a ``DoneOne`` (a ``Task``
  subclass, the same object): no ``OneFinished`` object, and its uid, work, first launch
  and finish time live in its job's rows (``Job._one``, ``Job._done_f``); every job shares
  its task index objects (``task_indices``). The census at 24 h (start commit, no
  speculation, 6,204 MB RSS) had 8.65M tasks in 1,315 live jobs, 8.47M of them done:
  ``Task`` objects 1,057 MB, their uid 231, index 224, work 198 and finish time 193 MB,
  ``OneFinished`` 320 MB, launch records 751 MB and rows 192 MB. About 1.2 GB of that goes.
- FB-2010 without speculation, start commit -> now (RSS in MB, peak in brackets): 1 h 1,122
  -> 1,082; 6 h 2,527 (2,644) -> 2,014 (2,151); 12 h 4,520 (4,534) -> 3,544 (3,571); 18 h
  5,385 (5,647) -> 4,025 (4,228); 24 h 6,299 (6,893) -> 4,419 (4,444). CPU at 24 h 2,058 ->
  2,135 s (16.4M events; the runs shared the machine differently). Peak 24 h / 6 h: 2.6 ->
  2.07 (goal <= 1.2, not met).
- The drain: that run shrank to 3,775 MB at 26.8 h, then grew again (6,078 MB at 68 h, the
  hold at 48.7 h): the engine updated its hold every 1,024 events only, and a drain has
  fewer than that in a day. It now also scans when the clock moved ``_HOLD_EVERY_S``. The
  first 2 hours' jobs on 33,000 x 10 without speculation, drained, before -> after (the
  same 1,193,738 events by 53 h): 28 h 2,791 -> 932 MB; 40 h 5,395 -> 941; 53 h 7,390
  (peak 8,072) -> 1,242 (peak 1,638).
- FB-2010 with LATE: 6 h 1,189 s / 2,950 MB (peak 3,096) -> 1,286 s / 2,666 (2,808); 8 h
  2,115 s / 5.58M events / 3,909 (4,347) -> 2,228 s / 5.59M / 3,715 (3,741); stopped there.
- FB-2009 day streamed (LATE), the start commit and this one back to back: 26.2 -> 26.6 s
  CPU, peak 270 -> 260 MB.
- What is left at 24 h: the done tasks' ``Task`` objects (~1.06 GB: their identity is the
  policy API's) and launch records (~0.75 GB, 12 doubles an attempt, read by the trace sink
  when the job ends), and the running work.

Measured on 2026-11-28, the same kind of sampler (``day.py``, outside the repo: a 10-s
thread on the engine, the run stopped at its last mark), two replays at once on the 2 cores,
after two bit-exact changes of 2026-11-25 (``tests/test_task_list.py``,
``tests/test_record_spill.py``: a streamed run's trace equals the in-memory run's):

- Done tasks nobody holds are dropped: ``job.tasks`` and ``job.stages`` of a streamed run are
  ``sim_bridge._task_list.TaskList`` views of one storage; a ``DoneOne`` that only its job
  refers to (by reference count, at the engine's sweep every 1,024 events) becomes None there
  and is built again, equal, when read.
- A live job's launch records past 64 KiB go to a file of its own
  (``sim_bridge._record_spill.RecordSpill``, a hidden directory beside the trace, removed
  when the sink finishes) and are read back when the job's rows are written.
- FB-2010 without speculation, 33,000 x 10 (RSS in MB, peak in brackets; before: the
  2026-11-25 (b) figures above): 1 h 1,014; 6 h 1,475 (1,633; was 2,014); 12 h 2,262 (2,277;
  was 3,544); 24 h 2,806 (2,832; was 4,419 (4,444)) in 1,761 s of CPU and 16.37M events
  (was 2,135 s). The day is under 4 GB; peak 24 h / 6 h is 1.73 (was 2.07; goal 1.2, not met).
- FB-2010 with LATE: 1 h 118 s / 1,225 MB; 6 h 1,066 s / 2,326 MB (2,483; was 1,286 s /
  2,666 (2,808)); 8 h 1,922 s / 5.58M events / 3,172 MB (3,196; was 2,228 s / 3,715
  (3,741)). Stopped there: ~430 s of CPU a simulated hour between 6 and 8 h, so the day is
  hours of CPU, not 10 minutes, and its peak was not measured.
- FB-2009 day streamed (LATE): peak 261 MB in 21.3 s of CPU; its first 6 hours 244 MB (day /
  6 h 1.07).
- Where LATE's CPU goes at 2-3 simulated hours (py-spy, 90 s at 50 Hz): ``on_tick`` 61%
  (the progress reads 29%, ``late_batch``'s walk of every live job 10%, the cut's quantile
  5%, building and sorting the candidates' tuples ~9%), the heap's pops 9%, finishing
  attempts 11%, launches 7%. Making the candidates lazily (one NumPy sort, tuples only for
  those read) gave equal traces but no gain where measured: the first 0.3 h (engine CPU
  42-46 s against 40-45 s) and 1 h (``on_tick`` 86.2 s against 84.9 s) of jobs, where LATE
  copies ~40% of the tasks and a scan reads most of its candidates; not kept. At ~150,000
  live attempts a scan every 5 s is up to ~2.6 billion progress reads a day, 23 min at the 530 ns
  a read costs now: 10 minutes needs the live attempts' state in arrays, read by one
  vectorised pass, not an object per attempt (a change of the policy API).

Measured on 2026-11-28 (b), the same sampler (``day.py``), two or three replays at once on
the 2 cores; the engine's event heap is now compiled (``sim_bridge._heap_core.EventHeap``,
``heapq`` on tuples its reference; equal traces; ``bench/bench_heap.py``):

- Where the CPU went without speculation (py-spy, 60 s at 50 Hz), before at 2.8 simulated
  hours: the heap's pops 23% of the run (~9.5 pops per event of the model: of the first
  hour's 4.36M pops 39% are deferred solves coming due, 29% stale finish events, 20%
  re-queued deferrals, 10% real finishes); after, at 7.5 h: 7%. The rest is spread there:
  re-solving a node's co-tenants when one leaves (``_retenant``, 17% self), the paths' parts
  (7%), ``shed_closed`` (6%), ``drop_unheld`` (5%, ~6,900 still-held tasks re-checked a
  sweep).
- FB-2010 without speculation, 33,000 x 10: 1.1 h 40 s CPU / 0.50M events / 988 MB;
  6 h 238 s / 3.23M / 1,422 MB (peak 1,582); 12 h 636 s / 8.21M / 2,190 MB (2,217); 24.3 h
  1,396 s / 16.42M events / 2,692 MB (peak 2,746). Before (the same script, this morning):
  24 h in 1,761 s (16.37M events), peak 2,832 MB. Peak 24 h / 6 h is 1.74 (goal 1.2).
- FB-2010 with LATE: 1.1 h 119 s; 6 h 930 s / 3.27M events / 2,262 MB (peak 2,415; was
  1,066 s); 8 h 1,695 s / 5.59M / 3,090 MB (peak 3,116; was 1,922 s and 3,196 MB). About
  380 s of CPU a simulated hour from 6 to 8 h (was ~430): the day is still hours of CPU. A
  second run to 12 h (three replays on the 2 cores for most of it): 6 h 964 s, 8 h 1,738 s,
  12 h 2,733 s / 8.28M events / 3,122 MB (peak 3,167 MB, the first LATE run past 8 h):
  ~250 s a simulated hour from 8 to 12 h.
  At 2-3 simulated hours ``on_tick`` is 59% of the run (progress reads 23%, LATE's first
  pass 9%), the heap's pops 3%.
- What memory holds (a census of the running engine stopped at 6 and 12 simulated hours,
  without speculation, ``census.py`` outside the repo): RSS 1,424 -> 2,192 MB. The cluster's
  arrays (paths, rates, sums) 453 -> 584 MB; the rows of done tasks (``Job._one`` and
  ``_done_f``, 56 bytes for each task of a job once one of them is done) 156 -> 351 MB, with
  2.80M -> 6.34M done tasks in the live jobs (2.69M -> 6.02M of them dropped as objects); the
  running tasks 58k -> 161k; the task objects still kept (running, blocked, held ``DoneOne``)
  with their attempts, attempt lists and launch records 69 -> 179 MB; heap entries 137k ->
  221k. The live work itself grows 2.3-2.8x from 6 to 12 h (704 -> 1,170 live
  jobs), memory 1.54x: flat memory from 6 to 24 h is not reachable while the state the
  engine must keep grows like that, short of moving the done tasks' rows out of memory
  (they are read when a job's trace rows are written and by policies through
  ``job.tasks``).
- The done tasks still held at a sweep are tried again with a back-off
  (``sim_bridge._task_list.DropQueue``: 7 tries over 63 sweeps instead of 64): FB-2010
  without speculation, the first 1M / 5M events (to 1.97 / 7.68 simulated h), loop CPU
  67.9 -> 66.7 s and 370.7 -> 361.6 s against the commit before (a worktree of it run beside,
  three replays on the 2 cores); equal traces.
- Alibaba 2017 at full scale, the first 0.25 h (``--skip-part1 --skip-fb2010 --skip-fb2009
  --ali2017-hours 0.25``): LATE 101.4 s CPU, 97,058 events, peak 504 MB (150 s and 506 MB
  on 2026-11-24); without speculation 32.7 s, 1,615 MB (43 s, 1,623 MB).
- FB-2009 day streamed, LATE (``--skip-part1 --skip-fb2010 --ali2017-hours``, the machine
  otherwise quiet): peak 232 MB, 18.0 s CPU (engine loop 17.5 s); this morning 261 MB and
  21.3 s with a replay beside it. Its first 6 hours 217 MB: day / 6 h 1.07.

Measured on 2026-11-28 (c): LATE's whole scan is compiled
(``sim_bridge._progress_core.late_scan``: the first pass over the jobs alive, the progress
reads through the same loop as ``SimView.progress_many``, rates, each stage's cut picked from
the job's sorted rates and the finished tasks' inverse rates by bisection, the estimates;
``LATE._ranked_py``, the scan in Python and NumPy, is its reference and the fallback without
the extensions; equal traces); a stage's finished run times are C doubles (``array("d")``,
8 bytes each instead of a float object and a list slot, 32) and the scan reads them as an
array (no list of their inverses, 32 bytes more each). ``bench/bench_late_scan.py`` compares
the two scans:

- A/B against a worktree of the commit before (cd0dcbf), run beside it on the 2 cores, the
  FB-2010 day with LATE on 33,000 x 10, loop CPU over the first 1.2M events (2.16 simulated
  h): 288.6 -> 215.7 s (0.75x); equal traces (452,254 rows). After the change, at ~2 h,
  ``on_tick`` is ~38% of the loop (it was ~60%), the progress reads in it ~25%.
- The day's first 6 hours (``day.py``, the 10-s sampler, a LATE replay and the test suite
  beside it): 1.05 h 91 s CPU; 2 h 221 s; 4.2 h 461 s; 6 h 749 s / 3.26M events / 2,151 MB
  (peak 2,312). The code before, in the day's run below: 6 h 942 s / 2,254 MB (peak 2,415).
  Again to 8 h on a quiet machine: 1.1 h 90 s; 2 h 201 s; 4.2 h 411 s; 6.1 h 672 s / 2,154
  MB (peak 2,311); 8 h 1,204 s / 5.60M events / 2,926 MB (peak 2,945), against 1,695 s and
  3,116 MB in (b): 0.71x the CPU, 171 MB less at the peak (the finished run times as doubles).
- The whole FB-2010 day with LATE, the first run past 12 h (``day.py late 30``: started
  before this change, so the code of 2026-11-28 (b) for CPU; memory is the same but for the
  finished run times, 56 bytes less a done task now; other replays and the test suite on
  the 2 cores): 1.1 h 110 s / 1,181 MB; 6 h 942 s / 3.27M events / 2,254 MB (peak 2,415);
  8 h 1,763 s / 3,105 MB; 12 h 2,817 s / 8.29M / 3,119 MB (peak 3,170); 16 h 3,883 s /
  3,312 MB; 20 h 4,946 s / 13.72M / 3,303 MB; 24 h 6,036 s / 16.53M events / 3,334 MB (peak
  3,360); stopped at its last mark, 31.0 h, in the drain (93 jobs still live): 6,236 s /
  16.62M events, peak 3,360 MB. The day with LATE stays under 4 GB (goal met); its peak
  24 h / 6 h is 1.39 (goal 1.2). CPU ~270 s a simulated hour from 12 to 24 h with that code;
  the day took 1.7 h of CPU, 10 minutes is the goal.
- Alibaba 2017 at full scale (1,300 x 176), LATE, the first hour's 516 jobs (487,092 tasks,
  541,882 attempts) to the end (``--skip-part1 --skip-fb2010 --skip-fb2009 --ali2017-hours 1
  --ali2017-policies late``, a LATE replay beside it): 681,123 events (as on 2026-11-24),
  1,716 s of CPU, peak 2,494 MB; at 1 simulated h 161 s and 712 MB. On 2026-11-24, before
  the compiled heap, the drop queue's back-off and this scan: 3,161 s, 2,588 MB; 249 s and
  832 MB at 1 h. The first 0.25 h (``--ali2017-hours 0.25``, the machine otherwise quiet):
  LATE 64.6 s of CPU, 97,058 events, peak 500 MB (101.4 s and 504 MB in (b)); without
  speculation 32.5 s, 1,615 MB (32.7 s, 1,615 MB).

Measured on 2026-11-28 (d), with ``bench/bench_day.py`` (one streamed replay in its own
process, sampled every 10 s; the logs and the figure are in ``bench/results/``) unless named
otherwise; two to five replays and the test suite shared the 2 cores, so CPU is process time
and wall time is longer:

- Every streamed run now records its launches' levels and holds the paths by its live
  attempts (``LAUNCH_LEVELS_MIN_BYTES`` 64 MiB -> 0; the same traces). Alibaba 2017's first
  0.25 h on 1,300 x 176 (60 MB of levels a day-block, under the old threshold, so its paths
  were held from the oldest live job's submission; its last job ends at 206 simulated h):
  without speculation 39.8 s / peak 1,615 MB -> 34.3 s / 623 MB (CSV of the two traces
  equal); LATE 82.4 s / 500 MB -> 83.8 s / 394 MB. The FB-2009 day with LATE, twice each:
  21.8 and 23.0 s / 231 and 231 MB -> 23.0 and 23.0 s / 226 and 228 MB.
- The hold is also updated at the checks of a solve that goes on block by block (a drain's
  last attempts have no other event for days), and a stop request is seen after the event
  it comes in and at those checks (it waited for 1,024 more events: in a drain, the end).
  Alibaba 2017's first hour's 516 jobs (487,092 tasks) without speculation, to the end of
  its drain at 1,941 simulated h: with the old threshold (``bench_sim.py --skip-part1
  --skip-fb2010 --skip-fb2009 --ali2017-hours 1 --ali2017-policies none``, code cc305d2) 604 s
  of CPU, 487,608 events, **peak 12,828 MB**; with the launch levels but not yet the checks'
  hold 549 s and 798 MB to 48 h, then 4,234 MB as the last attempt's solve crossed 670
  simulated hours; with both (``--workload ALI2017 --policy none --hours 1``) 572 s, **peak
  794 MB** (1 h 116 s / 691 MB; 6 h 765 MB; 24 h 794 MB). The same jobs with LATE (code
  ae6a442, a quiet machine): 681,123 events (as before), 1,612 s of CPU, **peak 852 MB**
  at 269 simulated h (1,716 s and 2,494 MB in (c)); 1 h 161 s / 739 MB, 6 h 883 s / 831 MB,
  24 h 1,554 s / 852 MB.
- Co-tenants of one profile advanced from the same time under equal demands share one step
  walk in a re-solve (``SHARE_WALKS``; tested against every tenant walking its own: the same
  work, times and rate memos after every re-solve). 99% of the walks are shared on Alibaba's
  176-slot nodes (its first 40,000 events without speculation), 80% on FB-2010's with LATE;
  the gain is small, the walk was cheap next to the Python around it: Alibaba 0.25 h without
  speculation 37.0 / 37.8 s -> 35.9 / 36.7 s (0.97x, interleaved A/B of two trees); FB-2010
  with LATE, first 400,000 events, 71.7 / 72.2 s -> 70.6 / 74.0 s (no change measured).
- The FB-2010 day with LATE on 33,000 x 10 to 24 h with LATE's compiled scan (code
  cc305d2, sampled by ``day.py``, ``bench_day.py``'s predecessor outside the repo, the same
  sampling; log ``bench/results/FB2010_late.jsonl``): 1 h 89 s / 1,164 MB; 6 h 711 s /
  3.26M events / peak 2,311 MB; 8 h 1,360 s; 12 h 2,189 s / 8.29M / peak 3,001 MB; 16 h
  3,074 s; 20 h 3,848 s; 24 h 4,693 s / 16.56M events / 3,197 MB (peak 3,222). The code of
  the morning, in (c): 6,036 s and a 3,360 MB peak at 24 h, so 0.78x the CPU and 138 MB less.
  78 minutes of CPU, the goal is 10; peak 24 h / 6 h 1.39 (goal 1.2). Stopped by hand after
  24 h for time.
- The FB-2010 day without speculation (code 1178e5b; ``bench/results/FB2010_none.jsonl``):
  1 h 48 s / 986 MB; 6 h 307 s / 3.29M / peak 1,579 MB; 12 h 734 s / 8.25M / 2,214 MB; 24 h
  1,546 s / 16.38M events / 2,699 MB (peak 2,724; 1,396 s and 2,746 MB in (b)); peak
  24 h / 6 h 1.73. Its drain, stopped by hand at 747 simulated h with one job left:
  2,848 s, RSS 1,732 MB, the peak still 2,731 MB. The same day with the code before the
  drain's hold (cc305d2): 24 h 1,560 s / peak 2,736 MB, then the drain's last attempts'
  solves grew it to 3,937 MB by 172 simulated h (9 jobs live; stopped there).
- The FB-2009 day with LATE (600 x 2, FIFO; ``bench/results/FB2009_late.jsonl``): 26 s of CPU
  with a replay beside it, 451,698 events, peak 228 MB (goal 300 MB).

Measured on 2026-11-29 (one or two long replays beside each run, CPU is process time):

- A node's co-tenants are re-solved in C (``sim_bridge._retenant_core``: ``retenant``, and
  the tenants' own and added demands, ``owns`` and ``add_each``; ``RETENANT_IN_C`` off runs
  the Python loop, their reference; the same traces, and after every re-solve the same
  fields of every co-tenant, in ``tests/test_tenancy_fast_paths.py``).
  ``bench/bench_retenant.py`` (Alibaba 2017's first 0.25 h without speculation, loop CPU):
  python 31.8 s, compiled 25.0 s (0.79x), equal traces. Whole process (``/tmp/s17/ab.py``):
  30.5 -> 24.0 s with the re-solve alone, 34.8 -> 27.0 / 25.8 s with the demands too (a
  loaded machine); FB-2010 with LATE, first 400,000 events, 80.3 -> 72.1 s (0.90x). Not
  measurable on the LATE day: to 6 h 770 s of CPU (``bench_day.py --until 6``, code
  5f53dd8), against 711 s for cc305d2 on 2026-11-28 under another load; its scan, not the
  re-solve, is its cost. Prefetching the attempts' objects in LATE's compiled scan was tried
  and left out: 65 -> 59 ms a scan of 86,948 running attempts at 1.5 h (~4% of the run).
- The FB-2009 day with LATE: 23 s of CPU, 451,698 events, peak 229 MB (as before).
- Alibaba 2017's first 4 hours' jobs (2,365 jobs, 2,293,053 tasks: 22% of the table) without
  speculation on 1,300 x 176 (code 1737da4, ``bench_day.py --workload ALI2017 --policy none
  --hours 4``; ``bench/results/ALI2017_none_4h.jsonl``): 1 h 80 s / 737 MB; 4 h 479 s /
  0.56M events / 1,743 jobs live / 1,321 MB; 6 h 736 s / 1,349 MB peak; 24 h 1,752 s / 1.69M
  events / 978 jobs live / peak 1,434 MB; stopped (SIGTERM) at 30.4 h in its drain with 890
  jobs live: 1,915 s, peak **1,434 MB**, peak 24 h / 6 h 1.06. The same run on the code
  before the compiled re-solve (cc62b5c): 1 h 99 s, 2 h 277 s, 4 h 609 s (0.79x the CPU at
  4 h now, under different loads beside them).
- Alibaba 2017, the whole table (11,644 jobs, 10,214,275 tasks) without speculation on
  1,300 x 176 (code 1737da4, ``bench_day.py --workload ALI2017 --policy none --hours 18``;
  ``bench/results/ALI2017_none_full.jsonl``; other replays and the test suite beside it for
  part of its run): 1 h 79 s / 807 MB; 6 h 870 s / 0.81M events / 2,322 jobs
  live / 1,722 MB; 12 h 2,152 s / 1.59M / 4,163 / 2,584 MB peak; 16 h 3,714 s / 2.17M /
  6,149 / 3,632 MB; every job arrived by 17.9 h; stopped (SIGTERM) at 18.2 h with 5,812 jobs
  live: 4,598 s of CPU, 2.49M events, **peak 3,743 MB**. CPU grows ~470 s a simulated hour
  at the end of the arrivals; its drain would be hours more.
- Alibaba's simulated tasks run far longer than the trace's (a world-model question, not
  changed here): in the first 0.25 h in memory, an attempt's ``duration / input_work`` is
  28x at the median, 52x at the 90th percentile, 121x at the 99th (8.5x, 19x, 74x with
  ``interference=0``); the trace's task groups of those jobs end within 1.1 h of their
  creation (median 1.5 minutes), the simulated attempts at 0.74 h median, 17 h at the 99th
  percentile, and the run ends at 206 h.

Measured on 2026-11-29 (b) (the runs in pairs, side by side on the two cores):

- A progress read rewrites the attempt's last-read pair in place when nothing else holds it
  (``_progress_core._book_prog``): no pair or float allocated, and no old ones freed, per
  read. FB-2010 with LATE, the first 600,000 events (loop CPU, two pairs against a copy of
  3bae583): 96.8 / 100.6 -> 88.7 / 93.8 s; the day to 6 h (``bench_day.py --until 6``):
  680 -> 623 s of CPU, peak 2,289 MB; equal traces. Prefetching the attempts' objects in the
  scan (three stages ahead) was tried again on top of it and was slower (83-85 -> 89-94 s).
- LATE's scan, counted at every 20th scan of the first three hours: per scan 127 / 403 / 443
  jobs alive, 52,603 / 77,712 / 60,246 running attempts, of which 49,139 / 74,133 / 56,030
  are read (their jobs may yield a candidate), 29 / 48 / 41 ms a scan: 0.6 us a read, 31 /
  38 / 43% of the hour's CPU. Every read is needed: it books the attempt's last read, which
  later reads and re-solves go on from, so skipping one would change the trace.
- The FB-2010 day with LATE (``bench_day.py --workload FB2010 --policy late --until 24.05``,
  code 9323745, ``bench/results/FB2010_late.jsonl``; the day without speculation beside it):
  1 h 70 s / 1,166 MB; 6 h 576 s / 3.28M events / 492 jobs and 1.90M tasks live / peak
  2,312 MB; 24 h **3,566 s** (59 min) / 16.57M events / 588 jobs and 2.99M tasks live / peak
  **3,212 MB** (3,267 MB at its stop, 24.08 h). RSS against the live tasks: 946 MB + 0.69 KB
  a task, R^2 0.90 (360 samples). The 2026-11-28 log of cc305d2 said 4,693 s to 24 h under a
  heavier load; the controlled comparison is the A/B above.
- The FB-2010 day without speculation (``bench_day.py --workload FB2010 --policy none --until
  24.05``, code 9323745, ``bench/results/FB2010_none_24h.jsonl``; the LATE day beside it):
  1 h 40 s / 1,131 MB; 6 h 199 s / 3.25M events / 715 jobs live / 1,421 MB (peak 1,580);
  24 h **1,161 s** / 16.42M events / 1,230 jobs live / 2,677 MB (peak 2,731). The samples now
  carry the tasks of the live jobs: 2.92M at 6 h, 8.46M at 24 h. RSS against them, least
  squares over 114 samples from 1 h on: 849 MB + 0.20 KB a task, R^2 0.92. Memory follows
  the work alive; the live work nearly triples from 6 to 24 h on this trace, and so the
  peak's 1.73 ratio.
- A drain's CPU is the contention paths: the old run without speculation
  (``FB2010_none.jsonl``) spent 1,175 s of CPU from 51 to 747 simulated hours on 428 events.
  On 33,000 nodes a day-block is drawn in six parts and each part draws the whole block's
  stream again (exact, by design); timed alone, a part is ~3.2 s of normal draws and ~0.7 s
  of filtering. Drawing only a part's steps needs each row's generator state at the part's
  start (the ziggurat uses a variable count of words a normal), i.e. numpy's C bit-generator
  API in an extension; not built.
- The world's background alone stretches every workload (no co-tenant, mean node): on
  1,300 nodes a day of the default paths has median levels cpu 0.33, mem 0.90, disk 0.05,
  net 0.36, so the mem response is 6.1 at the median. The median stretch (``1 + kappa *
  sum(sensitivity * response)``) of each profile: FB2009 map 2.09, reduce 3.19; FB2010 map
  3.79, reduce 6.75; ALI2017 7.78; SYN map 2.97, reduce 3.69. The fitted Alibaba 2018 memory
  level is an occupancy, and the queueing response reads it as a load; that is why Alibaba's
  tasks run ~8x their work with no co-tenant. A question for the world model (issue 11),
  not changed here. (``Cluster(1300, 176, keep_paths=True)``: ``_levels`` and
  ``_block_rate`` of each ``PROFILES`` entry.)

Measured on 2026-11-29 (c):

- A day-block's parts from marks (``sim_bridge/_normals_core.pyx``,
  ``sim_bridge/world/_block_marks.py``): the block's first part draws its whole stream and
  records each row's PCG64 and AR(1) state at every part; the others draw only their own
  steps. ``bench/bench_path_parts.py`` (33,000 nodes, 6 parts of 240 steps): 23.9 -> 7.2 s a
  block (0.30x), every part the same array; the marks hold 36 MiB while a block is drawn.
- The FB-2010 day without speculation to deep in its drain (``bench_day.py --workload
  FB2010 --policy none``, code 252e9c0 from a copy of its tree, ``bench/results/
  FB2010_none.jsonl``; the LATE day beside it): 1 h 40 s; 6 h 190 s / 3.29M events / 715
  jobs live / peak 1,616 MB; 24 h **1,099 s** / 16.40M events / 1,280 jobs live / 2,740 MB
  (peak 2,761); peak 2,768 MB at 30 h. The drain from 48 to 730 simulated hours took
  **479 s** (the code of 1178e5b: 1,154 s from 51 to 747 h, 2.4x more); stopped (SIGTERM) at
  1,254 h with one job of 943 tasks still running 19 attempts: 2,017 s of CPU in all. In
  the drain (py-spy, 30 s at ~50 h) the block parts are 44% of the CPU (the first pass 28%,
  the other parts 17%) and the rates of each part (``Cluster._ensure_rates``, every node's)
  30%: both are for all 33,000 nodes while a few attempts run.
- A done task's several attempts as its job's rows (``sim_bridge/_closed_attempts.py``). Of
  the tasks done after 400,000 events of the LATE day (0.86 h), 124,568 ran two attempts
  (80,698 the original killed, 43,870 the copy), 192,481 one: two in five. A/B, the day to
  6 h (``bench_day.py --policy late --until 6``, the packing on and off, runs side by side):
  peak 2,349 MB off; 1,930 MB with the attempts as rows and the task kept; **1,797 MB**
  (0.77x) with the task dropped as well. RSS per live task 0.80 -> 0.46 KB. CPU 615 / 603 /
  589 s (other runs beside them). The first 400,000 events give the same trace, on and off.
- LATE's scan at 10 simulated hours (py-spy, 60 s): 52% of the CPU (the progress reads 31%,
  collecting each job's live attempts 11%), against 38% at 2-3 h.
- The FB-2010 day with LATE on code e902050 (``bench_day.py --workload FB2010 --policy late
  --until 24.05``, ``bench/results/FB2010_late.jsonl``; other runs beside it for part of the
  day): 1 h 73 s / 1,142 MB; 6 h 580 s / 3.28M events / 487 jobs live / peak 1,797 MB; 24 h
  **3,273 s** (55 min) / 16.54M events / 627 jobs and ~3.0M tasks live / peak **2,493 MB**
  (2,547 MB at its stop, 24.2 h), against 3,566 s and 3,212 MB on 9323745. RSS against the
  live tasks: 889 MB + 0.46 KB a task, R^2 0.83 (0.69 KB before). Peak 24 h / 6 h: 1.39, as
  before: both fell alike.

Measured on 2026-11-29 (d):

- Where a streamed FB-2010 day's memory goes, counted in the running engine (the live jobs'
  structures, ``sys.getsizeof`` and buffer sizes; a copy of ``bench_day.py`` that counts them
  with the engine paused) on code b24374b. Without speculation at 6.2 h (RSS 1,325 MB, 720 jobs
  and 3.0M tasks live, 2.75M of them dropped done tasks): the ``running`` dicts 118 MB (88k
  attempts running: each kept the table its widest stage grew to), the rows ``_one`` and
  ``_done_f`` 160 MB (56 bytes a task of a live job), the live ``Task`` objects and their
  numbers 62 MB, the rest under 25 MB each; ~470 MB in all. Set-up alone (imports, the
  day's 24,437 job specs, the world) is ~600 MB, and ~930 MB after 2,000 events (a 242 MB
  block part of levels). With LATE at 3.0 h: 186,693 done tasks that ran several attempts
  were still objects (``DoneMany``), most of them because the drop queue had given up on them
  after 63 sweeps while a killed straggler's stale heap entry held them; at 6.0 h
  368,081, and the ``running`` dicts 97 MB, the rows 101 MB, the attempts' rows (``_many_i``,
  ``_many_f``) 103 MB.
- Three changes follow (the traces unchanged, bit for bit: ``tests/test_row_maps.py``,
  ``tests/test_running_compaction.py``, ``tests/test_task_list.py``): a job's ``running``
  rebuilt once deletions pass twice what is left; the drop queue trying a held task with its
  back-off without a limit (40 tries); a job of 4,096 tasks or more keeping its rows (the 56
  bytes a task and the 80 an attempt, with room for 2 attempts a task) in a sparse, unlinked
  file mapping whose pages the engine gives back every 65,536 events
  (``sim_bridge/_row_maps.py``). With them, LATE at 3.0 h holds 25,731 ``DoneMany`` objects
  (was 186,693) and the ``running`` dicts 6.7 MB (was 56.6).
- ``bench/bench_row_maps.py`` (400 jobs of 20,000 tasks, rows written round-robin as a day
  finishes them, pages given back every 65,536 rows; three replays beside it): arrays 2.51 s
  to write, 430 MB resident at the end, peak 466 MB; maps 3.53 s (**1.41x**: the page faults
  after each return, ~0.13 us a row, ~2 s over an FB-2010 day), **0 MB** resident after the
  last return, peak 43 MB; reading every job's rows back 0.05 / 0.06 s; the same rows.
- The FB-2010 day on the new code (``bench_day.py --workload FB2010 --until 24.05``, each
  from a copy of its tree, ``bench/results/FB2010_late.jsonl`` and ``FB2010_none_24h.jsonl``;
  up to three other runs beside them). LATE, code 8a9b632: 1 h 77 s; 6 h 601 s / 3.27M
  events / peak 1,529 MB (was 1,797); 12 h 1,557 s / peak 1,844 MB (was 2,293); 24 h
  **3,231 s** (54 min, was 3,273) / 16.54M events / 630 jobs live / peak **2,089 MB** (was
  2,493; 0.84x), 2,143 MB at its stop. Without speculation, code aa4468b: 6 h 192 s / peak
  1,452 MB (was 1,616); 12 h 550 s / 1,791 MB (was 2,250); 24 h **1,191 s** (was 1,099) /
  16.41M events / peak **2,131 MB** (was 2,761; 0.77x). Peak 24 h / 6 h: 1.37 with LATE
  (was 1.39), 1.47 without (was 1.71). RSS against the live tasks: 907 MB + 0.31 KB a task
  with LATE (was 0.46 KB), 972 MB + 0.11 KB without (was 0.20 KB).
- CPU, side by side (the day without speculation to 3 h, b24374b and the new code at once):
  94 s to 3.15 h (1.58M events) and 93 s to 3.08 h (1.51M events), 59.6 and 61.7 us an
  event: the same within what two runs beside each other differ by. The 24 h runs' CPU
  (1,191 against 1,099 s without speculation, 3,231 against 3,273 with LATE) moved with the
  load beside them.
- FB-2009 day with LATE (``bench_day.py --workload FB2009 --policy late --every 1``): 20 s,
  peak 230 MB (228 MB before), two replays beside it.
- What still grows from 6 to 24 h is not in the structures counted above. With LATE at
  3.04 h on the new code the counted ones hold ~150 MB resident (and 176 MB of mappings,
  mostly room not written), against an RSS of ~1,250 MB. The event heap holds 197,561
  entries: 172,684 of running attempts and 24,877 of closed ones (killed copies' and
  originals' stale ends, holding 15,149 tasks), a median 0.1 h ahead of the clock (p90
  0.96 h): not the growth either.
- The allocators, counted in the same way without speculation at 6.2 and 12.0 h on the new
  code (``sys._debugmallocstats``, glibc's ``mallinfo2``; RSS 1,291 -> 1,776 MB, +485):
  pymalloc's arenas 419 -> 621 MB (+202), of which blocks in use 272 -> 363 MB and free
  blocks inside them 127 -> 242 MB (no arena was ever returned: a 1 MiB arena goes back only
  when all of it is free, and long-lived task objects of big jobs share arenas with
  short-lived attempts and tuples); glibc's mmapped blocks 613 -> 777 MB (+164: the world's
  arrays stay at ~355 MB, the live jobs' task lists and noise lists, 16 bytes a task, grow
  46 -> 101 MB, the rest is not attributed); glibc's heap 159 -> 220 MB. So of what grows,
  about half is memory the allocators hold free.

Measured on 2026-11-29 (e):

- A running attempt's memory, counted in the running engine (a copy of ``bench_day.py`` that
  pauses it, as in (d)), LATE at 0.5 h, 84,000-119,000 attempts running: the ``Attempt``
  object 184 bytes, its launch record (``_rec``, 12 floats as a list) 416, its rate memo ~130,
  its co-tenants' demand tuple 165, its last-read pair 94, its deferred solve ~50, its floats
  and uid up to ~200 (some shared), its task's ``live`` dict 224 and ``attempts`` list 88;
  with its entries in the job's and node's dicts and the heap, ~1.6 KB. The record is now an
  ``array("d")``: 208 bytes (~1.4 KB an attempt in all). The same traces (the streamed runs'
  tests against runs kept in memory).
- What the FB-2010 day's peak grows with from 6 to 24 h: without speculation (the run below,
  code c3bf760) the peak is 1,132 MB at 6 h and 1,374 MB at 12 h, then jumps to 1,667 MB in
  the 13th hour, when the cluster is full (330,000 attempts running at once, where its samples
  saw at most 188,225 in the first 6 hours) and stays there (pymalloc keeps what it held); the
  run with the chunks the same (1,353 MB at 12 h, 1,635 MB in the 13th hour; its samples saw
  at most 156,647 running before 6 h). At ~1.4 KB a running attempt, the extra 140,000-170,000
  attempts are ~200-240 MB of it: memory follows the work alive, and the work alive doubles.
- The world's windows swing with the path parts: at 6 and 12 h the levels held 282 MB (a
  part of 240 steps past the clock and the last 30 minutes), the two profiles' rates and
  running sums 122 MB and 253 MB. Parts are now 128 MiB (120 steps on 33,000 nodes:
  ``PATH_PART_BYTES``): ``bench/bench_path_parts.py`` 7.8 s a day-block (7.2 s in 6 parts),
  marks 73 MiB (36).
- A stage's noise multipliers (8 bytes a task) go once all its originals have launched
  (``sim_bridge._jobs.read_noise``); a job of 4,096 tasks or more keeps its task storage in
  chunks of 1,024 that go once their tasks were all dropped
  (``sim_bridge/_chunked_items.py``): 8 bytes a done task of a live job each, ~68 MB each
  at 24 h.
- Tried and not kept: ``PYTHONMALLOC=malloc`` (glibc for every object) with ``malloc_trim``
  every 10 s, LATE to 4 h beside the same run on pymalloc: CPU 452 against 400 s, RSS 1,489
  against 1,469 MB. ``malloc_trim`` alone, at 6 and 12 h without speculation, returned 4-8
  MB. A full collection with ``gc.DEBUG_SAVEALL`` at 1 and 2 h with LATE found 1,608 and
  3,097 objects of import-time garbage and no engine cycles: nothing leaks past
  ``Job.release``.
- The FB-2010 day without speculation (``bench_day.py --workload FB2010 --policy none
  --until 24.05``, each run from a copy of its tree; the LATE day beside them): code c3bf760
  (the record, the noise and the parts): 6 h 189 s / peak 1,132 MB; 12 h 497 s / 1,374 MB;
  24 h 1,072 s / 16.36M events / 1,682 MB. Code 1b8e553 (and the chunks;
  ``bench/results/FB2010_none_24h.jsonl``): 6 h 198 s / 1,123 MB; 12 h 526 s / 1,353 MB;
  24 h **1,150 s** / 16.34M events / 1,322 jobs live / peak **1,636 MB** (was 2,131; 0.77x),
  1,677 MB at its stop (24.6 h). Peak 24 h / 6 h: 1.46 (was 1.47): the peaks fell alike.
  RSS against the live tasks: 867 MB + 0.08 KB a task (R^2 0.84; was 972 MB + 0.11 KB).
- The FB-2010 day with LATE (``bench_day.py --workload FB2010 --policy late --until 24.05``,
  code c3bf760, before the chunks, from a copy of its tree;
  ``bench/results/FB2010_late.jsonl``; the days without speculation beside it): 1 h 79 s / 898
  MB; 6 h 536 s / 3.26M events / peak 1,276 MB (was 1,529); 12 h 1,486 s / 1,606 MB (was
  1,844); 24 h **3,149 s** (53 min, was 3,231) / 16.53M events / 632 jobs and 3.0M tasks live
  / peak **1,819 MB** (was 2,089; 0.87x), 1,861 MB at its stop (24.2 h). Peak 24 h / 6 h: 1.43
  (was 1.37): the 6 h peak fell more. RSS against the live tasks: 827 MB + 0.28 KB a task (R^2
  0.76; was 907 MB + 0.31 KB). Its CPU, like the days without speculation's, moved with the
  load beside it (not an A/B).
- FB-2009 day with LATE (``--every 1``), code 1b8e553: 21 s, peak 229 MB (230 before).
- CPU, side by side (the LATE day to 2.5 h, code 0823780 and 1b8e553 at once, each from a copy
  of its tree, nothing else running): 220 s each, to 2.63 h / 1.375M events and 2.68 h /
  1.392M events: 160 and 158 us an event, the same. Peak RSS to there 1,350 -> 1,179 MB
  (0.87x).

Measured on 2026-11-29 (f):

- A running attempt's objects, each counted once however many attempts share it (a copy of
  ``bench_day.py`` that pauses the engine, as in (e)), LATE at 0.5 h: code 02a207f, 97,334-
  97,395 running, 1,035-1,060 bytes an attempt (the ``Attempt`` 184, its launch record 208,
  its rate memo with the demand tuple it points to 209-244, its last-read pair 67-77, its
  task's ``live`` dict 166-170 and ``attempts`` list 65-67, its deferred solve 32-40, its
  floats and uid ~75); code 4293469, 90,471-120,555 running, 705-727 bytes (its record's
  offset 28, the memo 102, ``attempts`` 49-50, the demand tuples shared). The jobs' in-memory
  records of the running attempts: 1.9-2.0 MB in all (the rest spilled to disk with the
  closed ones'). Three changes, the traces the same bit for bit: a launch record is written
  at the launch into its job's flat records (``att._rec`` its offset; it was an
  ``array("d")`` of its own until it closed); co-tenants' demands of equal bits are one tuple
  (``sim_bridge/world/_shared_demands.py``; at 1 h without speculation 100,798 running
  attempts held 90,562 demand tuples of 55 values, one of them 86,305 times); a task's
  attempts list is sized to its attempts ([att], 64 bytes; was 88).
- The demands' sharing, first cut (code 4293469), hashed every demand of a re-solve: on
  Alibaba 2017's nodes of 176 slots 5% more CPU an event (``straggler simulate --workload
  ALI2017 --hours 0.25 --nodes 1300 --slots 176 --policy none --stream --max-events
  40000``, three trees at once: 02a207f 11.99 s, 4293469 12.66 s). Runs of one tuple now
  reuse the last result and ``add_each`` makes one sum for co-tenants holding one tuple
  (f1b9692): 11.65 s. The day runs below are 4293469's.
- The same FB-2010 half hour (``--hours 0.5 --nodes 2000 --slots 10 --policy late
  --stream``) on 02a207f, 4293469 and f1b9692: ``tasks.parquet`` and ``jobs.parquet`` equal
  (``DataFrame.equals``), 254,262 attempts.
- The FB-2010 day without speculation (``bench_day.py --workload FB2010 --policy none
  --until 24.05``, code 4293469 from a copy of its tree, the LATE day and Alibaba 2017 beside
  it; ``bench/results/FB2010_none_24h.jsonl``): 1 h 36 s / peak 731 MB (891 before); 6 h
  210 s / 3.20M events / peak 1,045 MB (1,123); 12 h 548 s / 1,230 MB (1,353); in the 14th
  hour, the cluster full (330,000 running), 1,466 MB (1,635); 24 h **1,165 s** / 16.37M
  events / 1,296 jobs live / peak **1,466 MB** (1,636; 0.90x), 1,507 MB at its stop
  (24.6 h). Peak 24 h / 6 h: 1.40 (1.46). RSS against the live tasks: 835 MB + 0.07 KB a
  task (R^2 0.84). CPU as before (1,150 s on (e), with less beside it).
- The FB-2010 day with LATE (``bench_day.py --workload FB2010 --policy late --until 24.05``,
  code 4293469 from a copy of its tree, beside the day without speculation and Alibaba 2017:
  three or four replays on the 2 cores, where (e)'s had one beside it;
  ``bench/results/FB2010_late.jsonl``): 1 h 77 s / peak 832 MB (898 on (e)); 6 h 581 s /
  3.28M events / peak 1,196 MB (1,276); 12 h 1,577 s / 1,479 MB (1,606); in the 14th hour,
  325,460 running, 1,610 MB; 24 h **3,308 s** (55 min; 3,149 s on (e)) / 16.54M events / 624
  jobs live / peak **1,631 MB** (1,819; 0.90x), 1,682 MB at its stop (24.2 h). Peak 24 h /
  6 h: 1.36 (1.43). RSS against the live tasks: 809 MB + 0.23 KB a task (R^2 0.78). The CPU
  is not an A/B: side by side below.
- CPU, side by side (the LATE day to 1.5 h, code 02a207f and f1b9692 at once, each from a
  copy of its tree, Alibaba 2017 with LATE beside them): 149 s for 795,399 events and 146 s
  for 824,716: 187 and 177 us an event (0.95x). Peak RSS to there 1,046 -> 967 MB (0.92x).
- FB-2009 day with LATE (``--every 1``), code 4293469, three replays beside it: 23 s, peak
  229 MB (the same).
- Alibaba 2017, the whole table (``--workload ALI2017 --hours 18``), code 4293469: without
  speculation (niced, two or three replays beside it) to 12.5 h: 1 h peak 731 MB (808 on
  b24374b), 6 h 1,595 MB (1,727), 12 h 2,382 MB (2,584); its CPU from 6 h on, 2.0 ms an event
  where the old run and the LATE run beside it took 1.2, is the machine's, not the code's
  (the same code). With LATE (``bench/results/ALI2017_late_full.jsonl``, the day runs and
  then nothing beside it): 1 h 109 s / 654 MB; 6 h 663 s / 0.82M events / 1,501 MB; 12 h
  1,582 s / 2,291 MB; every job arrived by 17.2 h (3,203 s, 3,357 MB); stopped (SIGTERM) at
  20.3 h, 3,982 s, 2.76M events, 6,199 jobs done, peak **3,370 MB**. Its 228,800 slots are
  full from the first hour on, so LATE, which copies only onto free slots, made 4,864
  copies in all: with speculation the table costs what it costs without.

Measured on 2026-11-29 (g):

- Set-up, before the first event (``tracemalloc`` snapshot and RSS in a copy of the engine
  paused at ``Simulator.run``): FB-2010's 24,437 job specs held 131.5 MB of per-task base
  work (16.4M maps: SWIM's replay gives every map of a job but its last the same work);
  Alibaba 2017's whole table 83.0 MB (10.2M instances, each task's alike). A ``JobSpec`` now
  holds a stage of 64 tasks or more as runs of equal values when they are at most a quarter
  of its tasks (``sim_bridge/_work_runs.py``, the arrays read back bit for bit): RSS before
  the first event 587 -> 467 MB (FB-2010, 33,000 x 10), 332 -> 259 MB (Alibaba 2017, 1,300 x
  176). The rest of FB-2010's set-up: imports 106 MB, the levels' window 127 MB, the path
  block's marks 76 MB, the slow nodes' capacity block 38 MB.
- Census of the live jobs (FB-2010 without speculation, code 3b0393c, stopped by
  ``max_events``): at 2.1 h 1.19M tasks of live jobs, 1.07M of them dropped as rows, 87,590
  running, 18,806 blocked (a second stage not yet runnable), none waiting; at 15.8 h 7.79M,
  7.38M dropped, 244,639 running, 146,864 blocked, none waiting. So the waiting tasks, which
  hold objects, are not where the memory goes; the running attempts are.
- Census of LATE at 3.4 h (code 88a176f): the finished run times LATE keeps (``_Durations``)
  7.5 MB for 353,103 values; the heap 215,205 entries, 38,779 of them of closed attempts
  (written since the last pass); 26,673 done tasks that ran several attempts still objects.
- The FB-2010 day without speculation (``bench_day.py --workload FB2010 --policy none
  --until 24.05``, code 3b0393c from a copy of its tree, two LATE days beside it;
  ``bench/results/FB2010_none_24h.jsonl``): 1 h 30 s / peak 608 MB (731 on (f)); 6 h 175 s /
  3.24M events / 920 MB (1,045); 12 h 498 s / 1,108 MB (1,230); in the 14th hour, 330,000
  running, 1,342 MB (1,466); 24 h **1,099 s** / 16.37M events / 1,298 jobs live / peak
  **1,342 MB** (1,466; 0.92x), 1,376 MB at its stop (24.5 h). Peak 24 h / 6 h: 1.46 (1.40):
  the same ~122 MB less at every hour, so the ratio grew. RSS against the live tasks: 696 MB
  + 0.07 KB a task (R^2 0.78).
- FB-2009 day with LATE (``--every 1``), code 4b25d72, two replays beside it: 20 s, peak
  224 MB (229).
- The day without speculation again on the final code (e7d468e: the heap pass too), alone
  on the machine: 6 h 212 s / 918 MB; 12 h 553 s / 1,102 MB; 24 h 1,216 s / 16.41M events /
  peak 1,361 MB (1.48 over 6 h). Against 3b0393c's run (1,099 s, 1,342 MB, replays beside
  it) that is not an A/B: the same code's CPU has differed by 5-10% between runs here, and
  the heap pass costs ~1-1.5% of this day (~63 passes of 0.1-0.27 s, few entries let go
  without kills). The log is not kept.
- The FB-2010 day with LATE (``bench_day.py --workload FB2010 --policy late --until 24.05``,
  code 4b25d72 from a copy of its tree, e3a6e86's day beside it and at times a census or
  two shorter replays; ``bench/results/FB2010_late.jsonl``): 1 h 82 s / peak
  724 MB (832 on (f)); 6 h 588 s / 3.29M events / 1,026 MB (1,196); 12 h 1,558 s / 1,269 MB
  (1,479); in the 14th hour, 330,000 running, 1,329 MB; 24 h **3,259 s** (54 min; 3,308 s on
  (f)) / 16.52M events / 635 jobs live / peak **1,451 MB** (1,631; 0.89x), 1,490 MB at its
  stop (24.1 h). Peak 24 h / 6 h: 1.41 (1.36). RSS against the live tasks: 668 MB + 0.21 KB
  a task (R^2 0.73). The same day on e3a6e86 (no heap release), beside it: 6 h 1,042 MB,
  24 h 3,207 s and 1,470 MB, 1,503 at its stop; so the release took 16-19 MB from the peaks.
  On 3b0393c (the base work as runs only; stopped at 12.6 h to free a core): 6 h 1,058 MB,
  12 h 1,347 MB.
- CPU, side by side (``bench_day.py --until 1.5``, copies of two trees at once, two day
  replays beside them): 4b25d72 121 s for 804,635 events, e68786c (LATE's scan takes a
  job's running attempts unfiltered by stage) 115 s for 795,345: 150 and 145 us an event
  (0.96x). Then e68786c against ee8587e (rate memos' steps one int object with the scan's
  step, so that a memo check compares pointers: at 9.5 h py-spy put 10% of the CPU in that
  check): 115 s for 817,950 and 115 s for 812,470 events to 1.5 h; 352 s for 2,089,050 and
  350 s for 2,082,457 to 4 h (168.5 and 168.1 us an event). No change measured, so it was
  reverted (f6b42ff); the check still reads the memo's list and its item array, which may
  be the misses that count (not measured). The
  same FB-2010 half hour as in (f)
  (2,000 x 10, LATE, streamed, the heap released at every upkeep) on 12dacc9, 4b25d72,
  e68786c and ee8587e: ``tasks.parquet`` and ``jobs.parquet`` equal (``DataFrame.equals``),
  254,262 attempts.

Measured on 2026-11-29 (h):

- What a running attempt holds (``bench_day.py --census 240000``'s count, each object once,
  at the first upkeep with 240,000 running: the FB-2010 day without speculation at 6.27 h,
  246,111 running, the same event on both codes): d35ab18 1,064 bytes a running attempt
  (262 MB), of which its task's ``live`` dict 240 and the task's unread uniform draw 24;
  7412236 800 bytes (197 MB, 0.75x). What is left: the ``Attempt`` 200, its ``Task`` 144,
  the attempts list 80, its job's launch records 69, a deferred solve's tuple and its
  numbers 100 (191,191 of them), its job's ``running`` 46, its uid, its task's uid and its
  record's offset 28 each, its work and its task's work 24 each. Not counted: 322,426 heap
  entries (~48 bytes each), the nodes' dicts, allocator slack. The census's process peak:
  1,240 -> 1,181 MB. With ``PYTHONMALLOC=malloc`` (glibc for every object) the same census
  peaked at 1,254 MB: pymalloc is the better of the two here.
- The FB-2010 day without speculation (``bench_day.py --workload FB2010 --policy none
  --until 24.05``, code 7412236 from a copy of its tree; the LATE day beside it, and for its
  first 20 minutes the test suite and two censuses; ``bench/results/FB2010_none_24h_h.jsonl``):
  1 h 590 MB peak (608 on (g)); 6 h 3.24M events / 882 MB (920); 12 h 1,038 MB (1,108); in
  the 14th hour, 330,000 running, 1,250 MB (1,342); 24 h 16.38M events / 1,295 jobs live /
  peak **1,250 MB** (0.93x), 1,276 MB at its stop (24.3 h). Peak 24 h / 6 h: 1.42 (1.46).
  RSS against the live tasks and the most attempts running so far: 472 MB + 22 B a task +
  1,577 B an attempt (R^2 0.87; 470 MB + 19 B + 1,913 B on 3b0393c's log, R^2 0.83). CPU
  1,971 s to 24 h, 1.8x (g)'s 1,099 s, from the load beside it: not an A/B. Side by side
  (copies of both trees at once, two day replays beside them), the streamed FB-2010 half
  hour on 2,000 x 10 with LATE took 46.5 s on d35ab18 and 45.8 s on 7412236 (0.98x), and
  the FB-2009 day with LATE 43 s / 237 MB and 42 s / 234 MB. The half hour's
  ``tasks.parquet`` is d35ab18's (``DataFrame.equals``; 254,262 attempts with LATE, 246,761
  without speculation).
- The FB-2010 day with LATE (``bench_day.py --workload FB2010 --policy late --until 24.05``,
  code daf1ec1 from a copy of its tree: the count without the shared draws; the day without
  speculation beside it for its first 42 minutes, and at times the test suite, censuses and
  the fidelity check; ``bench/results/FB2010_late_h.jsonl``): 1 h 700 MB peak (724 on (g));
  6 h 3.26M events / 1,001 MB (1,026); 12 h 1,219 MB (1,269); 24 h 16.54M events / 629 jobs
  live / peak **1,394 MB** (1,451; 0.96x), 1,434 MB at its stop (24.2 h). Peak 24 h / 6 h:
  1.39 (1.41). CPU 4,442 s to 24 h, 1.4x (g)'s 3,259 s, from the load beside it: not an A/B
  (the side-by-side figures above are).
- What the process holds at that census (``tracemalloc`` from the start, the day without
  speculation, 6.27 h, 246,111 running; 809 MB traced): the contention paths' window 168 MB
  (``Cluster._levels``), the profiles' rates and running sums 138 MB, the path block's marks
  76 MB, the slow nodes' capacity block 38 MB; then the attempts (47 MB), the tasks of live
  jobs (41 MB of first stages, 12 MB of second), what the compiled re-solves allocate (the
  deferred solves' tuples and their numbers, 27 MB), the heap (21 MB), the jobs' rows (32
  MB), imports (17 MB), the attempts lists (16 MB), the nodes' dicts (10 MB), the shared
  task indices (10 MB). So at this hour some 420 MB is the world's state, fixed in size, and
  ~250 MB the running attempts and their tasks.

Measured on 2026-11-29 (i):

- Where the FB-2010 day's memory goes from 6 to 16 h (LATE, code 479c038 from a copy of its
  tree; a probe at every quarter hour: ``/proc/self/smaps_rollup``, glibc's ``mallinfo2``
  and pymalloc's ``sys._debugmallocstats``): glibc's mapped blocks (the contention paths'
  arrays and other big arrays) 456 -> 493 MB; glibc's heap 101 -> 165 MB (blocks under
  128 KiB that are not Python objects, such as small jobs' rows and records and dict tables;
  not broken down); pymalloc's arenas 328 -> 552 MB, of which 409 by 6.5 h (323,000 attempts
  running at 6.3 h, 377 MB of live blocks) and 531-552 from 13.8 h, when the cluster
  filled: 330,000 running and 314,751 tasks waiting, 482 MB of live blocks. No cyclic
  garbage builds up (``gc.collect`` found 1,587 and 4,297 objects at 1 and 2.5 h, none of
  the engine's). The samples' peaks also sit 30-160 MB above their RSS: transients, such as
  the contention paths' window while it is extended (51 MB at 1.9 h), not located further.
- Waiting tasks made when read (``sim_bridge/_waiting_tasks.py``): the same days side by
  side with 479c038 (copies of both trees at once, the FB-2010 day beside them), with
  ``bench_day.py --workload ALI2017 --policy none --until U``: Alibaba 2017's whole table
  (11,644 jobs, 1,300 x 176) peaks at 452 / 574 MB at 1 / 2.05 h where 479c038 peaked at
  485 / 691 (0.93x / 0.83x), CPU 345 and 353 s to 2.05 h; fitted over the samples, RSS
  grows 150 bytes a live task where it grew 293; a second pair, stopped by hand at 2.5 h,
  608 against 759 MB (0.80x), CPU 431 and 432 s, 153 against 300 bytes a live task. The
  FB-2010 day with LATE
  (code d607958, without the placement change, from a copy of its tree, beside the Alibaba
  pairs; ``bench/results/FB2010_late_i.jsonl``): 1 h 695 MB peak (700 on (h)); 6 h 977
  (978); 12 h 1,221 (1,219); 13.9 h, 330,000 running and the queue, 1,265 (1,372: 0.92x);
  stopped (SIGTERM) at 14.07 h, 10.37M events, peak 1,302 MB (1,373 on (h) at that hour:
  0.95x). Peak 14 h / 6 h 1.33 (1.40). RSS against the live tasks and the most attempts
  running so far: 542 MB + 79 B a task + 1,216 B an attempt (R^2 0.86). CPU 2,991 s to
  14.07 h against 2,745 s on (h): not an A/B (the side-by-side half hour below is).
- The placement's iterators: a cProfile of the streamed FB-2010 half hour (2,000 x 10, LATE,
  120,000 events) on d607958 made 2,757,565 iterators of waiting tasks in 118,963 passes;
  made when a job first heads the queue, the half hour took 59.1 s of CPU on c639c84
  against 60.0 s on 479c038 side by side (70.1 against 63.7 s before, on d607958), and its
  ``tasks.parquet`` is d35ab18's (``DataFrame.equals``, 254,262 attempts).

Measured on 2026-11-29 (j):

- The contention paths' window moved on in its own buffer (``sim_bridge/_path_window.py``):
  ``bench/bench_path_window.py`` (33,000 nodes, 6 growths of 120 steps, windows of 152 and
  272 steps, two day replays beside it): the copy's transients 103, 153, 32, 154, 32 and 33
  MiB above the resident set, in place 8, 9, 0, 9, 0 and 9 MiB (0.06x the largest), CPU
  0.95x, the same levels read. The streamed FB-2010 half hour (2,000 x 10, LATE) gives
  d35ab18's ``tasks.parquet`` (``DataFrame.equals``, 254,262 attempts).
- The FB-2010 day with LATE side by side (``bench_day.py --workload FB2010 --policy late
  --until 24.05``, copies of both trees, started 6 minutes apart; at times the test suite,
  the local CI and an FB-2009 pair beside them; ``bench/results/FB2010_late_j.jsonl`` and
  ``FB2010_late_j_8d07b33.jsonl``): 1 h 689 / 689 MB peak (new / 8d07b33); 6 h 992 / 995;
  12 h 1,215 / 1,219; 24 h 16.54M events, **1,309 / 1,309**, 1,344 / 1,343 at the stops
  (24.2 h). Peak 24 h / 6 h 1.32 on both (1.39 on (h), before the waiting tasks made when
  read). CPU to 24 h 5,187 / 5,255 s (0.99x; both slowed by what ran beside them). The
  transient is gone where it set the peak (13.9 h: 1,215 against 1,258 MB, 0.97x; 2 h: 792
  against 828 in the samples), but the day's peaks are set by the resident set itself, so
  they hardly change.
- What sets them (the same logs): at every even hour the resident set jumps by 122-146 MB
  within one sample (2 h 770 -> 892 MB, 4 h 804 -> 927, 6 h 842 -> 966, 8 h 1,007 ->
  1,130, 10 h 1,023 -> 1,151, 12 h 1,022 -> 1,152, 14 h 1,115 -> 1,261) and falls back at
  the next extension (x.87 h). That is the profiles' rates and running sums: with a window
  they are computed for every node a part ahead of the clock (``Cluster._ensure_rates``,
  120 steps on 33,000 nodes), two profiles x (rate, sum) x 33,000 nodes x 8 bytes = 1.01
  MiB a step, 121 MiB a part. A probe of the engine's holds (a streamed FB-2010 replay on
  3,000 x 10 with the parts forced to 120 steps, the cluster's holds and kept steps logged
  every 0.1 h) shows the rates kept from
  about 10 steps behind the clock to the next part's end: 130 steps from each even hour,
  10 from each extension. Rating them in smaller parts would take ~100 MB off every peak,
  but each end solved past the rates' horizon then goes through the per-node walk
  (``Cluster._node_ahead``) more often: not done, as its CPU was not measured.
- The FB-2009 day with LATE side by side (8d07b33 and 2823204, two day replays beside them):
  210 and 208 MB peak, 58.3 and 58.6 s of CPU (heavily shared), the same 451,698 events.

Measured on 2026-11-30 (k):

- Three things that followed a part or a block now follow the clock, bit for bit: every
  node's rates and running sums are computed and dropped 15 steps at a time on 33,000 nodes
  (``Cluster(rate_steps=)``, ``sim_bridge._simulate.path_rate_steps``, 8 MiB a profile;
  e7ae9a9); each part's marks lie in pages of their own, given back once the part is drawn
  (``sim_bridge/world/_block_marks.py``, bfa3e10); a block's degraded capacities are one array
  a part, each let go once its part is degraded (``BadNodes.capacity_parts``, 54ebfb6). The
  streamed FB-2010 half hour (2,000 x 10, LATE) gives d35ab18's ``tasks.parquet``
  (``DataFrame.equals``, 254,262 attempts) with the default parts and with parts forced to
  120 steps and rates to 10 or 15.
- ``bench/bench_rate_parts.py`` (defaults): rates kept at most 121.4 against 30.7 MiB
  (0.25x), CPU 1.64x in its worst case (every attempt alone on its node: 120,348 per-node
  walks). In the engine (the streamed FB-2010 half hour on 33,000 x 10 with LATE, e7ae9a9
  and d0a2781 side by side): 520 walks against 138 for 68,084 ``end_from`` solves, CPU 83.2
  against 89.1 s (0.93x), peak 650 against 740 MB, the same 254,893 events and rows.
  ``bench/bench_path_parts.py``: the marks kept fall 66, 60, ... 6, 0 MiB part by part.
- The FB-2010 day with LATE on 54ebfb6 (``bench_day.py --workload FB2010 --policy late
  --until 24.05``, a copy of its tree; at times the day without speculation, the local CI,
  an FB-2009 pair and the benchmarks beside it; ``bench/results/FB2010_late_k.jsonl``),
  against (j)'s log (code 2823204, whose paths code d0a2781 kept): peak 685 / 689 MB at 1 h
  (k / j), **848** / 992 at 6 h, 1,036 / 1,215 at 12 h, **1,169** / 1,309 at 24 h (0.89x),
  1,227 / 1,344 at the stops; the same 16.56M events by the stop. Peak 24 h / 6 h 1.38 (1.32
  on (j)): every peak fell, by 144 MB at 6 h and 140 at 24 h, so the ratio grew. The 14 h
  jump is gone (1,139 MB by 15 h, after the cluster was full), and the day's peak is now set
  at 23.87 h, where block 1's first part is drawn: its first pass's marks (73 MiB) and its
  degraded capacities (38 MB), 915 -> 1,135 MB within two samples. CPU to 24 h 5,637 s
  (5,187 on (j); both shared, this one with the none day, the local CI and the benchmarks).
- The rates alone (e7ae9a9, ``FB2010_late_k_e7ae9a9.jsonl``, stopped at 8.84 h to free a
  core): 886 MB at 6 h (992 on (j)), 1,076 MB to 8.84 h (1,173).
- The FB-2010 day without speculation on 54ebfb6 (``FB2010_none_24h_k.jsonl``, the LATE
  day beside it): 1 h 592 MB peak, 6 h 748 (882 on (h)), 12 h 888 (1,038), 24 h 1,097
  (1,250); 16.40M events; CPU 2,485 s to 24 h (shared; 1,971 on (h), also shared). Peak 24
  h / 6 h 1.47 (1.42 on (h)): every peak fell, by 134 MB at 6 h and 153 at 24 h, so the
  ratio grew.
- The FB-2009 day with LATE, 54ebfb6 and d0a2781 side by side (``FB2009_late_k.jsonl``,
  ``FB2009_late_k_d0a2781.jsonl``; 600 nodes rate 720 steps at a time, whole blocks):
  peak 203 against 210 MB, CPU 49 and 49 s (both heavily shared), the same 451,698 events.

Measured on 2026-11-30 (l):

- Where the LATE day's CPU goes (py-spy attached to a ``bench_day.py`` replay of the FB-2010
  day with LATE, code 74ce0c9, one other replay beside it): 90 s of samples at 2.2 h (124,000
  running): LATE's compiled scan 33% of the process (its Python call-backs 1.5%), the
  attempts' launches 9%, deferred solves 10%, finishes with their closes 17%, the trace
  sink's rows 6%, the rest spread thinly; 30 s with native frames at 3.5 h: the scan 19%, of
  which reading the attempts' slots, floats and rate memos 57% (``_get``, ``_getd``,
  ``_fitem``, ``_step_is``), reference counting 10%, sorting each job's rates 7%. Even a free
  scan leaves the day several times the ten-minute goal.
- What the live jobs hold (``bench_day.py --job-census 8``'s count, each object once; the
  first count was the same walk from a script outside the repository): the FB-2010 day with
  LATE at 8.00 h, 735 jobs alive with 2,956,590 tasks, 145,797 attempts running, the same
  state on both codes (5,580,800 events). On 74ce0c9: 266.1 MB, 90.0 bytes a task: the task
  storage with the running tasks and their attempts 158.9 MB, the big jobs' base work not yet
  made into tasks 23.2, launch records 12.6, LATE's run times 30.9 (their arrival-order
  values 10.9, the sorted snapshot 10.0, the inverse rates 10.0), done tasks' rows 31.4 (the
  rest of the rows in file mappings, given back). On b4f69ca (LATE keeps the snapshot and the
  values since it, and the compiled scan divides as it reads): 245.8 MB, 83.1 bytes a task,
  LATE's run times **10.6 MB** (0.34x).
- The same two replays to 8 h (``bench/results/FB2010_late_l_8h_74ce0c9.jsonl`` and
  ``FB2010_late_l_8h.jsonl``, copies of their trees, each beside other runs): sampled peaks
  675 / 679 MB at 1 h (new / old), 819 / 828 at 6 h, **979 / 1,000** at 8 h (0.98x); the
  census walk itself then adds ~90 MB to each process's final peak. CPU side by side on the
  streamed FB-2010 half hour (2,000 x 10, LATE, twice, interleaved): 45.0 / 43.4 and 51.3 /
  53.5 s, 96.4 / 96.9 s in all, the same 256,089 events, equal ``tasks.parquet`` (and equal
  to d35ab18's). The FB-2009 day with LATE, side by side: 41 / 42 s, 203 / 202 MB, the same
  451,698 events.
- Alibaba 2017's whole table without speculation to 6 h on b4f69ca
  (``bench/results/ALI2017_none_6h_l.jsonl``, the FB-2010 replay beside it): peaks 450, 528,
  697 and **803 MB** at 1, 2, 4 and 6 h (814 at its stop, 6.07 h), against 808, 964, 1,395
  and 1,727 on (d)'s code b24374b (0.46x at 6 h); 811,890 events, CPU 110, 328, 743 and
  1,270 s. CPU here is not comparable with (d)'s log (60 s to 1 h): b24374b, rebuilt and run
  today to 1 h beside the new code, took 126 s against 115 s (peak 819 against 484 MB), so
  (d)'s figures came from a faster machine or a quieter one. RSS = 410 MB + 0.12 KB a live
  task (R^2 0.99) to 6 h, where (d) had 618 MB + 0.33 KB.
- Mantri bisects its stage's run times through the snapshot's ``memoryview``
  (``_Durations.sorted_view``) instead of a list of Python floats (4c715e6): the FB-2010 day
  with Mantri to 1.5 h (``bench_day.py --workload FB2010 --policy mantri --job-census 1.5``,
  4c715e6 against b4f69ca side by side, the other replays paused): the same state (379 live
  jobs, 683,118 tasks, 797,697 events), Mantri's run times 12.5 -> 2.6 MB (the list 10.0 MB
  for 311,748 floats), CPU 759 -> 727 s (0.96x: no list rebuilt at each refresh), sampled
  peak to 1.5 h 985 -> 981 MB. Mantri takes 3.5x LATE's CPU to that hour (727 against 206 s
  on b4f69ca's log, at about as many events; 255,317 copies).
- A lower threshold for making a big job's tasks when read (``LAZY_MIN_TASKS``), Alibaba 2017
  to 3 h, one run each: 1,024 tasks (the default) 638 MB / 428 s, 256 622 MB / 489 s, 64 624
  MB / 537 s (a replay beside each). About 2.5% less memory for 14-25% more CPU: left at 1,024.

Measured on 2026-11-30 (m):

- The FB-2010 day with LATE to 24 h on e226704 (``bench_day.py --workload FB2010 --policy
  late --until 24.05``, ``bench/results/FB2010_late_m.jsonl``; the engine as (l) left it, the
  local CI, the policy benchmarks and the kernel's memory monitor beside it): peaks 681, 837,
  1,019 and 1,153 MB at 1, 6, 12 and 24 h, 1,211 at its stop; peak(24 h) / peak(6 h) 1.38,
  as on (k); RSS = 391 MB + 56 B a live job's task + 1,436 B for each attempt of the most yet
  running (R^2 0.84); CPU 5,426 s to 24 h (5,637 on (k), both shared), 16,561,338 events,
  4,423,266 copies.
- The policies other than LATE (``bench/bench_policies.py``, ``bench/bench_mantri_scan.py``;
  each change against a copy of e226704's tree, the traces equal): Mantri's tick in C 0.42x
  the loop CPU on the FB-2010 day's first 300,000 events (285.3 -> 118.5 s), 0.60x on
  FB-2010's first quarter hour on 1,000 x 10; the slot schedulers read the waiting queue only
  as far as they launch (ESE 119.8 -> 32.1 s, SDA 109.3 -> 33.8, SCA 95.7 -> 26.2 on that
  quarter hour); Hopper sorts only the jobs with waiting tasks when it does not speculate
  (34.0 -> 22.3 s); Shed+ keeps each live job's t_min and reads a job's tasks in one call
  (57.8 -> 40.6 s).

Usage::

    python bench/bench_sim.py                      # all parts (needs the SWIM data; the
    #   FB-2010 day on 33,000 x 10 takes ~20 minutes of CPU and ~1.7 GB without speculation;
    #   --fb2010-hours 6 replays the first 6 hours' jobs)
    python bench/bench_sim.py --quick              # smaller part 1, FB-2009 first 6 hours
    python bench/bench_sim.py --skip-part1 --fb2010-hours 1 6   # two slices of FB-2010 only
    python bench/bench_sim.py --data-dir ../shared/data --out runs/bench_sim
    python bench/bench_sim.py --skip-part1 --skip-fb2009 --skip-fb2010 --ali2017-hours 0.25
    # CPU per event against checkout R, e.g. ../ref (FB-2010 0.05 h on --fb2010-nodes x 10;
    # the session logs above used --fb2010-nodes 1500):
    python bench/bench_sim.py --skip-part1 --skip-fb2009 --skip-fb2010 --ali2017-hours --peer-tree R

Writes ``summary.json`` and ``bench_sim.png`` into ``--out`` (default ``runs/bench_sim``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

_ROOT = Path(__file__).resolve().parents[1]  # the checkout this script belongs to


def _model(n: int, slots: int, dist: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    mean_service = 10.0
    load = 0.9
    arrivals = np.cumsum(rng.exponential(mean_service / (slots * load), n))
    if dist == "exponential":
        services = rng.exponential(mean_service, n)
    else:  # Pareto(alpha=2.2) with the same mean
        alpha = 2.2
        xm = mean_service * (alpha - 1) / alpha
        services = xm * (1.0 - rng.random(n)) ** (-1.0 / alpha)
    return arrivals, services


def run_simpy(arrivals, services, slots: int) -> tuple[np.ndarray, float, float]:
    """The peer: one SimPy process per job competing for a Resource of ``slots``."""
    import simpy

    env = simpy.Environment()
    pool = simpy.Resource(env, capacity=slots)
    done = np.empty(len(arrivals))

    def job(i: int):
        with pool.request() as req:
            yield req
            yield env.timeout(services[i])
        done[i] = env.now

    def source():
        last = 0.0
        for i, a in enumerate(arrivals):
            yield env.timeout(a - last)
            last = a
            env.process(job(i))

    t0, c0 = time.perf_counter(), time.process_time()
    env.process(source())
    env.run()
    return done, time.perf_counter() - t0, time.process_time() - c0


def run_engine(
    arrivals, services, slots, engine: str = "auto"
) -> tuple[np.ndarray, float, float, float, float, int]:
    import sim_bridge
    from sim_bridge import JobSpec, Workload

    # the job list is the input, as the arrays are for the SimPy peer: not timed
    jobs = [
        JobSpec(f"j{i}", float(a), [float(s)])
        for i, (a, s) in enumerate(zip(arrivals, services, strict=True))
    ]
    t0, c0 = time.perf_counter(), time.process_time()
    r = sim_bridge.simulate(
        [Workload("BENCH", jobs)],
        "none",
        "fifo",
        nodes=1,
        slots=slots,
        ideal=True,
        noise=False,
        skew=(0.0, 0.0),
        interference=0.0,
        record_counters=False,
        progress=False,
        engine=engine,
    )
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    done = r.jobs.set_index("job_id").loc[[f"j{i}" for i in range(len(arrivals))], "finish_time"]
    s = r.summary
    return (
        done.to_numpy(),
        wall,
        cpu,
        s["engine_seconds"],
        s["engine_cpu_seconds"],
        s["events"],
    )


def _keep_min(best: dict[str, float], key: str, value: float) -> None:
    best[key] = min(best.get(key, np.inf), value)


def part1(n: int, slots: int, repeats: int) -> list[dict]:
    rows = []
    for dist in ("exponential", "pareto"):
        arrivals, services = _model(n, slots, dist, seed=1)
        best: dict[str, float] = {}
        keep = partial(_keep_min, best)

        same = True
        max_diff = 0.0
        for _ in range(repeats):
            d_simpy, w_simpy, c_simpy = run_simpy(arrivals, services, slots)
            keep("simpy", w_simpy)
            keep("simpy_cpu", c_simpy)
            for engine in ("compiled", "python"):
                d, wall, cpu, w_loop, c_loop, events = run_engine(arrivals, services, slots, engine)
                same &= bool(np.allclose(d_simpy, d, rtol=1e-12, atol=1e-9))
                max_diff = max(max_diff, float(np.max(np.abs(d_simpy - d))))
                keep(f"{engine}", wall)
                keep(f"{engine}_cpu", cpu)
                keep(f"{engine}_loop", w_loop)
                keep(f"{engine}_loop_cpu", c_loop)
        model_events = 2 * n
        row: dict = {
            "dist": dist,
            "jobs": n,
            "slots": slots,
            "same_completion_times": same,
            "max_abs_diff": max_diff,
            "engine_heap_events": int(events),
            "simpy_events_per_s": model_events / best["simpy"],
        }
        for key, value in best.items():
            row[f"{key}_s"] = value
        for engine in ("compiled", "python"):
            for part in ("", "_loop"):
                row[f"{engine}{part}_events_per_s"] = model_events / best[f"{engine}{part}"]
                row[f"ratio_{engine}{part}"] = best["simpy"] / best[f"{engine}{part}"]
                row[f"ratio_cpu_{engine}{part}"] = best["simpy_cpu"] / best[f"{engine}{part}_cpu"]
        rows.append(row)
        print(
            f"[{dist:11s}] {n} jobs, {slots} slots, same results {same}. Model events per "
            f"second: SimPy {row['simpy_events_per_s']:,.0f}; compiled loop "
            f"{row['compiled_loop_events_per_s']:,.0f} ({row['ratio_compiled_loop']:.1f}x, CPU "
            f"{row['ratio_cpu_compiled_loop']:.1f}x), simulate() end to end "
            f"{row['compiled_events_per_s']:,.0f} ({row['ratio_compiled']:.1f}x, CPU "
            f"{row['ratio_cpu_compiled']:.1f}x); general Python loop "
            f"{row['python_loop_events_per_s']:,.0f} ({row['ratio_python_loop']:.2f}x, CPU "
            f"{row['ratio_cpu_python_loop']:.2f}x), end to end "
            f"{row['python_events_per_s']:,.0f} ({row['ratio_python']:.2f}x)",
            flush=True,
        )
    return rows


_CHILD = """
import json, resource, sys, time
t0, c0 = time.perf_counter(), time.process_time()

def rss_mb():
    with open("/proc/self/status") as f:
        return next(int(x.split()[1]) / 1024 for x in f if x.startswith("VmRSS"))

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

import sim_bridge
# a streamed run takes the allocator settings ``straggler simulate --stream`` takes (the
# default-allocator peer: lean=False)
lean = sim_bridge.lean_allocators() if {lean} else None
budget = {{"import_rss_mb": rss_mb(), "lean_allocators": lean}}
draw = sim_bridge.world.PersistentLevels.block

def first_block(self, *args, **kw):
    out = draw(self, *args, **kw)
    if "block_rss_mb" not in budget:
        budget.update(block_rss_mb=rss_mb(), block_peak_rss_mb=peak_mb())
    return out

sim_bridge.world.PersistentLevels.block = first_block
# checkpoints: the figures when the simulated clock first passes each of CHECK hours (a
# sampler thread reads the running simulator every second; the loop is not touched)
import threading
from sim_bridge import _engine
CHECK = [h for h in (1.0, 6.0, 24.0) if {hours} is None or h <= {hours}]
box, marks = {{}}, []
_run = _engine.Simulator.run

def _capture(self, *a, **k):
    box["sim"] = self
    return _run(self, *a, **k)

_engine.Simulator.run = _capture

def _sample():
    while CHECK:
        time.sleep(1.0)
        s = box.get("sim")
        if s is not None and s.now >= CHECK[0] * 3600.0:
            marks.append({{"sim_hours": CHECK.pop(0), "wall_s": time.perf_counter() - t0,
                "cpu_s": time.process_time() - c0, "events": s.events, "jobs_arrived": s.n_arrived,
                "jobs_live": len(s._active), "rss_mb": rss_mb(), "peak_rss_mb": peak_mb()}})

threading.Thread(target=_sample, daemon=True).start()
kw = {{}}
if {stream}:
    kw["trace_sink"] = {sink!r}
r = sim_bridge.simulate({workload!r}, {policy!r}, {placement!r}, nodes={nodes}, slots={slots},
                        hours={hours}, seed=0, data_dir={data_dir!r}, progress=False, **kw)
s = r.summary
print(json.dumps({{"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
    "simulate_s": s["wall_seconds"], "engine_s": s["engine_seconds"],
    "engine_cpu_s": s["engine_cpu_seconds"], "events": s["events"], "jobs": s["jobs"],
    "tasks": s["tasks"], "attempts": s["attempts"], "copies": s["copies"],
    "p99_jct": s["p99_jct"], "straggler_share": s["straggler_share"],
    "load": s["task_seconds"] / ({nodes} * {slots} * s["makespan"]),
    "complete": s["complete"], "workload_source": s["workload_sources"][0],
    "peak_rss_mb": peak_mb(), "checkpoints": marks, **budget}}))
"""


def run_case(
    data_dir: str,
    workload: str,
    policy: str,
    placement: str,
    nodes: int,
    slots: int,
    hours: float | None,
    stream: bool,
    scratch: Path,
    keep_paths: bool = False,
    tree: str | None = None,
    lean: bool | None = None,
) -> dict:
    """One replay in a fresh subprocess (its own peak RSS); the child's figures.
    ``keep_paths``: the cluster keeps every contention-path step (``$STRAGGLER_KEEP_PATHS``,
    the peer of the sliding window). ``tree``: import ``sim_bridge`` from that checkout
    (``PYTHONPATH``, working directory) instead of this script's. ``lean``: call
    :func:`sim_bridge.lean_allocators` first, as ``straggler simulate --stream`` does
    (default: for streamed runs; a peer checkout without it never does)."""
    if lean is None:
        lean = stream and tree is None
    sink = str(scratch / f"{workload}_{policy}_{hours}.parquet")
    case = dict(
        workload=workload,
        policy=policy,
        placement=placement,
        nodes=nodes,
        slots=slots,
        hours=hours,
        stream=stream,
    )
    code = _CHILD.format(**case, data_dir=data_dir, sink=sink, lean=lean)
    env = dict(os.environ, TQDM_DISABLE="1")
    env.pop("STRAGGLER_KEEP_PATHS", None)
    if keep_paths:
        env["STRAGGLER_KEEP_PATHS"] = "1"
    case["keep_paths"] = keep_paths
    case["lean"] = lean
    root = str(Path(tree).resolve()) if tree else str(_ROOT)
    env["PYTHONPATH"] = root
    case["tree"] = root
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        check=False,
    )
    Path(sink).unlink(missing_ok=True)
    if res.returncode != 0:
        raise RuntimeError(f"{workload} {policy} {hours} h run failed:\n{res.stderr}")
    row = json.loads(res.stdout.strip().splitlines()[-1])
    row.update(case)
    span = "day" if hours is None else f"{hours:g} h"
    mode = ("streaming, all paths kept" if keep_paths else "streaming") if stream else "in-memory"
    if stream and not lean:
        mode += ", default allocators"
    if tree:
        mode += f", peer {root}"
    print(
        f"[{workload} {span}, {policy}, {mode}] {nodes} nodes "
        f"x {slots} slots, {placement}: {row['jobs']} jobs, {row['tasks']:,} tasks, "
        f"{row['attempts']:,} attempts, load {row['load']:.2f}; wall {row['wall_s']:.1f} s, "
        f"CPU {row['cpu_s']:.1f} s (engine loop {row['engine_s']:.1f} s), {row['events']:,} "
        f"events, peak RSS {row['peak_rss_mb']:.0f} MB (source {row['workload_source']})",
        flush=True,
    )
    if "block_rss_mb" in row:  # the budget: the import, then the first contention day-block
        print(
            f"    RSS after import sim_bridge {row['import_rss_mb']:.0f} MB; after the first "
            f"day-block of contention {row['block_rss_mb']:.0f} MB (peak so far "
            f"{row['block_peak_rss_mb']:.0f} MB)",
            flush=True,
        )
    for m in row.get("checkpoints", []):  # the same run when its clock passed 1, 6, 24 h
        print(
            f"    at {m['sim_hours']:g} simulated h: wall {m['wall_s']:.0f} s, CPU "
            f"{m['cpu_s']:.0f} s, {m['events']:,} events, {m['jobs_arrived']:,} jobs arrived, "
            f"{m['jobs_live']:,} live, RSS {m['rss_mb']:.0f} MB (peak {m['peak_rss_mb']:.0f})",
            flush=True,
        )
    return row


def part2(data_dir: str, hours: float | None, scratch: Path) -> dict:
    """The FB-2009 day with LATE: streaming against the in-memory peer, the sliding path
    window against the streaming run that keeps every path step (before/after), and the
    window's peak RSS at 24 h over 6 h (flatness)."""
    case = partial(run_case, data_dir, "FB2009", "late", "fifo", 600, 2)
    rows = {
        "in_memory": case(hours, False, scratch),
        "stream_keep_paths": case(hours, True, scratch, keep_paths=True),
        "stream_default_allocators": case(hours, True, scratch, lean=False),
        "stream": case(hours, True, scratch),
    }
    keys = ("wall_s", "cpu_s", "peak_rss_mb")
    ratio = {k: rows["stream"][k] / rows["in_memory"][k] for k in keys}
    window = {k: rows["stream"][k] / rows["stream_keep_paths"][k] for k in keys}
    lean = {k: rows["stream"][k] / rows["stream_default_allocators"][k] for k in keys}
    print(
        f"[FB-2009] streaming / in-memory: wall {ratio['wall_s']:.2f}x, CPU "
        f"{ratio['cpu_s']:.2f}x, peak RSS {ratio['peak_rss_mb']:.2f}x; path window / all paths "
        f"kept: CPU {window['cpu_s']:.2f}x, peak RSS {window['peak_rss_mb']:.2f}x "
        f"({rows['stream_keep_paths']['peak_rss_mb']:.0f} -> {rows['stream']['peak_rss_mb']:.0f}"
        " MB; goal under 300 MB)",
        flush=True,
    )
    print(
        f"[FB-2009] lean allocators / default (both streamed): CPU {lean['cpu_s']:.2f}x, peak "
        f"RSS {lean['peak_rss_mb']:.2f}x ({rows['stream_default_allocators']['peak_rss_mb']:.0f} "
        f"-> {rows['stream']['peak_rss_mb']:.0f} MB)",
        flush=True,
    )
    out = {
        **rows,
        "ratio_stream_over_in_memory": ratio,
        "ratio_window_over_keep_paths": window,
        "ratio_lean_over_default_allocators": lean,
    }
    if hours is None or hours > 6.0:
        six = out["stream_6h"] = case(6.0, True, scratch)
        flat = out["rss_day_over_6h"] = rows["stream"]["peak_rss_mb"] / six["peak_rss_mb"]
        print(f"[FB-2009] streaming peak RSS day / 6 h = {flat:.2f} (goal <= 1.2)", flush=True)
    return out


def part3(
    data_dir: str,
    hours: list[float],
    policies: list[str],
    nodes: int,
    slots: int,
    scratch: Path,
    workload: str = "FB2010",
) -> dict:
    """A big replay (FB-2010; part 4: Alibaba 2017 at full scale) streamed at several
    horizons, with each policy; memory flatness 24 h / 6 h: the peaks of separate 6 and 24 h
    runs, or of one run's marks when its clock passed 6 and 24 h (the 24 h run's own)."""
    out: dict = {"workload": workload, "nodes": nodes, "slots": slots, "runs": []}
    for policy in policies:
        by_h = {}
        for h in hours:
            row = run_case(data_dir, workload, policy, "fair", nodes, slots, h, True, scratch)
            out["runs"].append(row)
            by_h[h] = row
        marks = {m["sim_hours"]: m for m in by_h.get(24.0, {}).get("checkpoints", [])}
        six = by_h[6.0]["peak_rss_mb"] if 6.0 in by_h else marks.get(6.0, {}).get("peak_rss_mb")
        if six and 24.0 in marks:
            flat = marks[24.0]["peak_rss_mb"] / six
            out[f"rss_24h_over_6h_{policy}"] = flat
            print(
                f"[{workload} {policy}] peak RSS when the clock passed 24 h / 6 h = {flat:.2f} "
                "(goal <= 1.2)"
            )
        if 24.0 in by_h and policy == "late":
            r = by_h[24.0]
            print(
                f"[{workload} day, LATE] CPU {r['cpu_s'] / 60:.1f} min (goal < 10), peak RSS "
                f"{r['peak_rss_mb'] / 1024:.2f} GB (goal < 4), load {r['load']:.2f} (<= 0.8)"
            )
    return out


def per_event(
    data_dir: str,
    hours: float,
    policies: list[str],
    nodes: int,
    slots: int,
    peer: str,
    repeat: int,
    scratch: Path,
    day_tasks: float = 16.6e6,
) -> dict:
    """The general loop's CPU per event on a big FB-2010 slice, this checkout against a named
    peer checkout (``peer``, e.g. the start commit's), the two interleaved ``repeat`` times
    (the best of each: the machine may be loaded); the ratio this / peer and the day
    extrapolated at this per-event cost (``day_tasks`` tasks, this slice's events per task)."""
    out: dict = {"nodes": nodes, "slots": slots, "hours": hours, "peer": peer, "rows": []}
    for policy in policies:
        best: dict[str, float] = {}
        for _ in range(repeat):
            for who, tree in (("peer", peer), ("this", None)):
                row = run_case(
                    data_dir,
                    "FB2010",
                    policy,
                    "fair",
                    nodes,
                    slots,
                    hours,
                    True,
                    scratch,
                    tree=tree,
                    lean=False,  # the same allocators on both sides
                )
                row["who"] = who
                out["rows"].append(row)
                _keep_min(best, who, row["engine_cpu_s"] / row["events"])
                events_per_task = row["events"] / row["tasks"]
        ratio = best["this"] / best["peer"]
        day_min = best["this"] * events_per_task * day_tasks / 60.0
        out[policy] = {**best, "ratio": ratio, "day_cpu_min": day_min}
        print(
            f"[FB-2010 {hours:g} h, {policy}, {nodes} x {slots}] engine CPU per event: this "
            f"{best['this'] * 1e3:.3f} ms, peer {best['peer'] * 1e3:.3f} ms, this / peer "
            f"{ratio:.2f}; the day ({day_tasks:,.0f} tasks) at this cost ~{day_min:.0f} min "
            "CPU (goal < 10 with LATE)",
            flush=True,
        )
    return out


def _plot(rows: list[dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.8))
    x = np.arange(len(rows))
    bars = [
        ("simpy_events_per_s", "SimPy"),
        ("compiled_loop_events_per_s", "compiled loop"),
        ("compiled_events_per_s", "simulate() end to end"),
        ("python_loop_events_per_s", "general Python loop"),
    ]
    w = 0.8 / len(bars)
    for k, (key, label) in enumerate(bars):
        ax.bar(x + (k - (len(bars) - 1) / 2) * w, [r[key] for r in rows], w, label=label)
    ax.set_xticks(x, [r["dist"] for r in rows])
    ax.set_ylabel("model events per second")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.set_title("FIFO slot pool, same arrivals and services")
    fig.tight_layout()
    fig.savefig(out / "bench_sim.png", dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small part 1, 6 hours of FB-2009")
    ap.add_argument("--jobs", type=int, default=None, help="jobs in part 1 (default 200,000)")
    ap.add_argument("--slots", type=int, default=16, help="slots in part 1 (16)")
    ap.add_argument("--data-dir", default=None, help="data directory holding swim/")
    ap.add_argument("--skip-fb", action="store_true", help="part 1 only")
    ap.add_argument("--skip-part1", action="store_true", help="the replays only")
    ap.add_argument("--skip-fb2010", action="store_true", help="no FB-2010 part")
    ap.add_argument(
        "--fb2010-hours",
        type=float,
        nargs="+",
        default=[24.0],
        help="FB-2010 horizons (24: the day, its figures at 1, 6 and 24 h marked on the way)",
    )
    ap.add_argument("--fb2010-policies", nargs="+", default=["late", "none"], help="(late none)")
    ap.add_argument(
        "--fb2010-nodes",
        type=int,
        default=33_000,
        help="FB-2010 nodes (33,000: sized for the day's busiest hour, see the module doc)",
    )
    ap.add_argument("--fb2010-slots", type=int, default=10, help="FB-2010 slots per node (10)")
    ap.add_argument("--skip-fb2009", action="store_true", help="no FB-2009 day (part 2)")
    ap.add_argument(
        "--ali2017-hours",
        type=float,
        nargs="*",
        default=[0.25],
        help="Alibaba 2017 horizons at full scale (0.25; none: no part 4)",
    )
    ap.add_argument("--ali2017-policies", nargs="+", default=["late", "none"], help="(late none)")
    ap.add_argument("--ali2017-nodes", type=int, default=1300, help="Alibaba 2017 nodes (1300)")
    ap.add_argument(
        "--ali2017-slots", type=int, default=176, help="Alibaba 2017 slots per node (176)"
    )
    ap.add_argument(
        "--peer-tree",
        default=None,
        help="a checkout to compare the FB-2010 per-event CPU with (e.g. the start commit's)",
    )
    ap.add_argument(
        "--peer-hours", type=float, default=0.05, help="FB-2010 hours of the comparison (0.05)"
    )
    ap.add_argument("--repeat", type=int, default=2, help="runs of each side (2)")
    ap.add_argument("--out", default="runs/bench_sim")
    args = ap.parse_args(argv)
    n = args.jobs or (20_000 if args.quick else 200_000)
    out = Path(args.out).resolve()  # children run in --peer-tree: an absolute scratch path
    out.mkdir(parents=True, exist_ok=True)
    summary: dict = {"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]}}
    if not args.skip_part1:
        summary["simpy_vs_engine"] = part1(n, args.slots, repeats=1 if n >= 100_000 else 3)
    if not args.skip_fb:
        import sim_bridge

        data_dir = str(sim_bridge.resolve_data_dir(args.data_dir))
        if not args.skip_fb2009:
            summary["fb2009"] = part2(data_dir, 6.0 if args.quick else None, out)
        if args.peer_tree:
            summary["fb2010_per_event"] = per_event(
                data_dir,
                args.peer_hours,
                args.fb2010_policies,
                args.fb2010_nodes,
                args.fb2010_slots,
                args.peer_tree,
                args.repeat,
                out,
            )
        if not args.skip_fb2010:
            hours = [1.0] if args.quick else args.fb2010_hours
            summary["fb2010"] = part3(
                data_dir, hours, args.fb2010_policies, args.fb2010_nodes, args.fb2010_slots, out
            )
        if args.ali2017_hours and not args.quick:
            summary["ali2017"] = part3(
                data_dir,
                args.ali2017_hours,
                args.ali2017_policies,
                args.ali2017_nodes,
                args.ali2017_slots,
                out,
                workload="ALI2017",
            )
    summary["bench_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    wrote = [f"{out}/summary.json"]
    if "simpy_vs_engine" in summary:  # the plot is part 1's
        _plot(summary["simpy_vs_engine"], out)
        wrote.append("bench_sim.png")
    print("wrote " + " and ".join(wrote))
    return 0


if __name__ == "__main__":
    sys.exit(main())
