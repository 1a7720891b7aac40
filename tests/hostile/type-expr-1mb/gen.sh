awk 'BEGIN{s="Integer["; for(i=0;i<100000;i++) s=s "aaaaaaaaaa"; print s "]"}' > type.txt
echo 'k: v' > data/common.yaml
