set terminal pngcairo size 1200,600 noenhanced font ',10'
set datafile missing '-'
set key outside right top
set grid ytics
set output '/tmp/rxc/vs2/plots/digest-vs-spdk-bars.png'
set title 'digest-vs-spdk: IOPS (k) (median)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set yrange [0:*]
set xtics rotate by -30
set ylabel 'IOPS (k)'
plot for [i=2:4] '/tmp/rxc/vs2/plots/digest-vs-spdk-bars.dat' using i:xtic(1) title columnheader(i)
reset
set terminal pngcairo size 1200,600 noenhanced font ',10'
set datafile missing '-'
set key outside right top
set grid
set logscale y
set output '/tmp/rxc/vs2/plots/digest-vs-spdk-latency.png'
set title 'digest-vs-spdk: latency percentiles (median over runs)'
set ylabel 'latency (us)'
set xlabel 'percentile'
plot for [i=2:9] '/tmp/rxc/vs2/plots/digest-vs-spdk-latency.dat' using 0:i:xtic(1) with linespoints title columnheader(i)
