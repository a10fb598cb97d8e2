module github.com/nvgo/nvgo

go 1.23.0

require (
	github.com/NVIDIA/go-nvml v0.13.3-1 // indirect
	github.com/jellydator/ttlcache/v3 v3.4.1 // indirect
	github.com/shirou/gopsutil/v3 v3.24.5 // indirect
	golang.org/x/sync v0.16.0 // indirect
)
