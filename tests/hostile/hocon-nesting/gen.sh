awk 'BEGIN{s="k = "; for(i=0;i<100000;i++) s=s "{a:"; print s}' > data/common.conf
