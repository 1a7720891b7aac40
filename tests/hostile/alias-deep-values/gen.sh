awk 'BEGIN{for(k=0;k<5;k++){ s="a" k ": "; for(i=0;i<1000;i++) s=s "["; s=s "\"%{alias(\x27a" (k+1) "\x27)}\""; for(i=0;i<1000;i++) s=s "]"; print s }; print "a5: end"}' > data/common.yaml
