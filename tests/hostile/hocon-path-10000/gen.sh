awk 'BEGIN{s="a"; for(i=0;i<10000;i++) s=s ".b"; print s " = 1"; print "k = 2"}' > data/common.conf
