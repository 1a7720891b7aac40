echo 'k: v' > data/common.yaml
