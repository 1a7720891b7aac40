awk 'BEGIN{s="Array[Strin"; for(i=0;i<100000;i++) s=s "gggggggggg"; print s}' > type.txt
echo 'k: v' > data/common.yaml
