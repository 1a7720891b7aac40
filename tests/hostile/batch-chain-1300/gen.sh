awk 'BEGIN{n=1300; for(i=0;i<n;i++) printf "k%d: \"%%{lookup(\x27k%d\x27)}\"\n", i, i+1; print "k" n ": end"}' > data/common.yaml
mkdir nodes
for i in 1 2 3; do printf 'hostname: n%s\ndomain: example.com\nfqdn: n%s.example.com\nclientcert: n%s.example.com\n' $i $i $i > nodes/n$i.yaml; done
