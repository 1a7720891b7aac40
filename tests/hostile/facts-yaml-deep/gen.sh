awk 'BEGIN{s="a: "; for(i=0;i<100000;i++) s=s "["; for(i=0;i<100000;i++) s=s "]"; print s}' > deep.yaml
