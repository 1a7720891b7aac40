awk 'BEGIN{for(i=1;i<40;i++) printf "b%d: \"%%{lookup(\x27b%d\x27)}%%{lookup(\x27b%d\x27)}\"\n", i, i+1, i+1; print "b40: x"}' > data/common.yaml
