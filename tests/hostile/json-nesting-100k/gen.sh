awk 'BEGIN{s="{\"k\": "; for(i=0;i<100000;i++) s=s "["; print s}' > data/common.json
