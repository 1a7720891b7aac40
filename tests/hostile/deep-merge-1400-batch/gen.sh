awk 'BEGIN{n=1400; s="k: "; for(i=0;i<n;i++) s=s "{a: "; s=s "1"; for(i=0;i<n;i++) s=s ", x: 1}"; print s}' > data/a.yaml
awk 'BEGIN{n=1400; s="k: "; for(i=0;i<n;i++) s=s "{a: "; s=s "2"; for(i=0;i<n;i++) s=s ", y: 1}"; print s}' > data/b.yaml
mkdir nodes
for i in 1 2 3; do printf 'hostname: n%s\ndomain: example.com\nfqdn: n%s.example.com\nclientcert: n%s.example.com\n' $i $i $i > nodes/n$i.yaml; done
