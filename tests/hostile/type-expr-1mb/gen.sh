{ printf 'Integer['; head -c 1000000 /dev/zero | tr '\0' a; printf ']\n'; } > type.txt
echo 'k: v' > data/common.yaml
