set arrow from 0.21, graph 0 to 0.21, graph 1 nohead dt 2 lc rgb '#999999'
set label 'qd1' at 0.21, graph 1.04 font ',8'
set arrow from 5.74, graph 0 to 5.74, graph 1 nohead dt 2 lc rgb '#999999'
set label 'qd32' at 5.74, graph 1.04 font ',8'
set arrow from 8.71, graph 0 to 8.71, graph 1 nohead dt 2 lc rgb '#999999'
set label 'gap1' at 8.71, graph 1.04 font ',8'
set arrow from 11.14, graph 0 to 11.14, graph 1 nohead dt 2 lc rgb '#999999'
set label 'qd32-load' at 11.14, graph 1.04 font ',8'
set arrow from 15.42, graph 0 to 15.42, graph 1 nohead dt 2 lc rgb '#999999'
set label 'qd1-load' at 15.42, graph 1.04 font ',8'
set arrow from 19.56, graph 0 to 19.56, graph 1 nohead dt 2 lc rgb '#999999'
set label 'gap2' at 19.56, graph 1.04 font ',8'
set arrow from 21.60, graph 0 to 21.60, graph 1 nohead dt 2 lc rgb '#999999'
set label 'qd1-end' at 21.60, graph 1.04 font ',8'
set terminal pngcairo size 1200,700
set output 'bench/results-auto/phases/mode-over-time.png'
set datafile separator ','
set multiplot layout 3,1 title 'auto, round 1: placement and idle-poll period per queue (colour = queue), nvmfd CPU'
set ylabel 'placement'
set yrange [-0.5:2.5]
set ytics ('bound' 0, 'moved' 1, 'unbound' 2)
set key off
plot 'bench/results-auto/phases/timeline-auto-r1.csv' using 1:(strcol(4) eq 'bound' ? 0 : strcol(4) eq 'moved' ? 1 : strcol(4) eq 'unbound' ? 2 : 1/0):3 with points pt 7 ps 0.6 lc variable
set ylabel 'idle poll (us)'
set yrange [-10:250]
set ytics auto
plot 'bench/results-auto/phases/timeline-auto-r1.csv' using 1:5:3 with points pt 7 ps 0.6 lc variable
set ylabel 'nvmfd CPU (%)'
set yrange [0:*]
set xlabel 'time (s)'
plot 'bench/results-auto/phases/timeline-auto-r1.csv' using 1:7 with lines lc rgb '#444444'
unset multiplot
