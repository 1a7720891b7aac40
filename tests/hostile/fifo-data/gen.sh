rm -f data/common.yaml; mkfifo data/common.yaml
