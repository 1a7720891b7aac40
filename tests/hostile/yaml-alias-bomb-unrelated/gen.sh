awk 'BEGIN{print "l0: &l0 [x]"; for(i=1;i<=40;i++) printf "l%d: &l%d [*l%d, *l%d]\n", i, i, i-1, i-1; print "k: 1"}' > data/common.yaml
