mkdir nodes
for i in 1 2 3; do printf 'hostname: n%s\ndomain: example.com\nfqdn: n%s.example.com\nclientcert: n%s.example.com\n' $i $i $i > nodes/n$i.yaml; done
echo 'k: v' > data/common.yaml
