awk 'BEGIN{s="a"; for(i=0;i<5000;i++) s=s ".b"; print s " = 1"; print "k = 2"}' > data/common.conf
mkdir nodes
for i in 1 2 3; do printf 'hostname: n%s\ndomain: example.com\nfqdn: n%s.example.com\nclientcert: n%s.example.com\n' $i $i $i > nodes/n$i.yaml; done
