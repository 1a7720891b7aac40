# x1 = {a: {a: … ${x0} …}} 100 deep, x2 the same around ${x1} … 100 times: a value 10,000 deep.
awk 'BEGIN{print "x0 = 1"; for(k=1;k<=100;k++){s=""; e=""; for(d=0;d<100;d++){s=s "{a: "; e=e " }"} printf "x%d = %s${x%d}%s\n", k, s, k-1, e} print "k = 1"}' > data/common.conf
