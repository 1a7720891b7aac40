printf 'k: "\\e]0;pwned\\a\\nx"\n' > data/common.yaml
