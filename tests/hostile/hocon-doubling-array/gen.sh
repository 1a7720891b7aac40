awk 'BEGIN{print "x0 = [1]"; for(i=1;i<=40;i++) printf "x%d = [${x%d}, ${x%d}]\n", i, i-1, i-1; print "k = 1"}' > data/common.conf
