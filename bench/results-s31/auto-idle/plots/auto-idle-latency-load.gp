set terminal pngcairo size 1000,600 noenhanced font ',10'
set datafile missing '-'
set key outside right top
set grid
set logscale y
set output '/tmp/rxc/idle/plots/auto-idle-latency-load.png'
set title 'auto-idle: latency vs offered load (open loop, median over rounds)'
set xlabel 'offered load (IOPS, nvmf-perf --rate)'
set ylabel 'latency (us)'
plot for [i=2:7] '/tmp/rxc/idle/plots/auto-idle-latency-load.dat' using 1:i with linespoints title columnheader(i)
