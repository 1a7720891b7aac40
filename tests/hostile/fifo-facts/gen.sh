mkfifo fifo.yaml
