module mm2gov/bench/loadgen

go 1.22
