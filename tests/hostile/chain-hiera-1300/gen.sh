awk -v m=hiera 'BEGIN{n=1300; for(i=0;i<n;i++) printf "k%d: \"%%{%s(\x27k%d\x27)}\"\n", i, m, i+1; print "k" n ": end"}' > data/common.yaml
