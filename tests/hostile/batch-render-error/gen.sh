mkdir nodes
for i in 1 2; do printf 'hostname: n%s\ndomain: example.com\nfqdn: n%s.example.com\nclientcert: n%s.example.com\n' $i $i $i > nodes/n$i.yaml; done
awk 'BEGIN{s="k: "; for(i=0;i<101;i++) s=s "["; for(i=0;i<101;i++) s=s "]"; print s}' > data/common.yaml
