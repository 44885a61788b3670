set arrow from 0.20, graph 0 to 0.20, graph 1 nohead dt 2 lc rgb '#999999'
set label 'qd1' at 0.20, graph 1.04 font ',8'
set arrow from 3.02, graph 0 to 3.02, graph 1 nohead dt 2 lc rgb '#999999'
set label 'qd32' at 3.02, graph 1.04 font ',8'
set arrow from 6.05, graph 0 to 6.05, graph 1 nohead dt 2 lc rgb '#999999'
set label 'gap1' at 6.05, graph 1.04 font ',8'
set arrow from 8.07, graph 0 to 8.07, graph 1 nohead dt 2 lc rgb '#999999'
set label 'qd32-load' at 8.07, graph 1.04 font ',8'
set arrow from 12.11, graph 0 to 12.11, graph 1 nohead dt 2 lc rgb '#999999'
set label 'qd1-load' at 12.11, graph 1.04 font ',8'
set arrow from 16.15, graph 0 to 16.15, graph 1 nohead dt 2 lc rgb '#999999'
set label 'gap2' at 16.15, graph 1.04 font ',8'
set arrow from 18.17, graph 0 to 18.17, graph 1 nohead dt 2 lc rgb '#999999'
set label 'qd1-end' at 18.17, graph 1.04 font ',8'
set terminal pngcairo size 1200,700
set output '/tmp/phases-s27b/mode-over-time.png'
set datafile separator ','
set multiplot layout 3,1 title 'auto, round 1: placement and idle-poll period per queue (colour = queue), nvmfd CPU'
set ylabel 'placement'
set yrange [-0.5:2.5]
set ytics ('bound' 0, 'moved' 1, 'unbound' 2)
set key off
plot '/tmp/phases-s27b/timeline-auto-r1.csv' using 1:(strcol(4) eq 'bound' ? 0 : strcol(4) eq 'moved' ? 1 : strcol(4) eq 'unbound' ? 2 : 1/0):3 with points pt 7 ps 0.6 lc variable
set ylabel 'idle poll (us)'
set yrange [-10:250]
set ytics auto
plot '/tmp/phases-s27b/timeline-auto-r1.csv' using 1:5:3 with points pt 7 ps 0.6 lc variable
set ylabel 'nvmfd CPU (%)'
set yrange [0:*]
set xlabel 'time (s)'
plot '/tmp/phases-s27b/timeline-auto-r1.csv' using 1:7 with lines lc rgb '#444444'
unset multiplot
