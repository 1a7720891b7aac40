{ printf 'k: '; head -c 1000000 /dev/zero | tr '\0' a; printf '\n'; } > data/common.yaml
