awk 'BEGIN{print "k:"; for(i=0;i<300000;i++) printf "  key%07d: {v: value-a-%d, w: [1, 2]}\n", i, i}' > data/a.yaml
awk 'BEGIN{print "k:"; for(i=0;i<300000;i++) printf "  key%07d: {v: value-b-%d, x: [3]}\n", i, i}' > data/b.yaml
