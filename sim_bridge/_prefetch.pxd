# A hint to the CPU to start loading the line at an address into its caches, shared by the
# compiled extensions (inline, nothing to link). In assembly, not GCC's __builtin_prefetch:
# with the builtin, GCC 12 at Python's flags (-O2 -DNDEBUG) made the scans' hints no faster
# than none (570 ns an attempt in bench/bench_prefetch.py's loop against 450 without hints
# and 200-250 with these), and a first version whose priming loop indexed before a list's
# start emitted no prefetch instruction at all (objdump). The address is passed in a register,
# so the compiler assumes nothing about what it points to: it may be NULL or past an array's
# end (a prefetch never faults). Elsewhere than x86 and arm64 with GCC or Clang it is nothing.
cdef extern from *:
    """
    #if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    #define straggler_prefetch(p) __asm__ volatile("prefetcht0 (%0)" :: "r"((const void*)(p)))
    #elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
    #define straggler_prefetch(p) __asm__ volatile("prfm pldl1keep, [%0]" :: "r"((const void*)(p)))
    #else
    #define straggler_prefetch(p) ((void)(p))
    #endif
    """
    void prefetch "straggler_prefetch"(const void* p) noexcept nogil
