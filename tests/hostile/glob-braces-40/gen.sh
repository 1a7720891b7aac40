awk 'BEGIN{s=""; for(i=0;i<40;i++) s=s "{a,b}"; printf "version: 5\nhierarchy:\n  - name: g\n    glob: \"%s.yaml\"\n", s}' > hiera.yaml
