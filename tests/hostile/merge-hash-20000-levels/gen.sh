awk 'BEGIN{print "version: 5"; print "hierarchy:"; for(i=0;i<20000;i++) printf "  - name: l%d\n    path: l%d.yaml\n", i, i}' > hiera.yaml

awk 'BEGIN{for(i=0;i<20000;i++) { f="data/l" i ".yaml"; printf "k: {a%d: [%d]}\n", i, i > f; close(f) }}'
