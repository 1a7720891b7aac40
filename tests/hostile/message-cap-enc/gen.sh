{ printf 'k: ENC[PKCS7,'; head -c 3000000 /dev/zero | tr '\0' A; printf ']\n'; } > data/secrets.eyaml
