# bench.gp: bench.sh's chart, requests per second of every server for each
# test, -P 1 on the left and -P 16 on the right (their scales differ by ten
# times). bench.sh sets, with -e:
#   p1, p16   the tables: a line of column names ("test" and the servers),
#             then a row per test with each server's median requests/s
#   out       the SVG to write
#   nservers  the number of servers (columns after the test's name)
#   machine   one line saying what the figures were measured on
#
# A fixed size and font and no date of its own: the same tables give the
# same file.

set terminal svg size 1100,520 font "DejaVu Sans,12" noenhanced background rgb "white"
set output out
set datafile missing "?"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border rgb "#333333"
set xtics nomirror scale 0
set ytics nomirror
set grid ytics lc rgb "#dddddd"
set border 3
set key outside bottom center horizontal samplen 1.5 width 1
set linetype 1 lc rgb "#4e79a7"
set linetype 2 lc rgb "#f28e2b"
set linetype 3 lc rgb "#76b7b2"
set linetype 4 lc rgb "#e15759"
set format y "%.0f"
set yrange [0:*]
set ylabel "requests/s (median of the rounds)"

set multiplot layout 1,2 title "redis-benchmark, 50 clients: requests per second\n".machine
set title "-P 1: one request per round trip"
plot for [i=2:nservers+1] p1 using i:xtic(1) title columnheader(i) lt i-1
set title "-P 16: sixteen requests per round trip"
plot for [i=2:nservers+1] p16 using i:xtic(1) title columnheader(i) lt i-1
unset multiplot
