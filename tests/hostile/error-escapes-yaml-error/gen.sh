printf 'k: "\302\233""31m\n  bad: [\n' > data/common.yaml
