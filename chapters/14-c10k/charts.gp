# charts.gp: the chapter's charts, drawn by gnuplot from the tables that
# charts.sh makes out of the CSVs. charts.sh sets, with -e:
#   dir       the folder of the tables (requests.dat, p99.dat, cpu.dat,
#             syscalls.dat, memory.dat) and of the SVGs it writes
#   npoints   the number of columns of values in requests.dat and p99.dat
#   machine   one line saying what bench.sh's figures were measured on
#   nservers  the number of servers (rows) in requests.dat
#   memline   the same for c10k.sh's, in memory.dat (nmem rows)
#   conns     the connection count of c10k.sh's run
#   at50      1 when the bench CSV has the point at 50 connections, 128
#             bytes, which cpu.svg and syscalls.svg show (else they are not drawn)
#
# Every SVG is written with a fixed size and font and no date, so the same
# tables always give the same files (a test renders them again and compares).

set terminal svg size 960,540 font "DejaVu Sans,12" noenhanced background rgb "white"
set datafile missing "?"
set key autotitle columnheader # every table starts with a line of column names
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border rgb "#333333"
set xtics rotate by 35 right nomirror scale 0
set ytics nomirror
set grid ytics lc rgb "#dddddd"
set border 3
set key at graph 0.5, graph 1.01 center bottom horizontal Left reverse samplen 1.5 width 2
set tmargin 6.5
set bmargin 7.5
set lmargin 11
set linetype 1 lc rgb "#4e79a7"
set linetype 2 lc rgb "#f28e2b"
set linetype 3 lc rgb "#e15759"
set linetype 4 lc rgb "#76b7b2"
set linetype 5 lc rgb "#59a14f"

set xrange [-0.6:nservers - 0.4]

set output dir."/requests.svg"
set title "Requests per second, one message in flight per connection (median of the runs)\n".machine offset 0,1.6
set ylabel "requests/s"
set format y "%.0f"
set yrange [0:*]
plot for [i=2:npoints+1] dir."/requests.dat" using i:xtic(1) title columnheader(i) lt i-1

set output dir."/p99.svg"
set title "99th percentile latency (median of the runs; log scale)\n".machine offset 0,1.6
set ylabel "p99 latency (microseconds)"
set logscale y
set yrange [*:*]
set format y "%g"
plot for [i=2:npoints+1] dir."/p99.dat" using i:xtic(1) title columnheader(i) lt i-1
unset logscale y

if (at50) {
    set output dir."/cpu.svg"
    set title "The server's CPU time per message, 50 connections x 128 bytes (median of the runs)\n".machine offset 0,1.6
    set ylabel "microseconds per message"
    set style histogram rowstacked
    set boxwidth 0.6 relative
    set yrange [0:*]
    set format y "%.0f"
    plot dir."/cpu.dat" using 2:xtic(1) title "system (the kernel: TCP, the wait calls)" lt 1, \
         "" using 3 title "user (the server's own code)" lt 2
    set style histogram clustered gap 1
    set boxwidth 0.9 relative

    set output dir."/syscalls.svg"
    set title "System calls per echoed message, 50 connections x 200 messages (strace -f -c; log scale)\n".machine offset 0,1.6
    set ylabel "system calls per message"
    set logscale y
    set yrange [0.01:10]
    set format y "%g"
    plot dir."/syscalls.dat" using 2:xtic(1) title "system calls per message" lt 1, \
         0.1 with lines lw 2 dt 2 lc rgb "#e15759" title "target for the best io_uring server: 0.1"
    unset logscale y
}

set output dir."/memory.svg"
set title "Memory per idle connection, ".conns." connections held (log scale)\n".memline offset 0,1.6
set xrange [-0.6:nmem - 0.4]
set ylabel "bytes per connection"
set logscale y
set yrange [10:200000]
set format y "%g"
plot dir."/memory.dat" using 2:xtic(1) title "the server's resident memory (VmRSS)" lt 1, \
     "" using 3 title "kernel stacks of its threads (KernelStack)" lt 2, \
     4096 with lines lw 2 dt 2 lc rgb "#e15759" title "target for event-driven servers: 4 KiB"
