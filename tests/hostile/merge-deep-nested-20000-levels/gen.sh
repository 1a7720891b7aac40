awk 'BEGIN{print "version: 5"; print "hierarchy:"; for(i=0;i<20000;i++) printf "  - name: l%d\n    path: l%d.yaml\n", i, i}' > hiera.yaml
awk 'BEGIN{for(i=0;i<20000;i++) { f="data/l" i ".yaml"; printf "k: {a: {b: {c%d: %d}, l: [%d, %d]}}\n", i, i, i % 2, i > f; close(f) }}'
