printf 'k\033]0;pwned\007\nx' > key.txt
printf '"k\\e]0;pwned\\a\\nx": v\n' > data/common.yaml
